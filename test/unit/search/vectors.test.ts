import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import fc from 'fast-check';
import { CHUNK_LEVELS, type Chunk, type ChunkLevel } from '../../../src/engine/model';
import type { ChunkMeta } from '../../../src/engine/store/tables';
import { Tables } from '../../../src/engine/store/tables';
import { VectorScan } from '../../../src/engine/search/vectors';
import { Scratch } from '../../helpers/workspace';

const DIMENSIONS = 8;

function chunk(i: number, level: ChunkLevel): Chunk {
  return {
    id: `f${i % 5}.py::None::g${i}::${level}`,
    level,
    filePath: level === 'directory' ? null : `f${i % 5}.py`,
    directoryPath: '.',
    language: 'python',
    className: null,
    functionName: `g${i}`,
    startLine: 1,
    endLine: 2,
    parentDirectoryId: null,
    parentFileId: null,
    parentClassId: null,
    content: `text ${i}`,
    fullContent: null,
    isSummarized: false,
    originalLineCount: null,
    segments: null,
  };
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
            const catalog = new Map<string, ChunkMeta>(chunks.map((c) => [c.id, c]));
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
});
