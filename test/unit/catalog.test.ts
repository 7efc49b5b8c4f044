import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { CHUNK_LEVELS, type LanguageId } from '../../src/engine/model';
import { ChunkCatalog } from '../../src/engine/store/catalog';
import type { ChunkMeta } from '../../src/engine/store/tables';
import { chunkMeta } from '../helpers/chunks';

/** Few ids, paths and names, so that sets replace, removals hit and strings repeat. */
const metaArbitrary: fc.Arbitrary<ChunkMeta> = fc
  .record({
    id: fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'é::ü'),
    level: fc.constantFrom(...CHUNK_LEVELS),
    filePath: fc.constantFrom(null, 'src/a.py', 'src/b.ts', 'lib/ç.go'),
    directoryPath: fc.constantFrom('', '.', 'src', 'lib'),
    language: fc.constantFrom<LanguageId | null>(null, 'python', 'typescript', 'go'),
    className: fc.constantFrom(null, 'Widget', 'Other'),
    functionName: fc.constantFrom(null, 'run', 'stop', 'ünïcode'),
    startLine: fc.integer({ min: -3, max: 100_000 }),
    endLine: fc.integer({ min: 0, max: 100_000 }),
    parentDirectoryId: fc.constantFrom(null, 'd1', 'd2'),
    parentFileId: fc.constantFrom(null, 'f1', 'src/a.py::None::None::file'),
    parentClassId: fc.constantFrom(null, 'c1'),
    isSummarized: fc.boolean(),
    originalLineCount: fc.option(fc.integer({ min: 0, max: 1_000_000 }), { nil: null }),
    segments: fc.option(
      fc.array(fc.tuple(fc.integer({ min: 1, max: 500 }), fc.integer({ min: 1, max: 500 })), {
        maxLength: 4,
      }),
      { nil: null },
    ),
  })
  .map((meta) => meta as ChunkMeta);

type Operation =
  | { kind: 'set'; meta: ChunkMeta }
  | { kind: 'delete'; id: string }
  | { kind: 'clear' }
  | { kind: 'takeOver'; metas: ChunkMeta[] };

const operationArbitrary: fc.Arbitrary<Operation> = fc.oneof(
  { weight: 8, arbitrary: metaArbitrary.map((meta) => ({ kind: 'set' as const, meta })) },
  {
    weight: 5,
    arbitrary: metaArbitrary.map((meta) => ({ kind: 'delete' as const, id: meta.id })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'clear' as const }) },
  {
    weight: 1,
    arbitrary: fc
      .array(metaArbitrary, { maxLength: 6 })
      .map((metas) => ({ kind: 'takeOver' as const, metas })),
  },
);

/** Applies `operation` to the catalog and to a Map holding copies, the behaviour it stands for. */
function apply(operation: Operation, catalog: ChunkCatalog, model: Map<string, ChunkMeta>): void {
  switch (operation.kind) {
    case 'set':
      catalog.set(operation.meta.id, operation.meta);
      model.set(operation.meta.id, structuredClone(operation.meta));
      return;
    case 'delete':
      assert.equal(catalog.delete(operation.id), model.delete(operation.id));
      return;
    case 'clear':
      catalog.clear();
      model.clear();
      return;
    case 'takeOver': {
      const other = ChunkCatalog.of(operation.metas);
      catalog.takeOver(other);
      assert.equal(other.size, 0);
      model.clear();
      for (const meta of operation.metas) model.set(meta.id, structuredClone(meta));
    }
  }
}

function assertSame(catalog: ChunkCatalog, model: Map<string, ChunkMeta>): void {
  assert.equal(catalog.size, model.size);
  assert.deepEqual([...catalog.entries()], [...model.entries()]);
  assert.deepEqual([...catalog.keys()], [...model.keys()]);
  for (const id of ['a', 'é::ü', 'missing', ...model.keys()]) {
    assert.equal(catalog.has(id), model.has(id));
    assert.deepEqual(catalog.get(id), model.get(id));
    assert.equal(catalog.levelOf(id), model.get(id)?.level);
  }
  for (const level of CHUNK_LEVELS)
    assert.equal(
      catalog.countOf(level),
      [...model.values()].filter((meta) => meta.level === level).length,
    );
  const places: [string, string | null][] = [];
  catalog.forEachPlace((id, filePath) => places.push([id, filePath]));
  assert.deepEqual(
    places,
    [...model.values()].map((meta) => [meta.id, meta.filePath]),
  );
  assert.deepEqual(
    [...catalog.directoryPaths()],
    [...new Set([...model.values()].map((meta) => meta.directoryPath))],
  );
  for (const id of ['a', 'é::ü', 'missing', ...model.keys()]) {
    const meta = model.get(id);
    const folder = meta?.level === 'directory';
    const place = meta && {
      id,
      folder,
      path: folder ? meta.directoryPath : meta.filePath,
      level: meta.level,
    };
    assert.deepEqual(catalog.placeOf(id), place);
    // looked for in a slot first, whichever: its own, another chunk's, a removed one's, none
    for (let slot = -1; slot < 12; slot++) assert.deepEqual(catalog.placeOf(id, slot), place);
    // what the search's fusion and file stages read in place of the metadata's filePath
    assert.equal(catalog.filePathOf(id), meta?.filePath);
  }
  for (const file of ['src/a.py', 'lib/ç.go', 'src', 'unknown.py'])
    assert.equal(
      catalog.hasFile(file),
      [...model.values()].some((meta) => meta.filePath === file),
    );
  const files = new Set(['src/a.py', 'lib/ç.go', 'unknown.py']);
  const folders = new Set(['src', '.', 'nowhere']);
  assert.deepEqual(
    catalog.idsOf(files, folders),
    [...model.values()]
      .filter((meta) =>
        meta.level === 'directory'
          ? folders.has(meta.directoryPath)
          : meta.filePath !== null && files.has(meta.filePath),
      )
      .map((meta) => meta.id),
  );
}

describe('chunk catalog', () => {
  it('reads as a Map of the metadata it was given, in its order, through sets, removals and take-overs', () => {
    fc.assert(
      fc.property(fc.array(operationArbitrary, { maxLength: 150 }), (operations) => {
        const catalog = new ChunkCatalog();
        const model = new Map<string, ChunkMeta>();
        for (const operation of operations) {
          apply(operation, catalog, model);
          assertSame(catalog, model);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps every chunk as it grows past its room and packs the slots removals freed', () => {
    fc.assert(
      fc.property(
        fc.array(metaArbitrary, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 100, max: 400 }),
        (templates, rounds) => {
          const catalog = new ChunkCatalog();
          const model = new Map<string, ChunkMeta>();
          // many distinct ids: the columns grow, and removals free a share of them for packing
          for (let i = 0; i < rounds; i++) {
            const meta = { ...templates[i % templates.length]!, id: `chunk${i}` };
            apply({ kind: 'set', meta }, catalog, model);
            if (i % 3 === 0) apply({ kind: 'delete', id: `chunk${i >> 1}` }, catalog, model);
            if (i % 7 === 0)
              apply({ kind: 'set', meta: { ...meta, id: `chunk${i >> 2}` } }, catalog, model);
            // the folders kept from a read must follow many changes and packs after it
            if (i % 50 === 0) catalog.directoryPaths();
          }
          assertSame(catalog, model);
          catalog.reserve(rounds * 2);
          assertSame(catalog, model);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('gives the values a chunk was last set to, never an object made before it changed', () => {
    const meta = chunkMeta({
      id: 'x',
      level: 'file',
      filePath: 'a.py',
      endLine: 9,
      segments: [[1, 3]],
    });
    const catalog = ChunkCatalog.of([meta]);
    assert.equal(catalog.get('x')!.startLine, 1);
    catalog.set('x', { ...meta, startLine: 5, segments: [[2, 3]] });
    assert.equal(catalog.get('x')!.startLine, 5);
    assert.deepEqual(catalog.get('x')!.segments, [[2, 3]]);
    catalog.delete('x');
    assert.equal(catalog.get('x'), undefined);
  });

  it('refuses a chunk of an unknown level or a line count that is not one', () => {
    const meta = ChunkCatalog.of([]);
    const base = chunkMeta({
      id: 'x',
      level: 'file',
      filePath: 'a.py',
      language: null,
      endLine: 9,
    });
    assert.throws(() => meta.set('x', { ...base, level: 'module' as never }), /unknown level/);
    assert.throws(() => meta.set('x', { ...base, originalLineCount: -4 }), /line count/);
    assert.equal(meta.size, 0, 'a refused chunk was left in the catalog');
    assert.ok(!meta.has('x'));
    // a refused replacement leaves the chunk as it was, its segments included
    const segmented = { ...base, segments: [[2, 4]] as ChunkMeta['segments'] };
    meta.set('x', segmented);
    assert.throws(() => meta.set('x', { ...base, originalLineCount: 1.5 }), /line count/);
    for (let id = 0; id < 200; id++) meta.set(`y${id}`, segmented);
    assert.deepEqual(meta.get('x'), segmented);
    assert.equal(meta.size, 201);
  });
});
