import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import fc from 'fast-check';
import type { CallSite, Chunk, CodeFact } from '../../src/engine/model';
import { CodeGraph } from '../../src/engine/graph/code-graph';
import { Tables, type ChunkMeta } from '../../src/engine/store/tables';
// after the tables module, which sets LanceDB's environment before it loads
import * as lancedb from '@lancedb/lancedb';
import { vectorRowBytes } from '../../src/engine/store/vector-memory';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { Scratch } from '../helpers/workspace';
import { chunkOf, factOf } from '../helpers/chunks';

/** Every field of `fact` as a plain record (a graph's facts read theirs through getters). */
function plainFact(fact: CodeFact): CodeFact {
  const { id, path, language, qualifiedName, name, kind, className, parent } = fact;
  const { startLine, endLine, signature, docstring, chunkId, calls } = fact;
  const { raises, errorStrings, mutates, imports, bases } = fact;
  return {
    ...{ id, path, language, qualifiedName, name, kind, className, parent },
    ...{ startLine, endLine, signature, docstring, chunkId, calls },
    ...{ raises, errorStrings, mutates, imports, bases },
  };
}

function chunk(i: number): Chunk {
  return chunkOf({
    id: `f${i % 500}.py::None::f${i}::function`,
    filePath: `f${i % 500}.py`,
    functionName: `f${i}`,
    parentFileId: `f${i % 500}.py::None::None::file`,
    content: `def f${i}():\n    return ${i}\n`,
  });
}

describe('LanceDB tables', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('indexes the path and id columns once a table is large, and deletes still work', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), 4, true);
    try {
      await tables.addChunks(
        Array.from({ length: 19_000 }, (_, i) => chunk(i)),
        null,
      );
      assert.equal(await tables.ensureIndexes(), false, 'small tables are left alone');
      await tables.addChunks(
        Array.from({ length: 2_000 }, (_, i) => chunk(19_000 + i)),
        null,
      );
      assert.equal(await tables.ensureIndexes(), true);
      assert.equal(await tables.ensureIndexes(), false, 'created once');
      // what the warm-up after opening does: it reads the indexes in and writes nothing
      const versions = await tables.versions();
      await tables.warmIndexes();
      assert.deepEqual(await tables.versions(), versions);
      assert.equal((await tables.counts()).chunks, 21_000);
      await tables.deleteFiles(['f7.py']);
      assert.equal((await tables.counts()).chunks, 21_000 - 42);
    } finally {
      tables.close();
    }
  });

  it('writes an indexing batch of several thousand chunks and facts as one table version each', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), 4, true);
    try {
      const rows = 4_600;
      const chunks = Array.from({ length: rows }, (_, i) => chunk(i));
      const facts = chunks.map((written, i) =>
        factOf({
          id: `${written.filePath}::f${i}`,
          path: written.filePath!,
          qualifiedName: `f${i}`,
          name: `f${i}`,
          signature: `def f${i}():`,
          chunkId: written.id,
        }),
      );
      const before = await tables.versions();
      await tables.replace({ files: [], chunkIds: [], chunks, vectors: null, facts });
      const after = await tables.versions();
      // each version is a fragment that compaction would have to merge later
      assert.deepEqual(
        { chunks: after.chunks - before.chunks, facts: after.facts - before.facts },
        { chunks: 1, facts: 1 },
      );
      assert.deepEqual(await tables.counts(), { chunks: rows, facts: rows });
    } finally {
      tables.close();
    }
  });

  it('indexes the vectors once they outgrow the memory budget, and finds nearly every exact neighbour through the index', async () => {
    const dimensions = 64;
    const rows = 4_000;
    // clustered, as embeddings of code are: 40 centres, each row near one
    const random = seeded(7);
    const centres = Array.from({ length: 40 }, () =>
      Array.from({ length: dimensions }, () => random() * 2 - 1),
    );
    const vectorOf = (i: number) =>
      Float32Array.from(centres[i % centres.length]!, (value) => value + (random() - 0.5) * 0.6);
    const chunks = Array.from({ length: rows }, (_, i): Chunk => {
      const level = i % 2 ? 'function' : 'class';
      return { ...chunk(i), id: `f${i}::${level}`, level };
    });
    const vectors = new Map(chunks.map((c, i) => [c.id, vectorOf(i)]));
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), dimensions, true);
    try {
      await tables.addChunks(chunks, vectors);
      const budget = rows * vectorRowBytes(dimensions);
      assert.equal(await tables.ensureIndexes(budget), false, 'the vectors fit: no index');
      const built = await captureLogs(() => tables.ensureIndexes(budget - 1));
      assert.equal(built.result, true);
      assert.equal(eventsNamed(built.events, 'vector_index_created').length, 1);
      assert.equal(await tables.ensureIndexes(budget - 1), false, 'created once');
      const cosine = (a: Float32Array, b: Float32Array) => {
        let dot = 0;
        let na = 0;
        let nb = 0;
        for (let d = 0; d < dimensions; d++) {
          dot += a[d]! * b[d]!;
          na += a[d]! * a[d]!;
          nb += b[d]! * b[d]!;
        }
        return dot / Math.sqrt(na * nb);
      };
      let found = 0;
      const queries = 20;
      for (let q = 0; q < queries; q++) {
        const query = vectorOf(q);
        const exact = chunks
          .filter((c) => c.level === 'function')
          .map((c) => ({ id: c.id, similarity: cosine(query, vectors.get(c.id)!) }))
          .sort((a, b) => b.similarity - a.similarity)
          .slice(0, 10)
          .map((row) => row.id);
        const hits = await tables.nearest(query, 10, ['function']);
        assert.ok(
          hits.every((hit) => hit.id.endsWith('::function')),
          'the level filter holds',
        );
        const ids = new Set(hits.map((hit) => hit.id));
        found += exact.filter((id) => ids.has(id)).length;
      }
      assert.ok(found / (queries * 10) >= 0.9, `recall@10 ${found / (queries * 10)}`);
    } finally {
      tables.close();
    }
  });

  it('compacts tables that many small updates have fragmented', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
    try {
      for (let i = 0; i < 70; i++) await tables.addChunks([chunk(i)], null);
      assert.equal(await tables.needsOptimize(), true);
      await tables.compact();
      assert.equal(await tables.needsOptimize(), false);
      assert.equal((await tables.counts()).chunks, 70);
    } finally {
      tables.close();
    }
  });

  it('counts the versions on disk as a listing does, through writes, a compaction and clean-ups', async () => {
    const folder = path.join(scratch.folder(), 'lance');
    const tables = await Tables.open(folder, null, true);
    const db = await lancedb.connect(folder);
    const listed = async () => {
      const counts = await Promise.all(
        ['chunks', 'facts'].map(
          async (name) => (await (await db.openTable(name)).listVersions()).length,
        ),
      );
      return Math.max(...counts);
    };
    try {
      const checks: [number, number][] = [];
      const check = async () => checks.push([await tables.versionCount(), await listed()]);
      for (let i = 0; i < 3; i++) await tables.addChunks([chunk(i)], null);
      await check();
      await tables.addFacts([
        factOf({ id: 'f1.py::f1', path: 'f1.py', name: 'f1', qualifiedName: 'f1' }),
      ]);
      await tables.deleteFiles(['f0.py']);
      await check();
      await tables.compact();
      await check();
      // versions are dated to the millisecond: the committed one comes clearly later
      await new Promise((resolve) => setTimeout(resolve, 20));
      await tables.addChunks([chunk(3)], null);
      await tables.cleanup(await tables.versions());
      await check();
      for (let i = 4; i < 7; i++) await tables.addChunks([chunk(i)], null);
      await check();
      assert.ok(checks[1]![1] > checks[0]![1], 'the writes added versions');
      assert.ok(checks[3]![1] < checks[2]![1], 'the clean-up removed versions');
      for (const [counted, onDisk] of checks) assert.equal(counted, onDisk);
    } finally {
      db.close();
      tables.close();
    }
  });

  it('keeps the committed versions when a clean-up runs after newer ones were written', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
    try {
      for (let i = 0; i < 4; i++) await tables.addChunks([chunk(i)], null);
      // versions are dated to the millisecond: the committed one comes clearly later
      await new Promise((resolve) => setTimeout(resolve, 20));
      await tables.addChunks([chunk(4)], null);
      const committed = await tables.versions();
      // versions written after the commit, as LanceDB's own optimize may write
      await tables.addChunks([chunk(5)], null);
      await tables.deleteFiles(['f0.py']);
      const before = await tables.versionCount();
      await tables.cleanup(committed);
      assert.ok((await tables.versionCount()) < before, 'older versions are gone');
      await tables.checkout(committed);
      assert.equal((await tables.counts()).chunks, 5, 'the committed version is still readable');
      assert.equal(await tables.restore(committed), true);
      assert.equal((await tables.counts()).chunks, 5);
    } finally {
      tables.close();
    }
  });

  it('keeps every text value in its place when neighbours hold halves of a surrogate pair', async () => {
    // a lone half encodes as three bytes (U+FFFD) on its own, but two halves joined make one
    // four-byte character: a column built from the joined text lost two bytes and shifted every
    // later value
    const signatures = ['def a\uD83D', '\uDE00def b', 'def c', 'def d'];
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
    try {
      await tables.addFacts(signatures.map((signature, i) => factOf({ id: `f${i}`, signature })));
      const read = new Map((await tables.allFacts()).map((fact) => [fact.id, fact.signature]));
      assert.deepEqual(
        signatures.map((_, i) => read.get(`f${i}`)),
        ['def a\uFFFD', '\uFFFDdef b', 'def c', 'def d'],
      );
    } finally {
      tables.close();
    }
  });

  it('reads back every chunk and fact it was given, column by column, across batches', async () => {
    // a few names, so paths, kinds and call names repeat as they do in a real index
    const word = fc.constantFrom('a', 'run', 'Ünïcode', 'x.y', "it's", '', 'émoji 🎉', 'path/to');
    const maybe = <T>(value: fc.Arbitrary<T>) => fc.option(value, { nil: null });
    const call: fc.Arbitrary<CallSite> = fc
      .record(
        {
          name: word,
          receiver: maybe(word),
          line: fc.nat(5000),
          receiverType: word,
          kind: fc.constant('reference' as const),
        },
        { requiredKeys: ['name', 'receiver', 'line'] },
      )
      .map((drawn) => ({ ...drawn }));
    const fact = fc.record({
      path: word,
      language: fc.constantFrom('python', 'go', 'typescript'),
      qualifiedName: word,
      name: word,
      kind: fc.constantFrom('function', 'method', 'class', 'module'),
      className: maybe(word),
      parent: maybe(word),
      startLine: fc.nat(9000),
      endLine: fc.nat(9000),
      signature: fc.string(),
      docstring: maybe(fc.string()),
      chunkId: maybe(word),
      calls: fc.array(call, { maxLength: 4 }),
      raises: fc.array(word, { maxLength: 3 }),
      errorStrings: fc.array(fc.string(), { maxLength: 2 }),
      mutates: fc.array(word, { maxLength: 2 }),
      imports: fc.array(
        fc.record({
          local: word,
          module: word,
          imported: maybe(word),
          kind: fc.constantFrom('module', 'named'),
          line: fc.nat(100),
        }),
        { maxLength: 2 },
      ),
      bases: fc.array(word, { maxLength: 2 }),
    });
    const chunkFields = fc.record({
      filePath: maybe(word),
      directoryPath: word,
      language: maybe(fc.constantFrom('python', 'go')),
      className: maybe(word),
      functionName: maybe(word),
      startLine: fc.nat(9000),
      endLine: fc.nat(9000),
      parentDirectoryId: maybe(word),
      parentFileId: maybe(word),
      parentClassId: maybe(word),
      isSummarized: fc.boolean(),
      originalLineCount: maybe(fc.nat(9000)),
      segments: maybe(fc.array(fc.tuple(fc.nat(99), fc.nat(99)), { maxLength: 3 })),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fact, { maxLength: 30 }),
        fc.array(chunkFields, { maxLength: 30 }),
        // a second, larger batch of one repeated row makes LanceDB return several record batches
        fc.nat(3000),
        async (drawnFacts, drawnChunks, repeats) => {
          // fast-check draws records without a prototype; what is read back has one. A file has
          // one language: the graph keeps it once per path.
          const languages = new Map<string, string>();
          const facts = structuredClone(drawnFacts).map((drawn, i) => {
            const language = languages.get(drawn.path) ?? drawn.language;
            languages.set(drawn.path, language);
            return { ...drawn, id: `fact${i}`, language } as CodeFact;
          });
          for (let i = 0; i < (facts.length ? repeats : 0); i++)
            facts.push({ ...facts[0]!, id: `copy${i}` });
          const chunks: Chunk[] = structuredClone(drawnChunks).map((drawn, i) => ({
            ...drawn,
            id: `chunk${i}`,
            level: 'function',
            language: drawn.language as Chunk['language'],
            content: `text ${i}`,
            fullContent: null,
          }));
          const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
          try {
            await tables.addFacts(facts);
            await tables.addChunks(chunks, null);
            const byId = <T extends { id: string }>(rows: readonly T[]) =>
              [...rows].sort((a, b) => (a.id < b.id ? -1 : 1));
            assert.deepEqual(byId(await tables.allFacts()), byId(facts));
            // read as an opening engine reads them: into its graph's gatherer, each fact's call
            // sites packed into the graph's numbers as it comes
            const gathered = await tables.allFacts(undefined, new CodeGraph('root').pending());
            assert.deepEqual(byId(gathered.map(plainFact)), byId(facts));
            assert.deepEqual(
              byId(await allChunkMetadata(tables)),
              byId(
                chunks.map(({ content: _content, fullContent: _full, ...meta }) => ({
                  ...meta,
                  segments: meta.segments?.map((segment) => [...segment]) ?? null,
                })),
              ),
            );
          } finally {
            tables.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('reads back the vector of every chunk, whole or by id, batch by batch', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), 4, true);
    try {
      // more rows than one batch holds, so several batches come back
      const chunks = Array.from({ length: 2500 }, (_, i) => chunk(i));
      const vectors = new Map(chunks.map((c, i) => [c.id, Float32Array.from([i, -i, i / 2, 1])]));
      await tables.addChunks(chunks, vectors);
      const read = async (ids?: string[]) => {
        const out = new Map<string, number[]>();
        for await (const batch of tables.vectors(ids))
          batch.ids.forEach((id, row) => {
            assert.equal(batch.levels[row], 'function');
            out.set(id, [...batch.values.subarray(row * 4, row * 4 + 4)]);
          });
        return out;
      };
      const all = await read();
      assert.equal(all.size, chunks.length);
      for (const [id, vector] of vectors) assert.deepEqual(all.get(id), [...vector]);
      const some = [chunks[7]!.id, chunks[2400]!.id];
      assert.deepEqual(
        [...(await read(some))].sort(),
        some.map((id) => [id, [...vectors.get(id)!]]).sort(),
      );
    } finally {
      tables.close();
    }
  });
});

/** A folder's summary chunk. */
function folder(name: string, seed = 0): Chunk {
  return chunkOf({
    id: `${name}::directory`,
    level: 'directory',
    filePath: null,
    directoryPath: name,
    content: `folder ${name} ${seed}`,
  });
}

describe('LanceDB tables: vectors read back by id', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  /** Each vector a read gives, by chunk id. */
  async function readVectors(tables: Tables, ids?: string[]): Promise<Map<string, number[]>> {
    const out = new Map<string, number[]>();
    for await (const batch of tables.vectors(ids))
      batch.ids.forEach((id, row) => out.set(id, [...batch.values.subarray(row * 2, row * 2 + 2)]));
    return out;
  }

  it('reads by id what the table holds, through saves, deletions, folder rewrites and a rollback', async () => {
    const file = (path: string, n: number, seed: number): Chunk =>
      chunkOf({ id: `${path}::f${n}`, filePath: path, content: `def f${n}(): return ${seed}` });
    const step = fc.record({
      kind: fc.constantFrom('save', 'save', 'folder', 'delete-file', 'delete-chunks', 'rollback'),
      path: fc.constantFrom('a.py', 'b.py', 'c.py'),
      folder: fc.constantFrom('src', 'lib'),
      count: fc.integer({ min: 1, max: 4 }),
      seed: fc.integer({ min: 1, max: 1000 }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 8 }), async (steps) => {
        const tables = await Tables.open(path.join(scratch.folder(), 'lance'), 2, true);
        try {
          const seeded = ['a.py', 'b.py', 'c.py'].flatMap((p) => [0, 1].map((n) => file(p, n, 0)));
          const folders = [folder('src', 0), folder('lib', 0)];
          const all = [...seeded, ...folders];
          // an index run's batch, then a whole read as search's first one (it meets the folders)
          await tables.addChunks(all, new Map(all.map((c, i) => [c.id, Float32Array.of(i, -i)])));
          await readVectors(tables);
          let committed = await tables.versions();
          for (const { kind, path: saved, folder: name, count, seed } of steps) {
            const chunks =
              kind === 'folder'
                ? [folder(name, seed)]
                : Array.from({ length: count }, (_, n) => file(saved, n, seed));
            const vectors = new Map(chunks.map((c, i) => [c.id, Float32Array.of(seed, i)]));
            if (kind === 'save' || kind === 'folder')
              await tables.replace({
                files: kind === 'save' ? [saved] : [],
                chunkIds: kind === 'folder' ? [chunks[0]!.id] : [],
                chunks,
                vectors,
                facts: [],
              });
            else if (kind === 'delete-file') await tables.deleteFiles([saved]);
            else if (kind === 'delete-chunks') await tables.deleteChunks([`${saved}::f0`]);
            else {
              // a save cut short: its write is undone
              await tables.replace({ files: [saved], chunkIds: [], chunks, vectors, facts: [] });
              await tables.restore(committed);
            }
            committed = await tables.versions();
            const held = await readVectors(tables);
            const ids = [...all, ...chunks].map((c) => c.id);
            const byId = await readVectors(tables, ids);
            assert.deepEqual(
              [...byId].sort(),
              [...held].filter(([id]) => ids.includes(id)).sort(),
              `after ${kind}`,
            );
          }
        } finally {
          tables.close();
        }
      }),
      { numRuns: 12 },
    );
  });

  it('keeps no folder row that a deletion under way during the read removed', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), 2, true);
    try {
      const folders = [folder('src'), folder('lib')];
      await tables.addChunks(
        folders,
        new Map(folders.map((c, i) => [c.id, Float32Array.of(i, 1)])),
      );
      // a whole read (search's first) while the deletion is under way: it may meet the old row
      const deleting = tables.deleteChunks(['src::directory']);
      for await (const batch of tables.vectors()) assert.ok(batch.ids.length);
      await deleting;
      const ids: string[] = [];
      for await (const batch of tables.vectors(['src::directory', 'lib::directory']))
        ids.push(...batch.ids);
      assert.deepEqual(ids, ['lib::directory']);
    } finally {
      tables.close();
    }
  });
});

/** A repeatable stream of numbers in [0, 1) (mulberry32). */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

async function allChunkMetadata(tables: Tables): Promise<ChunkMeta[]> {
  const out: ChunkMeta[] = [];
  for await (const batch of tables.chunkMetadata()) out.push(...batch);
  return out;
}
