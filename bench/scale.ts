/**
 * The scale rows of `npm run bench`: each row indexes real trees of about 1k, 10k or 100k files.
 * The parent process reads the files, times the bare parse (one thread), draws the questions and
 * runs the baselines (FTS5, ripgrep); the engine runs in child processes so their peak RSS is
 * the engine's alone: one cold-indexes, another opens the store as a user's next session would
 * and times search, a save, a 5,000-file change. While the cold index runs, the parent (an
 * ordinary process like the editor) records its own event-loop lag.
 */
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import * as path from 'node:path';
import type { Engine } from '../src/engine/engine';
import { countLines } from '../src/engine/index/extract';
import { loadGrammar } from '../src/engine/lang/grammars';
import { languageById } from '../src/engine/lang/registry';
import { logHub } from '../src/engine/log/logger';
import { MemorySink } from '../src/engine/log/sinks';
import { unwrap } from '../src/engine/util/result';
import { lowerProcessPriority } from '../src/engine/util/thread-priority';
import {
  openAndAskFirst,
  openEngine,
  round,
  runChild,
  serveChild,
  timeSearch,
  waitForIdleSaves,
  waitForWarmUp,
  waitForTokenCounts,
} from './child';
import { available, fts5Times, percentile, ripgrepTimes, summarise } from './scale-baselines';
import { readCorpora, readWorkspaceFiles, rowRoot, type RowSpec } from './scale-corpus';
import { sampleQueries, type BenchQuery } from './scale-queries';

export interface ScaleRow {
  readonly row: string;
  readonly note: string;
  readonly files: number;
  readonly lines: number;
  readonly chunks: number;
  readonly parseSeconds: number;
  readonly coldIndexSeconds: number;
  readonly coldOverParse: number;
  readonly coldStageSeconds: Record<string, number>;
  /** Peak RSS of the process indexing cold (the engine with its parse workers). */
  readonly peakRssMb: number;
  /** RSS of a process that opened the index and answered every question. */
  readonly searchRssMb: number;
  readonly storeMb: number;
  readonly openSeconds: number;
  readonly firstQueryMs: number;
  /** The first question of the index opened again, asked once its warm-up after opening is done. */
  readonly firstQueryAfterWarmUpMs: number;
  /**
   * The background token count after the first opening (every chunk counted, then saved), and
   * after the opening again (the saved counts taken back).
   */
  readonly tokenCountSeconds: number;
  readonly tokenCountReopenedSeconds: number;
  readonly queries: number;
  readonly searchP50Ms: number;
  readonly searchP95Ms: number;
  readonly fts5P50Ms: number | null;
  readonly fts5P95Ms: number | null;
  readonly rgP50Ms: number | null;
  readonly rgP95Ms: number | null;
  readonly saveToSearchableMs: number;
  /**
   * The first save of the session alone (the median above hides what it alone loads), made after
   * the questions and a pause of EDIT_PAUSE_MS.
   */
  readonly firstSaveMs: number;
  readonly savedFile: string;
  readonly changeFiles: number;
  readonly changeSeconds: number;
  /** The editor-side process's event-loop lag while the first index ran. */
  readonly editorLagP99Ms: number;
  readonly editorLagMaxMs: number;
}

interface ColdReport {
  readonly coldIndexSeconds: number;
  /** Where the cold index spent its time, by stage of the indexer. */
  readonly stageSeconds: Record<string, number>;
  readonly chunks: number;
  readonly files: number;
  readonly peakRssMb: number;
  /** CPU seconds of the whole process during the cold index, every thread's, ended ones too. */
  readonly processCpuSeconds: number;
  /** CPU seconds of the engine's own thread during the cold index. */
  readonly engineCpuSeconds: number;
  /**
   * CPU seconds of the process's other threads during the cold index, busiest first, each with
   * its thread's name: the parse worker leads, V8's own threads (named `node`: concurrent
   * collection, compilation) and LanceDB's follow. On a loaded machine these change far less than
   * wall times do.
   */
  readonly otherThreadsCpuSeconds: readonly ThreadCpu[];
  /** Files whose terms and vectors the parse worker made, not the engine thread. */
  readonly filesFinishedByWorkers: number;
}

/** One thread's CPU seconds over a span of time. */
export interface ThreadCpu {
  readonly thread: string;
  readonly seconds: number;
}

/** What `--cold-only` reports: the cold index of a row against its bare parse, nothing else. */
export interface ColdOnlyRow extends ColdReport {
  readonly row: string;
  /** Per LanceDB table, the versions and data files the cold index left after its maintenance. */
  readonly tableFiles: Record<string, { versions: number; dataFiles: number }>;
  readonly parseSeconds: number;
  readonly parseCpuSeconds: number;
  readonly coldOverParse: number;
}

interface WarmReport {
  readonly openSeconds: number;
  readonly firstQueryMs: number;
  readonly firstQueryAfterWarmUpMs: number;
  readonly tokenCountSeconds: number;
  readonly tokenCountReopenedSeconds: number;
  readonly searchTimes: number[];
  readonly rssMb: number;
  readonly saveToSearchableMs: number;
  readonly firstSaveMs: number;
  readonly changeSeconds: number;
}

interface ChildRequest {
  readonly phase: 'cold' | 'warm';
  readonly root: string;
  readonly storeDir: string;
  readonly model: string;
  readonly queries: readonly BenchQuery[];
  readonly savedFile: string;
  readonly changed: readonly string[];
}

const QUESTIONS_PER_KIND = 40;
const CHANGE_FILES = 5000;
const SAVES = 5;
/** The pause before the first save, as a user's editing gives one. */
const EDIT_PAUSE_MS = 3000;

export function scaleRows(): readonly RowSpec[] {
  return readCorpora().rows;
}

export async function benchScaleRow(
  row: RowSpec,
  model: string,
  cache: string,
  profileCold = false,
): Promise<ScaleRow> {
  const root = rowRoot(row);
  const files = await readWorkspaceFiles(root);
  const lines = files.reduce((sum, file) => sum + countLines(file.source), 0);
  const parseSeconds = await bareParseSeconds(files);
  const queries = sampleQueries(files, QUESTIONS_PER_KIND);
  const saved = files.reduce((best, file) =>
    Math.abs(countLines(file.source) - 1000) < Math.abs(countLines(best.source) - 1000)
      ? file
      : best,
  );
  // every other file, up to 5,000: a branch switch touching that many
  const step = Math.max(1, Math.floor(files.length / CHANGE_FILES));
  const changed = files
    .filter((_, i) => i % step === 0)
    .slice(0, Math.min(CHANGE_FILES, Math.floor(files.length / 2)))
    .map((file) => file.path);
  const storeDir = path.join(cache, 'bench-stores', row.id);
  rmSync(storeDir, { recursive: true, force: true });
  const request = { root, storeDir, model, queries, savedFile: saved.path, changed };
  process.stderr.write(
    `bench: ${row.id}: ${files.length} files, ${lines} lines, parse ${parseSeconds.toFixed(1)} s; indexing cold\n`,
  );

  const lag = monitorEventLoopDelay({ resolution: 10 });
  let cold: ColdReport;
  let warm: WarmReport;
  try {
    lag.enable();
    cold = await runChild<ColdReport>(
      SCALE_CHILD,
      { phase: 'cold', ...request },
      profileCold ? cpuProfileArgs(cache) : [],
    );
    lag.disable();
    process.stderr.write(`bench: ${row.id}: cold ${cold.coldIndexSeconds} s; searching\n`);
    warm = await runChild<WarmReport>(SCALE_CHILD, { phase: 'warm', ...request });
  } finally {
    // the edits are undone whatever happened in the child
    const edited = new Set([saved.path, ...changed]);
    for (const file of files)
      if (edited.has(file.path)) writeFileSync(path.join(root, file.path), file.source);
  }

  const search = summarise(warm.searchTimes);
  const haveSqlite = available('sqlite3');
  const haveRipgrep = available('rg');
  if (!haveSqlite || !haveRipgrep)
    process.stderr.write(
      'bench: sqlite3 or rg is missing (apt-get install -y sqlite3 ripgrep): its column is null\n',
    );
  const fts5 = haveSqlite
    ? fts5Times(files, queries, path.join(cache, 'bench-fts5', row.id))
    : null;
  const rg = haveRipgrep ? ripgrepTimes(root, queries) : null;
  rmSync(path.join(cache, 'bench-fts5', row.id), { recursive: true, force: true });

  return {
    row: row.id,
    note: row.note,
    files: cold.files,
    lines,
    chunks: cold.chunks,
    parseSeconds: round(parseSeconds, 2),
    coldIndexSeconds: cold.coldIndexSeconds,
    coldOverParse: round(cold.coldIndexSeconds / parseSeconds, 2),
    coldStageSeconds: cold.stageSeconds,
    peakRssMb: cold.peakRssMb,
    searchRssMb: warm.rssMb,
    storeMb: round(folderBytes(storeDir) / 2 ** 20, 1),
    openSeconds: warm.openSeconds,
    firstQueryMs: warm.firstQueryMs,
    firstQueryAfterWarmUpMs: warm.firstQueryAfterWarmUpMs,
    tokenCountSeconds: warm.tokenCountSeconds,
    tokenCountReopenedSeconds: warm.tokenCountReopenedSeconds,
    queries: warm.searchTimes.length,
    searchP50Ms: search.p50Ms,
    searchP95Ms: search.p95Ms,
    fts5P50Ms: fts5?.p50Ms ?? null,
    fts5P95Ms: fts5?.p95Ms ?? null,
    rgP50Ms: rg?.p50Ms ?? null,
    rgP95Ms: rg?.p95Ms ?? null,
    saveToSearchableMs: warm.saveToSearchableMs,
    firstSaveMs: warm.firstSaveMs,
    savedFile: `${saved.path} (${countLines(saved.source)} lines)`,
    changeFiles: changed.length,
    changeSeconds: warm.changeSeconds,
    editorLagP99Ms: round(lag.percentile(99) / 1e6, 1),
    editorLagMaxMs: round(lag.max / 1e6, 1),
  };
}

/**
 * A row's cold index alone (`node dist/bench.js --cold-only scale-1k`): for comparing builds of
 * the indexer run after run, without the searches, saves and baselines of a whole row.
 */
export async function benchColdOnly(
  row: RowSpec,
  model: string,
  cache: string,
  profileCold = false,
): Promise<ColdOnlyRow> {
  const root = rowRoot(row);
  const files = await readWorkspaceFiles(root);
  const before = process.cpuUsage();
  const parseSeconds = await bareParseSeconds(files);
  const parseCpu = process.cpuUsage(before);
  const storeDir = path.join(cache, 'bench-stores', `${row.id}-cold`);
  rmSync(storeDir, { recursive: true, force: true });
  const request = { root, storeDir, model, queries: [], savedFile: '', changed: [] };
  const cold = await runChild<ColdReport>(
    SCALE_CHILD,
    { phase: 'cold', ...request },
    profileCold ? cpuProfileArgs(cache) : [],
  );
  const tableFiles = lanceTableFiles(storeDir);
  rmSync(storeDir, { recursive: true, force: true });
  return {
    row: row.id,
    tableFiles,
    parseSeconds: round(parseSeconds, 2),
    parseCpuSeconds: round((parseCpu.user + parseCpu.system) / 1e6, 2),
    coldOverParse: round(cold.coldIndexSeconds / parseSeconds, 2),
    ...cold,
  };
}

function lanceTableFiles(
  storeDir: string,
): Record<string, { versions: number; dataFiles: number }> {
  const lance = path.join(storeDir, 'lance');
  if (!existsSync(lance)) return {};
  const count = (folder: string) => (existsSync(folder) ? readdirSync(folder).length : 0);
  return Object.fromEntries(
    readdirSync(lance).map((table) => [
      table.replace(/\.lance$/, ''),
      {
        versions: count(path.join(lance, table, '_versions')),
        dataFiles: count(path.join(lance, table, 'data')),
      },
    ]),
  );
}

/** Node's flags that write the child's CPU profiles (one per thread) under the cache. */
function cpuProfileArgs(cache: string): string[] {
  const profiles = path.join(cache, 'bench-profiles');
  mkdirSync(profiles, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${profiles}`];
}

/** The floor: parsing every file once, on one thread, with the grammars already loaded. */
async function bareParseSeconds(
  files: readonly { language: string; source: string }[],
): Promise<number> {
  const grammars = new Map<string, Awaited<ReturnType<typeof loadGrammar>>>();
  for (const file of files)
    if (!grammars.has(file.language))
      grammars.set(
        file.language,
        await loadGrammar(languageById(file.language as Parameters<typeof languageById>[0])),
      );
  const started = performance.now();
  for (const file of files) grammars.get(file.language)!.parser.parse(file.source)!.delete();
  return (performance.now() - started) / 1000;
}

/** The flag that makes the bench script a scale row's child. */
export const SCALE_CHILD = '--scale-child';

/** The child's side: one phase, reported to the parent over IPC. */
export function serveScaleChild(): void {
  serveChild((request: ChildRequest) =>
    request.phase === 'cold' ? coldPhase(request) : warmPhase(request),
  );
}

async function coldPhase(request: ChildRequest): Promise<ColdReport> {
  // the extension runs the engine's process below the editor's priority (host/engine-worker.ts),
  // and the editor-side lag measured meanwhile is only that of the product when the engine here
  // does too
  const priorityKept = lowerProcessPriority();
  if (priorityKept) process.stderr.write(`bench: the engine keeps its priority: ${priorityKept}\n`);
  const engine = await openEngine(request);
  try {
    await engine.warmUp();
    const stages = new MemorySink('info');
    const listening = logHub.addSink(stages);
    const threadsBefore = threadCpuSeconds();
    // the parse workers stop once the files are parsed: their last reading before they go counts
    const threadsAfter = new Map(threadsBefore);
    const watching = setInterval(() => readThreadsInto(threadsAfter), THREAD_WATCH_MS);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    const summary = unwrap(await engine.index());
    const coldIndexSeconds = round((performance.now() - started) / 1000, 2);
    clearInterval(watching);
    readThreadsInto(threadsAfter);
    const cpu = process.cpuUsage(cpuBefore);
    listening.dispose();
    const spent = (tid: string) =>
      (threadsAfter.get(tid)?.seconds ?? 0) - (threadsBefore.get(tid)?.seconds ?? 0);
    const engineTid = String(process.pid);
    const report: ColdReport = {
      processCpuSeconds: round((cpu.user + cpu.system) / 1e6, 2),
      engineCpuSeconds: round(spent(engineTid), 2),
      otherThreadsCpuSeconds: [...threadsAfter]
        .filter(([tid]) => tid !== engineTid)
        .map(([tid, { thread }]) => ({ thread, seconds: round(spent(tid), 2) }))
        .filter(({ seconds }) => seconds >= 0.05)
        .sort((a, b) => b.seconds - a.seconds),
      coldIndexSeconds,
      stageSeconds: Object.fromEntries(
        stages
          .named('index_stage_completed')
          .map((event) => [event.stage, round((event.duration_ms as number) / 1000, 2)]),
      ),
      filesFinishedByWorkers: Number(
        stages.named('indexing_completed')[0]?.files_finished_by_workers ?? 0,
      ),
      files: summary.files,
      chunks: Object.values(summary.chunks).reduce((a, b) => a + b, 0),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
    // a user's engine saves the resolved calls and the token counts once it idles after the
    // first index: the openings below take them
    await waitForIdleSaves(engine);
    return report;
  } finally {
    engine.dispose();
  }
}

/** CPU seconds (user + system) of each thread of this process, by thread id; empty off Linux. */
function threadCpuSeconds(): Map<string, ThreadCpu> {
  const readings = new Map<string, ThreadCpu>();
  const tasks = '/proc/self/task';
  if (!existsSync(tasks)) return readings;
  for (const tid of readdirSync(tasks)) {
    try {
      const stat = readFileSync(path.join(tasks, tid, 'stat'), 'utf8');
      // the fields after the command's closing parenthesis: utime and stime are the 12th and 13th
      const close = stat.lastIndexOf(')');
      const fields = stat.slice(close + 2).split(' ');
      readings.set(tid, {
        thread: stat.slice(stat.indexOf('(') + 1, close),
        seconds: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND,
      });
    } catch {
      // the thread ended between the listing and the read: it has nothing left to count
    }
  }
  return readings;
}

/** Adds the threads' readings now to `readings`: a thread that has ended keeps its last one. */
function readThreadsInto(readings: Map<string, ThreadCpu>): void {
  for (const [tid, reading] of threadCpuSeconds()) readings.set(tid, reading);
}

/** How often the threads are read during a cold index; a thread ending loses at most this much. */
const THREAD_WATCH_MS = 250;

/** Linux's USER_HZ, fixed at 100 on every architecture Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

async function warmPhase(request: ChildRequest): Promise<WarmReport> {
  // the rest of the questions are each asked once, so no question is answered from what an
  // earlier asking of it left in a cache
  const [first, ...rest] = request.queries;
  const { engine, openSeconds, firstQueryMs } = await openAndAskFirst(request, first!.text);
  let report: Omit<WarmReport, 'firstQueryAfterWarmUpMs' | 'tokenCountReopenedSeconds'>;
  try {
    const tokenCountSeconds = await waitForTokenCounts(engine);
    await waitForWarmUp(engine);
    const searchTimes: number[] = [];
    for (const query of rest) searchTimes.push(await timeSearch(engine, query.text));
    const rssMb = Math.round(process.memoryUsage().rss / 2 ** 20);
    // a user edits for a while between asking and saving: the engine has that time to itself
    await new Promise((resolve) => setTimeout(resolve, EDIT_PAUSE_MS));
    const saves = await saveToSearchable(engine, request);
    const changeSeconds = await bigChange(engine, request);
    // a user's engine counts the change's texts while it idles, and saves the counts and the
    // resolved calls: the opening again below then measures taking them back, not redoing what
    // this process never did
    await waitForTokenCounts(engine);
    await waitForIdleSaves(engine);
    report = {
      openSeconds,
      firstQueryMs,
      tokenCountSeconds,
      searchTimes,
      rssMb,
      saveToSearchableMs: round(percentile(saves, 0.5), 1),
      firstSaveMs: round(saves[0]!, 1),
      changeSeconds,
    };
  } finally {
    engine.dispose();
  }
  return { ...report, ...(await reopened(request, first!.text)) };
}

/**
 * The index opened again: its first question, asked once the engine's warm-up after opening is
 * done (what a user waits for who opens the folder and asks a little later, where `firstQueryMs`
 * asks the moment the index is open), after the background token count, timed from the opening.
 */
async function reopened(
  request: ChildRequest,
  question: string,
): Promise<Pick<WarmReport, 'firstQueryAfterWarmUpMs' | 'tokenCountReopenedSeconds'>> {
  const engine = await openEngine(request);
  try {
    const tokenCountReopenedSeconds = await waitForTokenCounts(engine);
    await waitForWarmUp(engine);
    return {
      firstQueryAfterWarmUpMs: round(await timeSearch(engine, question), 1),
      tokenCountReopenedSeconds,
    };
  } finally {
    engine.dispose();
  }
}

/**
 * A save of the ~1,000-line file with a new function at its end (a name no file holds), until a
 * search for that name finds the file: the times of a few saves, the session's first one first.
 * A search that does not find it fails the bench.
 */
async function saveToSearchable(engine: Engine, request: ChildRequest): Promise<number[]> {
  const file = path.join(request.root, request.savedFile);
  const original = readFileSync(file, 'utf8');
  const times: number[] = [];
  for (let i = 0; i < SAVES; i++) {
    const name = `benchsaved${i}marker`;
    writeFileSync(file, `${original}\n${newFunction(path.extname(file), name)}\n`);
    const started = performance.now();
    unwrap(await engine.updateFiles([request.savedFile]));
    const found = unwrap(await engine.search({ query: name }));
    times.push(performance.now() - started);
    if (!found.spans.some((span) => span.path === request.savedFile))
      throw new Error(`a search for ${name} did not find ${request.savedFile} after its save`);
  }
  return times;
}

/** A small function named `name`, written in the language of files ending in `extension`. */
export function newFunction(extension: string, name: string): string {
  switch (extension) {
    case '.py':
      return `\ndef ${name}():\n    return 0`;
    case '.go':
      return `func ${name}() {}`;
    case '.rb':
      return `def ${name}\nend`;
    case '.rs':
      return `fn ${name}() {}`;
    default:
      return `function ${name}() {}`;
  }
}

/** Many files changed at once (a branch switch): each gets a line, then one update takes them all. */
async function bigChange(engine: Engine, request: ChildRequest): Promise<number> {
  for (const file of request.changed) {
    const comment = /\.(py|rb|sh)$/.test(file) ? '#' : '//';
    appendFileSync(path.join(request.root, file), `\n${comment} bench branch switch\n`);
  }
  const started = performance.now();
  unwrap(await engine.updateFiles(request.changed));
  return round((performance.now() - started) / 1000, 2);
}

function folderBytes(folder: string): number {
  let total = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : statSync(full).size;
  }
  return total;
}
