import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import {
  appendFileSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import * as path from 'node:path';
import { unwrap } from '../../src/engine/util/result';
import { directoryChunkId } from '../../src/engine/index/directories';
import { VectorScan } from '../../src/engine/search/vectors';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { freshSnapshot, storeSnapshot } from '../helpers/snapshot';
import { openEngine, POTION_MODEL, Scratch, writeTree } from '../helpers/workspace';

/** After any sequence of edits, an updated index equals a fresh index of the final tree. */
describe('incremental indexing', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  function edit(root: string): { changed: string[]; removed: string[]; renamed: [string, string] } {
    appendFileSync(
      path.join(root, 'shop/service.py'),
      '\n\ndef audit(request):\n    """Check who asked before regenerating."""\n    from .api import authenticate\n    user = authenticate(request)\n    OrderService("db").regenerate()\n    return user\n',
    );
    rmSync(path.join(root, 'shop/cycle_b.py'));
    renameSync(path.join(root, 'shop/util.py'), path.join(root, 'shop/helpers.py'));
    writeFileSync(
      path.join(root, 'shop/reports.py'),
      'from .helpers import log_event\n\n\ndef daily():\n    log_event("report")\n',
    );
    writeFileSync(path.join(root, 'shop/blob.py'), Buffer.from([0x00, 0x01, 0x02, 0x63, 0x6f]));
    return {
      changed: ['shop/service.py', 'shop/reports.py', 'shop/blob.py'],
      removed: ['shop/cycle_b.py'],
      renamed: ['shop/util.py', 'shop/helpers.py'],
    };
  }

  it('per-file updates, deletes and renames equal a fresh index, also after reopening the store', async () => {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root);
    const storeDir = engine.storeDir;
    try {
      unwrap(await engine.index());
      const before = engine.graph.callers('shop/db.py::reset_connections').length;
      const { changed, removed, renamed } = edit(root);
      unwrap(await engine.updateFiles(changed));
      unwrap(await engine.removeFiles(removed));
      unwrap(await engine.renameFile(...renamed));
      assert.equal(
        engine.graph.callers('shop/service.py::OrderService.regenerate').length,
        1,
        'the new caller is linked',
      );
      assert.equal(engine.graph.callers('shop/db.py::reset_connections').length, before);
      assert.ok(!engine.graph.fact('shop/cycle_b.py::pong'));
      assert.equal(engine.store.manifest.files['shop/blob.py']!.skipped, 'binary');
      assert.deepEqual(await storeSnapshot(engine), await freshSnapshot(scratch, root));
    } finally {
      engine.dispose();
    }
    const reopened = await openEngine(scratch, root, { storeDir });
    try {
      assert.deepEqual(
        await storeSnapshot(reopened),
        await freshSnapshot(scratch, root),
        'the delta log restores the same index',
      );
      const summary = unwrap(await reopened.index());
      assert.equal(summary.indexed, 0, 'nothing left to do');
    } finally {
      reopened.dispose();
    }
  });

  it('a full re-index after the same edits equals a fresh index, and rewrites only what changed', async () => {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      edit(root);
      const summary = unwrap(await engine.index());
      assert.equal(summary.indexed, 3, 'service.py, reports.py and helpers.py are parsed');
      assert.equal(summary.removed, 2, 'cycle_b.py and util.py are gone');
      assert.equal(summary.skipped.binary, 1);
      assert.deepEqual(await storeSnapshot(engine), await freshSnapshot(scratch, root));
    } finally {
      engine.dispose();
    }
  });

  it('writes many small batches while parsing goes on, each chunk exactly once', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 60; i++)
      files[`pkg/m${i}.py`] =
        `def f${i}(x):\n    return g${i}(x)\n\n\ndef g${i}(x):\n    return x\n`;
    const root = scratch.tree(files);
    const batched = await openEngine(scratch, root, { batchChunks: 7, workers: 2 });
    try {
      const summary = unwrap(await batched.index());
      assert.equal(
        summary.chunksWritten,
        180,
        'file chunks and two functions per file, written once',
      );
      assert.equal((await batched.store.tables.counts()).chunks, batched.store.catalog.size);
      assert.deepEqual(await storeSnapshot(batched), await freshSnapshot(scratch, root));
    } finally {
      batched.dispose();
    }
  });

  it('a file whose timestamp changed but not its content is not parsed again', async () => {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      const file = path.join(root, 'shop/db.py');
      writeFileSync(file, readFileSync(file));
      const future = new Date(Date.now() + 5000);
      utimesSync(file, future, future);
      const summary = unwrap(await engine.index());
      assert.equal(summary.indexed, 0);
      const recorded = engine.store.manifest.files['shop/db.py']!.mtimeMs;
      assert.ok(
        Math.abs(recorded - future.getTime()) <= 1,
        'the manifest keeps the new timestamp, so the file is not read again',
      );
    } finally {
      engine.dispose();
    }
  });

  it('keeps vectors in step with chunks when a model is loaded', async () => {
    const root = scratch.fixture('shop-js');
    const engine = await openEngine(scratch, root, {
      model: { kind: 'directory', path: POTION_MODEL },
    });
    try {
      unwrap(await engine.index());
      appendFileSync(
        path.join(root, 'lib/pricing.js'),
        '\nexports.discount = function discount(item) {\n  return exports.priceOf(item) / 2;\n};\n',
      );
      unwrap(await engine.updateFiles(['lib/pricing.js']));
      const { chunks } = await engine.store.tables.counts();
      assert.equal(chunks, engine.store.catalog.size);
      const nearest = await engine.store.tables.nearest(
        (await engine.embedder!.embed(['discount price of an item']))[0]!,
        3,
      );
      assert.ok(
        nearest.some((hit) => hit.id === 'lib/pricing.js::None::discount::function'),
        JSON.stringify(nearest),
      );
    } finally {
      engine.dispose();
    }
  });

  it('patches the vectors in memory after a save to what a fresh read gives, reading only the saved file and the folders above it', async () => {
    const root = scratch.fixture('shop-js');
    // a second folder with a summary of its own, which a save in lib/ must leave alone
    // (more than 20 files in all, so each folder is summarised on its own)
    writeTree(
      root,
      Object.fromEntries(
        Array.from({ length: 18 }, (_, i) => [
          `delivery/step${i}.js`,
          `exports.step${i} = function step${i}(order) {\n  return order.id + ${i};\n};\n`,
        ]),
      ),
    );
    const engine = await openEngine(scratch, root, {
      model: { kind: 'directory', path: POTION_MODEL },
    });
    try {
      unwrap(await engine.index());
      assert.ok(
        engine.store.catalog.has(directoryChunkId('delivery')) &&
          engine.store.catalog.has(directoryChunkId('lib')),
        'both folders are summarised',
      );
      const scan = new VectorScan(engine.store.tables, engine.store.catalog);
      engine.onDidChangeIndex((change) => scan.refresh(change.paths));
      const query = (await engine.embedder!.embed(['discount price of an item']))[0]!;
      const levels = ['directory', 'file', 'class', 'function'] as const;
      await scan.nearest(query, 5, levels);
      // and the engine's own scan has read them (a search waits for its read)
      unwrap(await engine.search({ query: 'discount price of an item' }));
      const pricing = path.join(root, 'lib/pricing.js');
      const before = readFileSync(pricing, 'utf8');
      const removed = [...engine.store.catalog.values()].find(
        (meta) => meta.filePath === 'lib/pricing.js' && meta.level === 'function',
      )!;
      writeFileSync(
        pricing,
        `${before.replace(`function ${removed.functionName}(`, 'function renamedAway(')}\nexports.discount = function discount(item) {\n  return exports.priceOf(item) / 2;\n};\n`,
      );
      const { events } = await captureLogs(async () => {
        unwrap(await engine.updateFiles(['lib/pricing.js']));
        // the engine's own scan, reading since the opening, is patched too: a search waits for it
        unwrap(await engine.search({ query: 'discount price of an item' }));
        return scan.nearest(query, 5, levels);
      });
      const refreshed = eventsNamed(events, 'vectors_refreshed');
      assert.equal(refreshed.length, 2, "this scan's and the engine's own");
      assert.equal(
        eventsNamed(events, 'vectors_loaded').length,
        0,
        'the table is not read whole again',
      );
      const folders = ['lib', '.'];
      assert.ok(!folders.includes('delivery'));
      const readAgain = [...engine.store.catalog.values()].filter(
        (meta) =>
          meta.filePath === 'lib/pricing.js' ||
          (meta.level === 'directory' && folders.includes(meta.directoryPath)),
      ).length;
      assert.ok(refreshed.every((event) => event.read === readAgain));
      const all = engine.store.catalog.size;
      const fresh = new VectorScan(engine.store.tables, engine.store.catalog);
      assert.deepEqual(
        await scan.nearest(query, all, levels),
        await fresh.nearest(query, all, levels),
      );
      assert.ok(
        (await scan.nearest(query, all, levels)).every((hit) => engine.store.catalog.has(hit.id)),
        'no vector of a chunk that is gone',
      );
    } finally {
      engine.dispose();
    }
  });

  describe('a saved file is judged as the walk judges it', () => {
    const indexed = (engine: Awaited<ReturnType<typeof openEngine>>) =>
      Object.entries(engine.store.manifest.files)
        .filter(([, entry]) => !entry.skipped)
        .map(([file]) => file)
        .sort();

    it('keeps a tracked file under an ignored folder, and drops one git excludes', async () => {
      const root = scratch.tree({
        '.gitignore': 'gen/\n',
        'gen/api.py': 'def api():\n    return 1\n',
        'src/main.py': 'def main():\n    return 2\n',
        'src/local.py': 'def local():\n    return 3\n',
      });
      execFileSync('git', ['init', '-q'], { cwd: root });
      execFileSync('git', ['add', '-f', '.gitignore', 'gen/api.py', 'src/main.py'], { cwd: root });
      const engine = await openEngine(scratch, root);
      try {
        unwrap(await engine.index());
        assert.deepEqual(indexed(engine), ['gen/api.py', 'src/local.py', 'src/main.py']);
        writeFileSync(path.join(root, '.git', 'info', 'exclude'), 'src/local.py\n');
        appendFileSync(path.join(root, 'gen/api.py'), '\n\ndef more():\n    return 4\n');
        unwrap(await engine.updateFiles(['gen/api.py', 'src/local.py']));
        assert.deepEqual(indexed(engine), ['gen/api.py', 'src/main.py']);
        const progress: unknown[] = [];
        const listening = engine.onProgress((event) => progress.push(event));
        assert.equal(await engine.isStale(), false, 'a save and a full walk agree');
        listening.dispose();
        assert.deepEqual(progress, [], 'checking is not indexing: no progress is shown');
      } finally {
        engine.dispose();
      }
    });

    it('never indexes a link to a file outside the folder', async () => {
      const outside = scratch.tree({ 'secret.py': 'TOKEN = "outside"\n' });
      const root = scratch.tree({ 'src/main.py': 'def main():\n    return 2\n' });
      const engine = await openEngine(scratch, root, { useGit: false });
      try {
        unwrap(await engine.index());
        symlinkSync(path.join(outside, 'secret.py'), path.join(root, 'src/link.py'));
        unwrap(await engine.updateFiles(['src/link.py']));
        assert.deepEqual(indexed(engine), ['src/main.py']);
      } finally {
        engine.dispose();
      }
    });

    it('walks again when a .gitignore changes', async () => {
      const root = scratch.tree({
        'src/main.py': 'def main():\n    return 2\n',
        'gen/out.py': 'def out():\n    return 5\n',
      });
      const engine = await openEngine(scratch, root, { useGit: false });
      try {
        unwrap(await engine.index());
        assert.deepEqual(indexed(engine), ['gen/out.py', 'src/main.py']);
        writeFileSync(path.join(root, '.gitignore'), 'gen/\n');
        unwrap(await engine.updateFiles(['.gitignore']));
        assert.deepEqual(indexed(engine), ['src/main.py']);
      } finally {
        engine.dispose();
      }
    });
  });
});
