import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import * as path from 'node:path';
import { defaultPoolSize, ParsePool } from '../../src/engine/index/parse-pool';
import { threadNiceValues } from '../helpers/threads';
import { Scratch } from '../helpers/workspace';

/** The nice value a parse worker lowers its thread to. */
const WORKER_NICE = 10;

/** Resolves once `done()` holds, looking every 20 ms; fails after 10 s. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    if (waited > 10_000) throw new Error('gave up waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('parse pool', function () {
  this.timeout(60_000);
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('leaves a core to the editor', () => {
    assert.equal(defaultPoolSize(1), 1);
    assert.equal(defaultPoolSize(2), 1);
    assert.equal(defaultPoolSize(4), 3);
    assert.equal(defaultPoolSize(32), 4);
  });

  it('parses many files through one worker holding several at once', async () => {
    const files = Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [
        `m${i}.py`,
        `def f${i}(x):\n    return x + ${i}\n\nclass C${i}:\n    pass\n`,
      ]),
    );
    const root = scratch.tree(files);
    const pool = new ParsePool(1, null);
    try {
      const outcomes = await Promise.all(
        Object.keys(files).map((file) =>
          pool.run({
            root,
            path: file,
            language: 'python',
            maxFileBytes: 1 << 20,
            previousHash: null,
          }),
        ),
      );
      assert.deepEqual(
        outcomes.map((outcome) => outcome.kind),
        outcomes.map(() => 'indexed'),
      );
      for (const [i, outcome] of outcomes.entries()) {
        assert.equal(outcome.path, `m${i}.py`);
        assert.ok(
          outcome.kind === 'indexed' &&
            outcome.chunks.some((chunk) => chunk.functionName === `f${i}`),
        );
      }
    } finally {
      pool.dispose();
    }
  });

  it('stops its workers when released, and starts them again for the next task (Linux)', async function () {
    if (process.platform !== 'linux') this.skip();
    const root = scratch.tree({ 'a.py': 'def f(x):\n    return g(x)\n' });
    const task = {
      root,
      path: 'a.py',
      language: 'python' as const,
      maxFileBytes: 1 << 20,
      previousHash: null,
    };
    // a worker thread runs at nice 10, the process's other threads at its own priority
    const workerThreads = () => threadNiceValues().filter((nice) => nice === WORKER_NICE).length;
    // the workers of the pools above stop in their own time
    await until(() => workerThreads() === 0);
    const pool = new ParsePool(1, null);
    try {
      assert.equal((await pool.run(task)).kind, 'indexed');
      assert.equal(workerThreads(), 1);
      // a task in flight keeps its worker
      const pending = pool.run(task);
      await pool.release();
      assert.equal((await pending).kind, 'indexed');
      assert.equal(workerThreads(), 1);
      await pool.release();
      assert.equal(workerThreads(), 0);
      assert.equal((await pool.run(task)).kind, 'indexed');
      assert.equal(workerThreads(), 1);
    } finally {
      pool.dispose();
    }
  });

  it('runs its worker threads below the priority of the editor (Linux)', async function () {
    if (process.platform !== 'linux') this.skip();
    const editor = getPriority();
    const pool = new ParsePool(1, null);
    try {
      await pool.whenReady();
      const after = threadNiceValues();
      assert.ok(after.includes(WORKER_NICE), `a thread at nice 10 among ${after.join(',')}`);
      // the thread that asked keeps its priority
      assert.equal(getPriority(), editor);
    } finally {
      pool.dispose();
    }
  });

  it('profiles its worker too when the process runs with --cpu-prof', () => {
    const root = scratch.tree({ 'a.py': 'def f(x):\n    return g(x)\n' });
    const profiles = scratch.folder('oracle-profiles-');
    const pool = path.resolve(__dirname, '../../src/engine/index/parse-pool.ts');
    const script = `const { ParsePool } = require(${JSON.stringify(pool)});
      const pool = new ParsePool(1, null);
      pool.run({ root: ${JSON.stringify(root)}, path: 'a.py', language: 'python',
        maxFileBytes: 1 << 20, previousHash: null }).then((outcome) => {
        if (outcome.kind !== 'indexed') throw new Error(outcome.kind);
        pool.dispose();
      });`;
    execFileSync(
      process.execPath,
      ['--require', 'tsx/cjs', '--cpu-prof', `--cpu-prof-dir=${profiles}`, '-e', script],
      { stdio: 'pipe' },
    );
    // one profile for the main thread, one for the worker
    assert.equal(readdirSync(profiles).filter((name) => name.endsWith('.cpuprofile')).length, 2);
  });
});
