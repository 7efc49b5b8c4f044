import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { planEdits, WorkspaceFiles } from '../../../src/engine/fix/apply';
import { NO_TEST_SUITE } from '../../../src/engine/fix/model';
import {
  detectTestFramework,
  parseCounts,
  runProjectTests,
} from '../../../src/engine/fix/project-tests';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { Scratch } from '../../helpers/workspace';

const CART_FIX = {
  file: 'src/cart.js',
  original: '  for (let i = 1; i < items.length; i++) {',
  replacement: '  for (let i = 0; i < items.length; i++) {',
  explanation: 'The loop skipped the first item.',
  confidence: 0.9,
  otherFilesAffected: [],
};

describe("the project's tests", () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('detects the framework from the project configuration', async () => {
    const cases: [Record<string, string>, string | null, string][] = [
      [{ 'package.json': '{"scripts":{"test":"jest --ci"}}' }, 'jest', 'npm test --silent'],
      [{ 'package.json': '{"scripts":{"test":"vitest run"}}' }, 'vitest', 'npm test --silent'],
      [{ 'package.json': '{"scripts":{"test":"mocha"}}' }, 'mocha', 'npm test --silent'],
      [{ 'package.json': '{"scripts":{"test":"node --test"}}' }, 'node', 'npm test --silent'],
      [{ 'package.json': '{"scripts":{"test":"make check"}}' }, 'npm', 'npm test --silent'],
      [{ 'pytest.ini': '[pytest]\n' }, 'pytest', 'python3 -m pytest -q'],
      [{ 'pyproject.toml': '[tool.pytest.ini_options]\n' }, 'pytest', 'python3 -m pytest -q'],
      [{ 'setup.cfg': '[tool:pytest]\n' }, 'pytest', 'python3 -m pytest -q'],
      [{ 'tests/test_a.py': 'import unittest\n' }, 'unittest', 'python3 -m unittest discover -v'],
      [{ 'test_a.py': 'def test_a():\n    assert 1\n' }, 'pytest', 'python3 -m pytest -q'],
      [{ 'go.mod': 'module x\n' }, 'go', 'go test -v ./...'],
      [{ 'Cargo.toml': '[package]\n' }, 'cargo', 'cargo test'],
    ];
    for (const [files, framework, command] of cases) {
      const detected = await detectTestFramework(scratch.tree(files));
      assert.equal(detected?.framework, framework, JSON.stringify(files));
      assert.equal(detected?.argv.join(' '), command);
    }
  });

  it('says no test suite was found, and logs what it looked for', async () => {
    const root = scratch.tree({
      'package.json': '{"scripts":{"test":"echo \\"Error: no test specified\\" && exit 1"}}',
      'main.py': 'print(1)\n',
    });
    const { result, events } = await captureLogs(() => runProjectTests({ root, edits: [] }));
    assert.equal(result.passed, false);
    assert.equal(result.framework, 'unknown');
    assert.equal(result.outputSummary, NO_TEST_SUITE);
    const unknown = eventsNamed(events, 'test_framework_unknown');
    assert.equal(unknown.length, 1);
    assert.ok((unknown[0]!.files_checked as string[]).includes('pytest.ini'));
  });

  it('reads passed, failed and total from each framework', () => {
    const cases: [string, number | null, number, string[]][] = [
      [
        'FAILED tests/test_p.py::test_quarter - assert 20 == 60\n1 failed, 3 passed in 0.12s\n',
        4,
        1,
        ['tests/test_p.py::test_quarter'],
      ],
      ['==== 5 passed, 1 warning in 0.30s ====\n', 5, 0, []],
      ['FAIL: test_x (t.T)\nRan 3 tests in 0.001s\n\nFAILED (failures=1)\n', 3, 1, ['test_x']],
      ['not ok 2 - adds\n1..3\n# tests 3\n# pass 2\n# fail 1\n', 3, 1, ['adds']],
      ['Tests:       1 failed, 4 passed, 5 total\n', 5, 1, []],
      [' Tests  2 failed | 6 passed (8)\n', 8, 2, []],
      ['  7 passing (20ms)\n  1 failing\n\n  1) cart\n', 8, 1, ['cart']],
      ['--- PASS: TestA (0.00s)\n--- FAIL: TestB (0.00s)\nFAIL\n', 2, 1, ['TestB']],
      [
        'test a::b ... FAILED\ntest result: FAILED. 3 passed; 1 failed; 0 ignored\n',
        4,
        1,
        ['a::b'],
      ],
      ['all good\n', null, 0, []],
    ];
    for (const [output, total, failed, names] of cases) {
      const counts = parseCounts(output);
      assert.equal(counts.total, total, output);
      assert.equal(counts.failedCount, failed, output);
      assert.deepEqual(counts.failed, names, output);
    }
  });

  it('runs the tests on a patched copy: the bug fails them, the fix passes, the workspace is untouched', async () => {
    const root = scratch.fixture('fix-js');
    const original = readFileSync(path.join(root, 'src/cart.js'), 'utf8');
    const copiesBefore = readdirSync(tmpdir()).filter((name) =>
      name.startsWith('code-oracle-tests-'),
    );

    const { result: failing, events } = await captureLogs(() =>
      runProjectTests({ root, edits: [] }),
    );
    assert.equal(failing.passed, false);
    assert.equal(failing.framework, 'node');
    assert.equal(failing.totalTests, 3);
    assert.equal(failing.failedCount, 1);
    assert.deepEqual(failing.failedTests, ['cartTotal counts every item']);
    assert.equal(eventsNamed(events, 'test_run_started')[0]!.timeout_seconds, 120);
    const completed = eventsNamed(events, 'test_run_completed')[0]!;
    assert.equal(completed.passed, false);
    assert.equal(completed.failed_tests, 1);

    const planned = await planEdits([CART_FIX], new WorkspaceFiles(root));
    assert.ok(planned.ok);
    const passing = await runProjectTests({ root, edits: planned.value });
    assert.equal(passing.passed, true, passing.outputSummary);
    assert.equal(passing.totalTests, 3);
    assert.equal(passing.failedCount, 0);

    assert.equal(readFileSync(path.join(root, 'src/cart.js'), 'utf8'), original);
    const copiesAfter = readdirSync(tmpdir()).filter((name) =>
      name.startsWith('code-oracle-tests-'),
    );
    assert.deepEqual(copiesAfter.sort(), copiesBefore.sort());
  });

  it('stops tests that run past the timeout, with every process they started', async () => {
    const root = scratch.tree({
      'package.json': '{"scripts":{"test":"node --test"}}',
      'test/slow.test.js':
        "require('node:test')('slow', () => new Promise(() => setInterval(() => {}, 1000)));\n",
    });
    const started = Date.now();
    const result = await runProjectTests({ root, edits: [], timeoutMs: 1500 });
    assert.equal(result.timedOut, true);
    assert.equal(result.passed, false);
    assert.ok(Date.now() - started < 20_000);
  });
});
