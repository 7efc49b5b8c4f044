import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { BUNDLED_MODEL_NAME, bundledModelDirectory, loadModel } from '../../src/engine/embed/load';
import { unwrap } from '../../src/engine/util/result';
import { openEngine, POTION_MODEL, Scratch } from '../helpers/workspace';

/** No network: the default model cannot be downloaded, so the model shipped in models/ is used. */
const UNREACHABLE_HUB = 'http://127.0.0.1:1';
const DEFAULT_MODEL = { kind: 'hub', repo: 'minishlab/potion-code-16M' } as const;

describe('offline fallback to the shipped model', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('finds models/potion-base-2M from the sources and from a bundle in dist/', () => {
    assert.equal(bundledModelDirectory(), POTION_MODEL);
    const root = path.resolve(POTION_MODEL, '..', '..');
    assert.equal(bundledModelDirectory(path.join(root, 'dist')), POTION_MODEL);
    assert.equal(bundledModelDirectory(scratch.folder()), null);
  });

  it('loads the shipped model when the hub cannot be reached, and says why', async () => {
    const loaded = unwrap(
      await loadModel(DEFAULT_MODEL, {
        cacheRoot: scratch.folder(),
        hubUrl: UNREACHABLE_HUB,
        offlineFallback: POTION_MODEL,
      }),
    );
    assert.equal(loaded.embedder?.id, BUNDLED_MODEL_NAME);
    assert.match(
      loaded.note!,
      /^could not download potion-code-16M \(Could not download the embedding model .*\), so the index uses the bundled potion-base-2M/,
    );
  });

  it('keeps the download error when there is no fallback, and adds no note to a model that loads', async () => {
    const failed = await loadModel(DEFAULT_MODEL, {
      cacheRoot: scratch.folder(),
      hubUrl: UNREACHABLE_HUB,
      offlineFallback: null,
    });
    assert.ok(!failed.ok && failed.error.code === 'model_unavailable');
    const direct = unwrap(
      await loadModel(
        { kind: 'directory', path: POTION_MODEL },
        { cacheRoot: scratch.folder(), offlineFallback: POTION_MODEL },
      ),
    );
    assert.equal(direct.note, null);
  });

  it('indexes with the shipped model offline, and searches use its vectors', async () => {
    const engine = await openEngine(scratch, scratch.fixture('shop-py'), {
      model: DEFAULT_MODEL,
      hubUrl: UNREACHABLE_HUB,
      offlineFallback: POTION_MODEL,
    });
    try {
      assert.equal(engine.embedding.available, true);
      assert.equal(engine.embedding.modelId, BUNDLED_MODEL_NAME);
      assert.match(engine.embedding.note!, /could not download potion-code-16M/);
      unwrap(await engine.index());
      const stats = engine.stats();
      assert.equal(stats.embedding.modelId, BUNDLED_MODEL_NAME);
      assert.match(stats.embedding.note!, /bundled potion-base-2M/);
      const result = unwrap(await engine.search({ query: 'charge a customer for an order' }));
      const semantic = result.trace.retrievers.find((list) => list.source === 'semantic');
      assert.ok(semantic && semantic.top.length > 0, 'the semantic retriever found chunks');
      assert.ok(
        result.spans.some((span) => semantic.top.some((hit) => hit.chunkId === span.chunkId)),
        'a returned span came from the model’s vectors',
      );
    } finally {
      engine.dispose();
    }
  });
});
