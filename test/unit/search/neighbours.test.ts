import { strict as assert } from 'node:assert';
import type { Engine } from '../../../src/engine/engine';
import { weaveIn } from '../../../src/engine/search/fusion';
import { ChunkTexts } from '../../../src/engine/search/chunk-texts';
import { neighbourHits, neighbourSeeds } from '../../../src/engine/search/strategies';
import { ChunkCatalog } from '../../../src/engine/store/catalog';
import { chunkMeta } from '../../helpers/chunks';
import { unwrap } from '../../../src/engine/util/result';
import { openEngine, Scratch } from '../../helpers/workspace';

/** Callers and callees of the best hits, and how they are woven into the ranking. */
describe('graph neighbours of the best hits', () => {
  const scratch = new Scratch();
  let engine: Engine;
  before(async () => {
    const root = scratch.tree({
      'app/pool.py':
        'import os\n\nDEFAULT_POOLSIZE = 10\nDEFAULT_TIMEOUT = 5\n\n\ndef open_pool(size=DEFAULT_POOLSIZE):\n    return [os.getpid()] * size\n',
      'app/errors.py':
        'class UnknownFlag(Exception):\n    def describe(self):\n        return "no such flag"\n',
      'app/flags.py': [
        'from .errors import UnknownFlag',
        '',
        '',
        'def match_flag(name, known):',
        '    if name not in known:',
        '        raise UnknownFlag(name)',
        '    return name',
        '',
        '',
        'def parse(argv, known):',
        '    return [match_flag(arg, known) for arg in argv]',
        '',
        '',
        'class Response:',
        '    def finish(self, data):',
        '        self.store.write_cookie_jar(data)',
        '',
        '',
        'class CookieStore:',
        '    def write_cookie_jar(self, data):',
        '        return data',
        '',
        '',
        'class MemoryStore:',
        '    def write_cookie_jar(self, data):',
        '        return None',
        '',
        '',
        'class Writer:',
        '    def save(self, data):',
        '        return data',
        '',
        '',
        'class OtherWriter:',
        '    def save(self, data):',
        '        return data',
        '',
        '',
        'def use(writer):',
        '    writer.save(1)',
        '',
        '',
        'def outer(items):',
        '    def each(item):',
        '        return transform_item(item)',
        '    return [each(i) for i in items]',
        '',
        '',
        'def transform_item(item):',
        '    return item',
        '',
        '',
        'class Reply:',
        '    @property',
        '    def guessed_charset(self):',
        '        return "utf-8"',
        '',
        '    def decoded(self):',
        '        return self.raw.decode(self.guessed_charset)',
        '',
      ].join('\n'),
    });
    engine = await openEngine(scratch, root);
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  const chunk = (qualified: string) => {
    const [className, functionName] = qualified.includes('.')
      ? qualified.split('.')
      : [null, qualified];
    const meta = [...engine.store.catalog.values()].find(
      (candidate) =>
        candidate.level === 'function' &&
        candidate.functionName === functionName &&
        (candidate.className ?? null) === className,
    );
    assert.ok(meta, `a chunk for ${qualified}`);
    return meta.id;
  };
  const neighbours = (...seeds: string[]) =>
    neighbourHits({ graph: engine.graph, catalog: engine.store.catalog }, seeds.map(chunk)).hits;

  it('links a hit to its resolved callers (at the call line) and callees', () => {
    const hits = neighbours('match_flag');
    const caller = hits.find((hit) => hit.chunkId === chunk('parse'));
    assert.ok(caller, 'parse calls match_flag');
    assert.deepEqual(caller.lines, [11]);
    assert.match(caller.evidence, /calls match_flag/);
    assert.ok(
      neighbours('parse').some(
        (hit) => hit.chunkId === chunk('match_flag') && /called from parse/.test(hit.evidence),
      ),
    );
  });

  it('links a method to where its class is created: the raise site of an exception', () => {
    const raiser = neighbours('UnknownFlag.describe').find(
      (hit) => hit.chunkId === chunk('match_flag'),
    );
    assert.ok(raiser, 'match_flag raises UnknownFlag');
    assert.deepEqual(raiser.lines, [6]);
    assert.match(raiser.evidence, /creates UnknownFlag/);
  });

  it('links a call the resolver leaves open (two stores define the method) by its name, both ways', () => {
    const callees = neighbours('Response.finish')
      .filter((hit) => /by name/.test(hit.evidence))
      .map((hit) => hit.chunkId);
    assert.deepEqual(
      callees.sort(),
      [chunk('CookieStore.write_cookie_jar'), chunk('MemoryStore.write_cookie_jar')].sort(),
    );
    const caller = neighbours('CookieStore.write_cookie_jar').find(
      (hit) => hit.chunkId === chunk('Response.finish'),
    );
    assert.ok(
      caller && /may call CookieStore\.write_cookie_jar \(by name\)/.test(caller.evidence),
      JSON.stringify(caller),
    );
    assert.deepEqual(caller.lines, [16]);
  });

  it('splits a name link between the definitions it could mean', () => {
    const hits = neighbours('use');
    const save = hits.filter(
      (hit) => hit.chunkId === chunk('Writer.save') || hit.chunkId === chunk('OtherWriter.save'),
    );
    assert.equal(save.length, 2);
    assert.ok(
      save.every((hit) => hit.score === 0.5),
      'each gets half of the seed weight',
    );
  });

  it('follows the calls of a function nested in a hit, and cites a nested caller by the function holding it', () => {
    assert.ok(
      neighbours('outer').some((hit) => hit.chunkId === chunk('transform_item')),
      'outer calls it through each',
    );
    const caller = neighbours('transform_item').find((hit) => hit.chunkId === chunk('outer'));
    assert.ok(caller, 'each is cited as outer');
    assert.deepEqual(caller.lines, [45]);
  });

  it('links a method to the members of its class it names without calling: a property it reads', async () => {
    const texts = await new ChunkTexts(engine.store.texts).get([chunk('Reply.decoded')]);
    const hits = neighbourHits(
      { graph: engine.graph, catalog: engine.store.catalog },
      [chunk('Reply.decoded')],
      texts,
    ).hits;
    assert.ok(
      hits.some(
        (hit) =>
          hit.chunkId === chunk('Reply.guessed_charset') &&
          /self\.guessed_charset/.test(hit.evidence),
      ),
      JSON.stringify(hits),
    );
  });

  it('cites the module constants a hit uses at the lines of its file that assign them', async () => {
    const file = [...engine.store.catalog.values()].find(
      (meta) => meta.level === 'file' && meta.filePath === 'app/pool.py',
    )!;
    const texts = await new ChunkTexts(engine.store.texts).get([chunk('open_pool'), file.id]);
    const constants = neighbourHits(
      { graph: engine.graph, catalog: engine.store.catalog },
      [chunk('open_pool')],
      texts,
    ).hits.filter((hit) => hit.chunkId === file.id);
    assert.equal(constants.length, 1);
    assert.deepEqual(
      constants[0]!.lines,
      [3],
      'DEFAULT_POOLSIZE, not DEFAULT_TIMEOUT, which open_pool does not use',
    );
    assert.match(constants[0]!.evidence, /assigns DEFAULT_POOLSIZE, used by open_pool/);
  });

  it('ranks a neighbour the retrievers found as well above one they did not', () => {
    const alone = neighbours('Response.finish');
    assert.equal(
      alone.find((hit) => hit.chunkId === chunk('CookieStore.write_cookie_jar'))!.score,
      alone.find((hit) => hit.chunkId === chunk('MemoryStore.write_cookie_jar'))!.score,
    );
    const ranking = [
      chunk('Response.finish'),
      chunk('parse'),
      chunk('MemoryStore.write_cookie_jar'),
    ];
    const corroborated = neighbourHits(
      { graph: engine.graph, catalog: engine.store.catalog },
      ranking,
    ).hits.map((hit) => hit.chunkId);
    assert.ok(
      corroborated.indexOf(chunk('MemoryStore.write_cookie_jar')) <
        corroborated.indexOf(chunk('CookieStore.write_cookie_jar')),
      corroborated.join(', '),
    );
  });

  it('ranks a neighbour of several hits above a neighbour of one', () => {
    const hits = neighbours('parse', 'UnknownFlag.describe');
    assert.equal(hits[0]!.chunkId, chunk('match_flag'), 'called by parse and raising UnknownFlag');
  });
});

describe('weaveIn', () => {
  it('keeps the first hits in place, then weaves one extra id after every few', () => {
    assert.deepEqual(weaveIn(['a', 'b', 'c', 'd', 'e', 'f'], ['x', 'y', 'z'], 2, 2), [
      'a',
      'b',
      'c',
      'd',
      'x',
      'e',
      'f',
      'y',
      'z',
    ]);
  });

  it('places an id once, at its first place', () => {
    assert.deepEqual(weaveIn(['a', 'b', 'c'], ['a', 'c', 'x'], 1, 1), ['a', 'b', 'c', 'x']);
  });

  it('seeds from the first five function hits of the ranking, in its order', () => {
    const catalog = new ChunkCatalog();
    const levels = [
      'file',
      'function',
      'class',
      'function',
      'function',
      'directory',
      'function',
      'function',
      'function',
    ] as const;
    levels.forEach((level, i) => catalog.set(`c${i}`, chunkMeta({ id: `c${i}`, level })));
    const ranking = ['c8', 'gone', 'c0', 'c1', 'c2', 'c3', 'c5', 'c4', 'c6', 'c7'];
    assert.deepEqual(neighbourSeeds(catalog, ranking), ['c8', 'c1', 'c3', 'c4', 'c6']);
    assert.deepEqual(neighbourSeeds(catalog, ['c0', 'c3']), ['c3']);
  });
});
