import { strict as assert } from 'node:assert';
import type { Engine } from '../../../src/engine/engine';
import type { SearchResult } from '../../../src/engine/search/pipeline';
import { isStageName, STAGES } from '../../../src/engine/search/stages';
import { unwrap } from '../../../src/engine/util/result';
import { openEngine, Scratch } from '../../helpers/workspace';

/** The switchable stages of the ranking stack, on the shop fixture (lexical search only). */
describe('search stages', () => {
  const scratch = new Scratch();
  let engine: Engine;
  before(async () => {
    engine = await openEngine(scratch, scratch.fixture('shop-py'), { model: { kind: 'none' } });
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  const search = async (
    query: string,
    ablate: Parameters<Engine['search']>[0]['ablate'] = [],
  ): Promise<SearchResult> => unwrap(await engine.search({ query, ablate }));

  it('lists every stage once, by a name eval --ablate accepts', () => {
    const names = STAGES.map((stage) => stage.name);
    assert.equal(new Set(names).size, names.length);
    assert.ok(names.every(isStageName));
    assert.equal(isStageName('no-such-stage'), false);
  });

  it('looks up a one-word question that names a definition, whatever its shape', async () => {
    const symbols = (result: SearchResult) =>
      result.trace.retrievers
        .find((list) => list.source === 'symbol')!
        .top.map((hit) => hit.evidence);
    assert.deepEqual(symbols(await search('Database')), ['defines Database']);
    assert.deepEqual(symbols(await search('Database', ['index-name'])), []);
    assert.deepEqual(symbols(await search('Database?')), ['defines Database']);
    assert.deepEqual(symbols(await search('connect')), ['defines Database.connect']);
    assert.deepEqual(symbols(await search('Nowhere')), []);
  });

  it('answers with files, each listed once with its spans', async () => {
    const result = await search('how is an order created and validated');
    const paths = result.files.map((file) => file.path);
    assert.equal(new Set(paths).size, paths.length);
    assert.equal(paths[0], 'shop/service.py');
    const listed = new Set(result.files.flatMap((file) => file.spans));
    assert.ok(result.spans.every((span) => listed.has(span)));
    const scores = result.spans.map((span) => span.score);
    assert.ok(
      scores.every((score, i) => i === 0 || score <= scores[i - 1]!),
      'the context takes spans best first across files, not file by file',
    );
  });

  it('adds whole-file evidence to a file’s standing unless its stages are off', async () => {
    const query = 'how does the service create and validate an order';
    const standing = (result: SearchResult) =>
      result.files.map((file) => file.score - Math.max(...file.spans.map((span) => span.score)));
    const fileStages = ['file-words', 'file-paths'] as const;
    // file-proximity orders the files from another ranking of the chunks: off, so each file
    // stands by its best chunk here
    const off = await search(query, [...fileStages, 'file-proximity']);
    assert.ok(
      standing(off).every((gain) => gain <= 0),
      'off: a file stands by its best chunk',
    );
    for (const stage of fileStages) {
      const only = await search(
        query,
        fileStages.filter((other) => other !== stage),
      );
      assert.ok(
        standing(only).some((gain) => gain > 0),
        `${stage} lifts the file that leads on its evidence`,
      );
    }
  });

  it('spends the budget on spans best first across files, not file by file', async () => {
    const result = await search('how are the saved handles to the storage file thrown away?');
    const order = result.spans.map((span) => span.path);
    assert.ok(
      order.some(
        (path, i) => i > 1 && path === order[0] && order.slice(1, i).some((p) => p !== path),
      ),
      `a better span of another file comes before the first file's later spans: ${order.join(' ')}`,
    );
    const scores = result.spans.map((span) => span.score);
    assert.ok(scores.every((score, i) => i === 0 || score <= scores[i - 1]!));
    const ranked = result.files.map((file) => file.path);
    assert.equal(new Set(ranked).size, ranked.length, 'the files list still shows each file once');
  });
});
