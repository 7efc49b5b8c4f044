import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import fc from 'fast-check';
import { CHUNK_LEVELS, type Chunk, type ChunkLevel } from '../../../src/engine/model';
import { ChunkCatalog } from '../../../src/engine/store/catalog';
import { Tables } from '../../../src/engine/store/tables';
import { VectorScan } from '../../../src/engine/search/vectors';
import {
  VECTOR_MEMORY_BYTES,
  vectorRowBytes,
  vectorsFitInMemory,
} from '../../../src/engine/store/vector-memory';
import { logHub } from '../../../src/engine/log/logger';
import { MemorySink } from '../../../src/engine/log/sinks';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { Scratch } from '../../helpers/workspace';
import { chunkOf } from '../../helpers/chunks';

const DIMENSIONS = 8;

function chunk(i: number, level: ChunkLevel): Chunk {
  return chunkOf({
    id: `f${i % 5}.py::None::g${i}::${level}`,
    level,
    filePath: level === 'directory' ? null : `f${i % 5}.py`,
    functionName: `g${i}`,
    content: `text ${i}`,
  });
}

/** Signed bytes of `vector` scaled to unit length: what the scan compares. */
function codes(vector: readonly number[]): number[] {
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
  return vector.map((value) => Math.round(norm > 0 ? (value * 127) / norm : 0));
}

describe('vector scan', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('finds the best int8 products of the levels asked, as ranking every row in order does', async () => {
    // few distinct directions: many equal products, so ties decide much of the order
    const vector = fc.array(fc.integer({ min: -2, max: 2 }), {
      minLength: DIMENSIONS,
      maxLength: DIMENSIONS,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(vector, fc.constantFrom(...CHUNK_LEVELS)), {
          minLength: 1,
          maxLength: 80,
        }),
        vector,
        fc.integer({ min: 1, max: 20 }),
        fc.subarray([...CHUNK_LEVELS], { minLength: 1 }),
        async (rows, query, limit, levels) => {
          const chunks = rows.map(([, level], i) => chunk(i, level));
          const vectors = new Map(
            rows.map(([values], i) => [chunks[i]!.id, Float32Array.from(values)]),
          );
          const tables = await Tables.open(path.join(scratch.folder(), 'lance'), DIMENSIONS, true);
          try {
            await tables.addChunks(chunks, vectors);
            const catalog = ChunkCatalog.of(chunks);
            const found = await new VectorScan(tables, catalog).nearest(
              Float32Array.from(query),
              limit,
              levels,
            );
            const q = codes(query);
            const expected = rows
              .map(([values], i) => ({
                id: chunks[i]!.id,
                level: chunks[i]!.level,
                dot: codes(values).reduce((sum, value, d) => sum + value * q[d]!, 0),
              }))
              .filter((row) => levels.includes(row.level))
              // the best `limit`, the earlier row on a tie at the cut (a stable sort), then by id
              .sort((a, b) => b.dot - a.dot)
              .slice(0, limit)
              .sort((a, b) => b.dot - a.dot || (a.id < b.id ? -1 : 1));
            assert.deepEqual(
              found.map((hit) => hit.id),
              expected.map((row) => row.id),
            );
          } finally {
            tables.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('reads every row of a table holding more chunks than the catalog counts', async () => {
    // a run that stopped half-way leaves rows the catalog does not know: the matrix grows for them
    const chunks = Array.from({ length: 300 }, (_, i) => chunk(i, 'function'));
    const direction = (i: number) =>
      Float32Array.from({ length: DIMENSIONS }, (_, d) => Math.sin((i + 1) * (d + 1)));
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), DIMENSIONS, true);
    try {
      await tables.addChunks(chunks, new Map(chunks.map((c, i) => [c.id, direction(i)])));
      const query = direction(7);
      const found = await new VectorScan(tables, ChunkCatalog.of(chunks.slice(0, 3))).nearest(
        query,
        300,
        ['function'],
      );
      const q = codes([...query]);
      const dot = (i: number) => codes([...direction(i)]).reduce((sum, v, d) => sum + v * q[d]!, 0);
      assert.equal(found.length, 300);
      assert.deepEqual(
        found.map((hit) => dot(chunks.findIndex((c) => c.id === hit.id))),
        chunks.map((_, i) => dot(i)).sort((a, b) => b - a),
      );
    } finally {
      tables.close();
    }
  });

  it('keeps the vectors in memory while they fit the budget in bytes, and searches the table above it', async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => chunk(i, CHUNK_LEVELS[i % 4]!));
    // distinct directions: no ties at the cut
    const direction = (i: number) =>
      Float32Array.from({ length: DIMENSIONS }, (_, d) => Math.sin((i + 1) * (d + 1)));
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), DIMENSIONS, true);
    try {
      await tables.addChunks(chunks, new Map(chunks.map((c, i) => [c.id, direction(i)])));
      const catalog = ChunkCatalog.of(chunks);
      const budget = chunks.length * vectorRowBytes(DIMENSIONS);
      const query = direction(100);
      const search = (scan: VectorScan) => captureLogs(() => scan.nearest(query, 5, CHUNK_LEVELS));
      const kept = new VectorScan(tables, catalog, { limits: limits(budget) });
      const inMemory = await search(kept);
      assert.equal(eventsNamed(inMemory.events, 'vectors_loaded').length, 1);
      const inTable = await search(new VectorScan(tables, catalog, { limits: limits(budget - 1) }));
      assert.equal(eventsNamed(inTable.events, 'vectors_loaded').length, 0);
      assert.equal(eventsNamed(inTable.events, 'vectors_searched_in_table').length, 1);
      assert.deepEqual(
        inTable.result.map((hit) => hit.id),
        inMemory.result.map((hit) => hit.id),
      );
      // a save that takes the catalog past the budget: the kept scan turns to the table
      const added = chunk(40, 'function');
      await tables.addChunks([added], new Map([[added.id, direction(40)]]));
      catalog.set(added.id, added);
      kept.refresh([added.filePath!]);
      const grown = await search(kept);
      assert.equal(eventsNamed(grown.events, 'vectors_searched_in_table').length, 1);
    } finally {
      tables.close();
    }
  });

  it('answers from the table while a whole read of a large catalog is under way, then from memory', async () => {
    const chunks = Array.from({ length: 40 }, (_, i) => chunk(i, CHUNK_LEVELS[i % 4]!));
    const direction = (i: number) =>
      Float32Array.from({ length: DIMENSIONS }, (_, d) => Math.cos((i + 2) * (d + 1)));
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), DIMENSIONS, true);
    try {
      await tables.addChunks(chunks, new Map(chunks.map((c, i) => [c.id, direction(i)])));
      const catalog = ChunkCatalog.of(chunks);
      const query = direction(77);
      const fromTable = await tables.nearest(query, 5, CHUNK_LEVELS);
      const sink = new MemorySink('debug');
      const subscription = logHub.addSink(sink);
      const result = await (async () => {
        const scan = new VectorScan(tables, catalog, {
          limits: { memoryBudget: VECTOR_MEMORY_BYTES, waitForReadMaxRows: chunks.length - 1 },
        });
        const first = await scan.nearest(query, 5, CHUNK_LEVELS);
        const loaded = await eventually(
          () => eventsNamed(sink.events, 'vectors_loaded').length > 0,
        );
        return { first, loaded, later: await scan.nearest(query, 5, CHUNK_LEVELS) };
      })().finally(() => subscription.dispose());
      assert.deepEqual(result.first, fromTable, 'the first question did not wait for the read');
      assert.ok(result.loaded);
      // the same neighbours, now with the distances of the int8 codes
      assert.deepEqual(
        result.later.map((hit) => hit.id),
        fromTable.map((hit) => hit.id),
      );
      assert.notDeepEqual(result.later, fromTable);
    } finally {
      tables.close();
    }
  });

  it('budgets bytes per row by the dimensions: 951k chunks of the 64-dimension model fit', () => {
    assert.ok(vectorsFitInMemory(951_000, 64));
    assert.ok(!vectorsFitInMemory(951_000, 384));
    const rows = Math.floor(VECTOR_MEMORY_BYTES / vectorRowBytes(256));
    assert.ok(vectorsFitInMemory(rows, 256));
    assert.ok(!vectorsFitInMemory(rows + 1, 256));
    // codes are padded to the kernel's 16-byte lanes
    assert.equal(vectorRowBytes(60), vectorRowBytes(64));
    assert.ok(vectorRowBytes(65) > vectorRowBytes(64));
  });

  it('after any saves, the vectors patched in memory rank as vectors read whole again do', async () => {
    const files = ['a/x.py', 'a/b/y.py', 'a/b/z.py', 'c/w.py', 'top.py'];
    const folders = ['.', 'a', 'a/b', 'c'];
    const vector = fc.array(fc.integer({ min: -3, max: 3 }), {
      minLength: DIMENSIONS,
      maxLength: DIMENSIONS,
    });
    // a save: the files saved, each with the vectors of its new chunks
    const save = fc.array(fc.tuple(fc.constantFrom(...files), fc.array(vector, { maxLength: 6 })), {
      minLength: 1,
      maxLength: 3,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(save, { minLength: 1, maxLength: 12 }),
        vector,
        async (saves, query) => {
          const tables = await Tables.open(path.join(scratch.folder(), 'lance'), DIMENSIONS, true);
          try {
            const catalog = new ChunkCatalog();
            let generation = 0;
            // writes the chunks of `saved` files and of every folder, as an index run does
            const write = async (saved: ReadonlyMap<string, readonly number[][]>) => {
              generation++;
              const chunks: Chunk[] = [];
              const vectors = new Map<string, Float32Array>();
              const add = (made: Chunk, values: readonly number[]) => {
                chunks.push(made);
                vectors.set(made.id, Float32Array.from(values));
              };
              for (const [file, rows] of saved)
                rows.forEach((values, i) =>
                  add(fileChunk(file, `g${generation}n${i}`, path.posix.dirname(file)), values),
                );
              const touched = new Set([...saved.keys()].flatMap(ancestorsOf));
              for (const folder of folders.filter((name) => touched.has(name)))
                add(folderChunk(folder, generation), [
                  (generation % 5) - 2,
                  folders.indexOf(folder),
                  1,
                  0,
                  0,
                  0,
                  0,
                  -1,
                ]);
              const goneFolders = [...catalog.values()]
                .filter((meta) => meta.level === 'directory' && touched.has(meta.directoryPath))
                .map((meta) => meta.id);
              await tables.deleteFiles([...saved.keys()]);
              await tables.deleteChunks(goneFolders);
              for (const [id, meta] of [...catalog])
                if (goneFolders.includes(id) || (meta.filePath && saved.has(meta.filePath)))
                  catalog.delete(id);
              await tables.addChunks(chunks, vectors);
              for (const made of chunks) catalog.set(made.id, made);
            };
            await write(new Map(files.map((file) => [file, [[1, 0, 0, 0, 0, 0, 0, 1]]])));
            const scan = new VectorScan(tables, catalog);
            const all = ['directory', 'file', 'class', 'function'] as const;
            const q = Float32Array.from(query);
            await scan.nearest(q, 1, all);
            for (const saved of saves) {
              await write(new Map(saved));
              scan.refresh(saved.map(([file]) => file));
              assert.deepEqual(
                await scan.nearest(q, catalog.size + 1, all),
                await new VectorScan(tables, catalog).nearest(q, catalog.size + 1, all),
              );
            }
          } finally {
            tables.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});

function limits(memoryBudget: number) {
  return { memoryBudget, waitForReadMaxRows: Number.POSITIVE_INFINITY };
}

/** Whether `condition` holds within a few seconds of turns of the event loop. */
async function eventually(condition: () => boolean): Promise<boolean> {
  const until = Date.now() + 5_000;
  while (!condition() && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 5));
  return condition();
}

function ancestorsOf(file: string): string[] {
  const found: string[] = [];
  for (let dir = path.posix.dirname(file); ; dir = path.posix.dirname(dir)) {
    found.push(dir);
    if (dir === '.') return found;
  }
}

function fileChunk(file: string, name: string, directoryPath: string): Chunk {
  return {
    ...chunk(0, 'function'),
    id: `${file}::${name}`,
    filePath: file,
    directoryPath,
    functionName: name,
  };
}

function folderChunk(folder: string, generation: number): Chunk {
  return {
    ...chunk(0, 'directory'),
    id: `dir:${folder}:${generation}`,
    filePath: null,
    directoryPath: folder,
    functionName: null,
  };
}
