import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { Worker } from 'node:worker_threads';
import { embeddingText } from '../../src/engine/embed/embedder';
import { StaticModel } from '../../src/engine/embed/static-model';
import type { FileOutcome } from '../../src/engine/index/file-task';
import { lexicalDocumentsOf } from '../../src/engine/index/indexer';
import { ParsePool, threadLoadGauge } from '../../src/engine/index/parse-pool';
import { unwrap } from '../../src/engine/util/result';
import { openEngine, POTION_MODEL, Scratch } from '../helpers/workspace';
import { storeSnapshot } from '../helpers/snapshot';

type Indexed = Extract<FileOutcome, { kind: 'indexed' }>;

/** A Python module of random classes and functions calling each other. */
const pythonModule = fc
  .array(
    fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/),
      inClass: fc.boolean(),
      calls: fc.array(fc.stringMatching(/^[a-z][a-zA-Z0-9]{0,8}$/), { maxLength: 3 }),
      words: fc.array(fc.stringMatching(/^[A-Za-z]{1,9}$/), { maxLength: 6 }),
    }),
    { minLength: 1, maxLength: 8 },
  )
  .map((definitions) =>
    definitions
      .map(({ name, inClass, calls, words }, i) => {
        const body = [
          `"""${words.join(' ')}"""`,
          ...calls.map((call) => `${call}(${i})`),
          'return 1',
        ];
        return inClass
          ? `class C${i}_${name}:\n    def ${name}(self):\n${body.map((line) => `        ${line}`).join('\n')}\n`
          : `def ${name}_${i}():\n${body.map((line) => `    ${line}`).join('\n')}\n`;
      })
      .join('\n'),
  );

describe('parse handoff', function () {
  this.timeout(60_000);
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  async function parseAll(root: string, files: string[], receiverHasRoom: boolean) {
    const model = await StaticModel.load(POTION_MODEL, 'potion');
    const pool = new ParsePool(1, model, 60_000, () => receiverHasRoom);
    try {
      const outcomes = await Promise.all(
        files.map((file) =>
          pool.run({
            root,
            path: file,
            language: 'python',
            maxFileBytes: 1 << 20,
            previousHash: null,
          }),
        ),
      );
      return { model, outcomes: outcomes.map((outcome) => outcome as Indexed) };
    } finally {
      pool.dispose();
    }
  }

  it('gives the same terms and vectors whether the worker or the receiver finishes a file', async () => {
    const sources = fc.sample(pythonModule, { numRuns: 30, seed: 15 });
    const files = sources.map((_, i) => `m${i}.py`);
    const root = scratch.tree(Object.fromEntries(files.map((file, i) => [file, sources[i]!])));

    const byWorker = await parseAll(root, files, false);
    const byReceiver = await parseAll(root, files, true);
    for (const [i, finished] of byWorker.outcomes.entries()) {
      const left = byReceiver.outcomes[i]!;
      assert.equal(finished.kind, 'indexed');
      assert.ok(finished.lexical && finished.vectors, 'the busy receiver gets finished files');
      assert.equal(left.lexical, null, 'a receiver with room counts the terms itself');
      assert.equal(left.vectors, null);
      assert.deepEqual(left.chunks, finished.chunks);
      assert.deepEqual(left.facts, finished.facts);
      assert.deepEqual(lexicalDocumentsOf(left), lexicalDocumentsOf(finished));
      const vectors = await byReceiver.model.embed(left.chunks.map(embeddingText));
      assert.deepEqual(vectors, finished.vectors);
      // a file's vectors, and its chunks' term counts, cross from the worker as one buffer each
      const buffers = (views: readonly ArrayBufferView[]) =>
        new Set(views.map((view) => view.buffer));
      assert.equal(buffers(finished.vectors).size, 1);
      assert.equal(buffers(finished.lexical.map((terms) => terms.counts)).size, 1);
    }
  });

  it('indexes a workspace through a worker exactly as on one thread', async () => {
    const sources = fc.sample(pythonModule, { numRuns: 40, seed: 7 });
    const root = scratch.tree(
      Object.fromEntries(sources.map((source, i) => [`pkg${i % 4}/m${i}.py`, source])),
    );
    const model = { kind: 'directory' as const, path: POTION_MODEL };
    const pooled = await openEngine(scratch, root, { model, workers: 1 });
    const inline = await openEngine(scratch, root, { model, workers: 0 });
    try {
      unwrap(await pooled.index());
      unwrap(await inline.index());
      assert.deepEqual(await storeSnapshot(pooled), await storeSnapshot(inline));
      const query = { query: 'return the value' };
      assert.deepEqual(
        unwrap(await pooled.search(query)).spans.map((span) => span.path),
        unwrap(await inline.search(query)).spans.map((span) => span.path),
      );
    } finally {
      pooled.dispose();
      inline.dispose();
    }
  });

  it('gives the finishing to whichever thread was less busy: this one or its workers', async () => {
    // a worker that spins for as many milliseconds as it is posted, and idles otherwise
    const worker = new Worker(
      `const { parentPort } = require('node:worker_threads');
       parentPort.on('message', (ms) => { const until = Date.now() + ms; while (Date.now() < until); parentPort.postMessage('done'); });`,
      { eval: true },
    );
    const spin = (ms: number) =>
      new Promise((resolve) => {
        worker.once('message', resolve);
        worker.postMessage(ms);
      });
    try {
      await new Promise((resolve) => worker.once('online', resolve));
      const hasRoom = threadLoadGauge(() => [worker], 500);
      // this thread busy for half the window, the worker idle: the worker finishes its files
      const busyUntil = performance.now() + 350;
      while (performance.now() < busyUntil) Math.sqrt(busyUntil);
      await new Promise((resolve) => setTimeout(resolve, 350));
      assert.equal(hasRoom(), false);
      // the worker busy, this thread waiting on it: this thread finishes them
      await spin(700);
      assert.equal(hasRoom(), true);
      // within a window the answer holds
      const busyAgain = performance.now() + 100;
      while (performance.now() < busyAgain) Math.sqrt(busyAgain);
      assert.equal(hasRoom(), true);
    } finally {
      await worker.terminate();
    }
  });

  it('has room with no worker to compare with', () => {
    const hasRoom = threadLoadGauge(() => [], 0);
    const busyUntil = performance.now() + 50;
    while (performance.now() < busyUntil) Math.sqrt(busyUntil);
    assert.equal(hasRoom(), true);
  });
});
