import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EngineWorkerClient } from '../../src/engine/host/client';
import type { IndexProgress } from '../../src/engine/index/indexer';
import { Scratch, writeTree } from '../helpers/workspace';

/** The engine in its worker thread, driven through the typed protocol the extension uses. */
describe('engine worker', function () {
  this.timeout(60_000);
  const scratch = new Scratch();
  let client: EngineWorkerClient;
  before(() => {
    client = new EngineWorkerClient({ logLevel: 'warn' });
  });
  after(() => {
    client.dispose();
    scratch.cleanup();
  });

  function folder(root: string) {
    return { root, storeDir: path.join(scratch.folder(), 'store'), storageRoot: scratch.folder(), model: { kind: 'none' as const }, workers: 0 };
  }

  it('opens, indexes with progress, searches, traces and updates a folder', async () => {
    const root = scratch.fixture('shop-py');
    const opened = await client.open(folder(root));
    assert.ok(opened.ok, JSON.stringify(opened));
    const progress: IndexProgress[] = [];
    const summary = await client.index(root, (event) => progress.push(event));
    assert.ok(summary.ok);
    assert.equal(summary.value.files, 8);
    assert.deepEqual([...new Set(progress.map((event) => event.stage))], ['walk', 'parse', 'facts', 'embed', 'write']);
    const spans = await client.search(root, 'readonly database error');
    assert.ok(spans.ok && spans.value.spans.some((span) => span.path === 'shop/db.py'));
    const trace = await client.trace(root, 'reset_connections', 2);
    assert.ok(trace.ok && trace.value[0]!.callers[0]!.symbol.qualifiedName === 'OrderService.regenerate');
    const changes: string[][] = [];
    client.onDidChangeIndex((change) => changes.push(change.paths));
    writeTree(root, { 'shop/extra.py': 'def extra():\n    return 1\n' });
    const updated = await client.update(root, [path.join(root, 'shop/extra.py')]);
    assert.ok(updated.ok && updated.value.indexed === 1);
    assert.deepEqual(changes, [['shop/extra.py']]);
    const stats = await client.stats(root);
    assert.ok(stats.ok && stats.value.files === 9);
  });

  it('answers with typed errors: unknown folders, missing folders, cancelled runs', async () => {
    const unknown = await client.search('/not/open', 'x');
    assert.ok(!unknown.ok && unknown.error.code === 'not_found');
    const missing = await client.open(folder(path.join(scratch.folder(), 'gone')));
    assert.ok(!missing.ok && /Folder does not exist/.test(missing.error.message));
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++) files[`m${i}.py`] = `def f${i}():\n    return ${i}\n`;
    const root = scratch.tree(files);
    assert.ok((await client.open(folder(root))).ok);
    const controller = new AbortController();
    const run = client.index(root, () => controller.abort(), controller.signal);
    const result = await run;
    assert.ok(!result.ok && result.error.code === 'cancelled', JSON.stringify(result));
    const resumed = await client.index(root);
    assert.ok(resumed.ok && resumed.value.files === 400, 'a cancelled run finishes next time');
  });
});
