import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { elapsedMs, getLogger } from '../log/logger';
import { describeError } from '../util/result';
import { NO_TEST_SUITE, type FileEdit, type TestFramework, type TestResult } from './model';

/**
 * The project's own tests, run on a copy of the workspace with the patch applied, never on the
 * user's files: the framework is found from the project's configuration, the run has a timeout,
 * and passed / failed / total are read from the framework's summary lines.
 */

const log = getLogger('fix.tests');

export const DEFAULT_TEST_TIMEOUT_MS = 120_000;
const OUTPUT_SUMMARY_CHARACTERS = 500;
/** Output kept for parsing; a runaway test cannot fill memory. */
const MAX_OUTPUT_CHARACTERS = 2_000_000;
/** Dependency folders the copy links to instead of copying: tests read them, never change them. */
const LINKED_FOLDERS = new Set(['node_modules', '.venv', 'venv']);
/** Never copied: the repository's history and build output a test run rebuilds. */
const SKIPPED_FOLDERS = new Set(['.git', 'target', '.pytest_cache', '__pycache__']);

export interface TestCommand {
  readonly framework: TestFramework;
  readonly argv: readonly string[];
}

/** The configuration files looked at, in order, for the log when none names a test suite. */
const CHECKED_FILES = [
  'package.json',
  'jest.config.*',
  'vitest.config.*',
  '.mocharc.*',
  'pytest.ini',
  'pyproject.toml',
  'setup.cfg',
  'tox.ini',
  'conftest.py',
  'test*.py',
  'go.mod',
  'Cargo.toml',
];

const NPM_NO_TEST = /no test specified/;

export async function detectTestFramework(root: string): Promise<TestCommand | null> {
  const names = new Set(await fs.readdir(root).catch(() => [] as string[]));
  const has = (prefix: string) => [...names].some((name) => name.startsWith(prefix));
  const read = (name: string) =>
    names.has(name)
      ? fs.readFile(path.join(root, name), 'utf8').catch(() => '')
      : Promise.resolve('');

  const packageJson = await read('package.json');
  if (packageJson) {
    const detected = javascriptCommand(packageJson, has);
    if (detected) return detected;
  }
  const pytestConfigured =
    names.has('pytest.ini') ||
    names.has('conftest.py') ||
    /\[tool\.pytest\.ini_options\]/.test(await read('pyproject.toml')) ||
    /\[tool:pytest\]/.test(await read('setup.cfg')) ||
    /\[pytest\]/.test(await read('tox.ini'));
  if (pytestConfigured) return { framework: 'pytest', argv: ['python3', '-m', 'pytest', '-q'] };
  const pythonTests = await pythonTestFiles(root, names);
  if (pythonTests.length) {
    const usesUnittestOnly = (
      await Promise.all(pythonTests.map((file) => fs.readFile(file, 'utf8').catch(() => '')))
    ).every(
      (text) => /\bimport unittest\b|\bfrom unittest\b/.test(text) && !/\bpytest\b/.test(text),
    );
    return usesUnittestOnly
      ? { framework: 'unittest', argv: ['python3', '-m', 'unittest', 'discover', '-v'] }
      : { framework: 'pytest', argv: ['python3', '-m', 'pytest', '-q'] };
  }
  if (names.has('go.mod')) return { framework: 'go', argv: ['go', 'test', '-v', './...'] };
  if (names.has('Cargo.toml')) return { framework: 'cargo', argv: ['cargo', 'test'] };
  log.warn('test_framework_unknown', { repo_path: root, files_checked: CHECKED_FILES });
  return null;
}

/** `npm test` when package.json has a real test script, named after what it runs. */
function javascriptCommand(
  packageJson: string,
  has: (prefix: string) => boolean,
): TestCommand | null {
  let manifest: {
    scripts?: Record<string, string>;
    jest?: unknown;
    devDependencies?: Record<string, string>;
  };
  try {
    manifest = JSON.parse(packageJson) as typeof manifest;
  } catch (cause) {
    log.warn('package_json_unreadable', { error: describeError(cause) });
    return null;
  }
  const script = manifest.scripts?.test;
  if (!script || NPM_NO_TEST.test(script)) return null;
  const framework: TestFramework = /\bvitest\b/.test(script)
    ? 'vitest'
    : /\bjest\b/.test(script) || manifest.jest !== undefined || has('jest.config.')
      ? 'jest'
      : /\bmocha\b/.test(script) || has('.mocharc')
        ? 'mocha'
        : /\bnode\b.*--test\b/.test(script)
          ? 'node'
          : has('vitest.config.')
            ? 'vitest'
            : 'npm';
  return { framework, argv: ['npm', 'test', '--silent'] };
}

/** `test_*.py` / `*_test.py` at the top and in a `tests` or `test` folder. */
async function pythonTestFiles(root: string, names: ReadonlySet<string>): Promise<string[]> {
  const isTest = (name: string) => /^test_.*\.py$|_test\.py$|^test\.py$/.test(name);
  const files = [...names].filter(isTest).map((name) => path.join(root, name));
  for (const folder of ['tests', 'test']) {
    if (!names.has(folder)) continue;
    const inside = await fs.readdir(path.join(root, folder)).catch(() => [] as string[]);
    files.push(...inside.filter(isTest).map((name) => path.join(root, folder, name)));
  }
  return files;
}

export interface TestRunRequest {
  readonly root: string;
  readonly edits: readonly FileEdit[];
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

/** Runs the project's tests on a patched copy of the workspace; the copy is removed afterwards. */
export async function runProjectTests(request: TestRunRequest): Promise<TestResult> {
  const command = await detectTestFramework(request.root);
  if (!command) return noSuite();
  const timeoutMs = request.timeoutMs ?? DEFAULT_TEST_TIMEOUT_MS;
  const copy = await fs.mkdtemp(path.join(tmpdir(), 'code-oracle-tests-'));
  try {
    await copyWorkspace(request.root, copy);
    for (const edit of request.edits) await fs.writeFile(path.join(copy, edit.file), edit.after);
    log.info('test_run_started', {
      framework: command.framework,
      command: command.argv.join(' '),
      timeout_seconds: timeoutMs / 1000,
    });
    const started = performance.now();
    const run = await runCommand(command.argv, copy, timeoutMs, request.signal);
    const result = resultOf(command, run, elapsedMs(started));
    log.debug('test_output', { output_summary: result.outputSummary });
    log.info('test_run_completed', {
      framework: result.framework,
      passed: result.passed,
      total_tests: result.totalTests,
      failed_tests: result.failedCount,
      exit_code: result.exitCode,
      duration_ms: result.durationMs,
      timed_out: result.timedOut,
    });
    return result;
  } finally {
    await fs.rm(copy, { recursive: true, force: true });
  }
}

function noSuite(): TestResult {
  return {
    passed: false,
    framework: 'unknown',
    command: '',
    totalTests: null,
    passedTests: null,
    failedTests: [],
    failedCount: 0,
    outputSummary: NO_TEST_SUITE,
    timedOut: false,
    exitCode: null,
    durationMs: 0,
  };
}

/** The workspace without its history; dependency folders are linked, not copied. */
async function copyWorkspace(root: string, copy: string): Promise<void> {
  for (const entry of await fs.readdir(root, { withFileTypes: true })) {
    const from = path.join(root, entry.name);
    const to = path.join(copy, entry.name);
    if (SKIPPED_FOLDERS.has(entry.name)) continue;
    if (entry.isDirectory() && LINKED_FOLDERS.has(entry.name)) await fs.symlink(from, to, 'dir');
    else
      await fs.cp(from, to, {
        recursive: true,
        verbatimSymlinks: true,
        filter: (source) => !SKIPPED_FOLDERS.has(path.basename(source)),
      });
  }
}

interface CommandRun {
  readonly output: string;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly failedToStart: string | null;
}

/** Runs a command in its own process group, so a timeout stops the whole tree it started. */
function runCommand(
  argv: readonly string[],
  cwd: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<CommandRun> {
  return new Promise((resolve) => {
    let output = '';
    let timedOut = false;
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd,
      detached: process.platform !== 'win32',
      env: { ...process.env, CI: '1', FORCE_COLOR: '0', NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const stop = () => {
      try {
        if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch (cause) {
        log.debug('test_process_already_gone', { error: describeError(cause) });
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    signal?.addEventListener('abort', stop, { once: true });
    const collect = (piece: Buffer) => {
      if (output.length < MAX_OUTPUT_CHARACTERS) output += piece.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', (cause) => {
      clearTimeout(timer);
      resolve({ output, exitCode: null, timedOut, failedToStart: describeError(cause) });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      resolve({ output, exitCode: code, timedOut, failedToStart: null });
    });
  });
}

function resultOf(command: TestCommand, run: CommandRun, durationMs: number): TestResult {
  const counts = parseCounts(run.output);
  const summary = run.failedToStart
    ? `${command.argv[0]} could not be started: ${run.failedToStart}`
    : run.timedOut
      ? `The tests did not finish within the time limit. ${run.output}`
      : run.output;
  const passed =
    !run.failedToStart &&
    !run.timedOut &&
    run.exitCode === 0 &&
    counts.failed.length === 0 &&
    counts.failedCount === 0 &&
    counts.total !== 0;
  return {
    passed,
    framework: command.framework,
    command: command.argv.join(' '),
    totalTests: counts.total,
    passedTests: counts.passed,
    failedTests: counts.failed,
    failedCount: Math.max(
      counts.failedCount,
      counts.failed.length,
      passed ? 0 : run.exitCode ? 1 : 0,
    ),
    outputSummary: summary.trim().slice(0, OUTPUT_SUMMARY_CHARACTERS),
    timedOut: run.timedOut,
    exitCode: run.exitCode,
    durationMs,
  };
}

export interface TestCounts {
  readonly total: number | null;
  readonly passed: number | null;
  readonly failedCount: number;
  /** Names of failed tests where the output gives them. */
  readonly failed: string[];
}

const sum = (matches: Iterable<RegExpMatchArray>, group = 1) =>
  [...matches].reduce((total, match) => total + Number(match[group]), 0);

/** Passed, failed and total from a framework's summary lines; null where the output says nothing. */
export function parseCounts(output: string): TestCounts {
  // colour codes, in case a tool ignores NO_COLOR
  // eslint-disable-next-line no-control-regex -- the escape character is what is being removed
  const text = output.replace(/\x1b\[[0-9;]*m/g, '');
  const all = (pattern: RegExp) => [...text.matchAll(pattern)];
  const names = (pattern: RegExp) => [...new Set(all(pattern).map((match) => match[1]!.trim()))];
  const counted = (passed: number | null, failed: number, failedNames: string[]): TestCounts => ({
    total: passed === null ? null : passed + failed,
    passed,
    failedCount: failed,
    failed: failedNames,
  });
  // the summary lines of each framework are distinct enough to be tried in turn
  const pytest = all(
    /^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected)(?:, )?)+) in [\d.]+s/gm,
  ).at(-1)?.[1];
  if (pytest) {
    const count = (word: string) => Number(pytest.match(new RegExp(`(\\d+) ${word}\\b`))?.[1] ?? 0);
    return counted(count('passed'), count('failed') + count('errors?'), names(/^FAILED (\S+)/gm));
  }
  const unittestRan = text.match(/^Ran (\d+) tests? in/m);
  if (unittestRan) {
    const failures =
      Number(text.match(/failures=(\d+)/)?.[1] ?? 0) + Number(text.match(/errors=(\d+)/)?.[1] ?? 0);
    return counted(Number(unittestRan[1]) - failures, failures, names(/^(?:FAIL|ERROR): (\S+)/gm));
  }
  const tapTests = text.match(/^# tests (\d+)/m);
  if (tapTests) {
    const failed = Number(text.match(/^# fail (\d+)/m)?.[1] ?? 0);
    return counted(Number(tapTests[1]) - failed, failed, names(/^\s*not ok \d+ - (.+)$/gm));
  }
  const specTests = text.match(/^ℹ tests (\d+)/m);
  if (specTests) {
    const failed = Number(text.match(/^ℹ fail (\d+)/m)?.[1] ?? 0);
    return counted(
      Number(specTests[1]) - failed,
      failed,
      names(/^\s*✖ (.+?)(?: \([\d.]+ms\))?$/gm),
    );
  }
  const jest = text.match(/^Tests:\s+(.*\d+ total)/m);
  if (jest) {
    const count = (word: string) => Number(jest[1]!.match(new RegExp(`(\\d+) ${word}`))?.[1] ?? 0);
    return counted(count('passed'), count('failed'), names(/^\s*● (.+?)$/gm));
  }
  const vitest = text.match(/^\s*Tests\s+(.*)\((\d+)\)/m);
  if (vitest) {
    const failed = Number(vitest[1]!.match(/(\d+) failed/)?.[1] ?? 0);
    return counted(
      Number(vitest[1]!.match(/(\d+) passed/)?.[1] ?? 0),
      failed,
      names(/^\s*(?:×|FAIL) (.+)$/gm),
    );
  }
  const mochaPassing = text.match(/^\s*(\d+) passing/m);
  if (mochaPassing) {
    const failed = Number(text.match(/^\s*(\d+) failing/m)?.[1] ?? 0);
    return counted(Number(mochaPassing[1]), failed, names(/^\s*\d+\) (.+)$/gm));
  }
  const goRuns = all(/^\s*--- (PASS|FAIL): (\S+)/gm);
  if (goRuns.length) {
    const failed = goRuns.filter((match) => match[1] === 'FAIL').map((match) => match[2]!);
    return counted(goRuns.length - failed.length, failed.length, [...new Set(failed)]);
  }
  const cargo = all(/^test result: \w+\. (\d+) passed; (\d+) failed/gm);
  if (cargo.length)
    return counted(sum(cargo, 1), sum(cargo, 2), names(/^test (\S+) \.\.\. FAILED$/gm));
  return { total: null, passed: null, failedCount: 0, failed: [] };
}
