import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  BLOCK_ROWS,
  int8DotsBackend,
  int8Matrix,
  PlainMatrix,
} from '../../../src/engine/search/int8-dots';

/** The highest of each BLOCK_ROWS products, the last block possibly short. */
function maximaOf(dots: readonly number[]): number[] {
  const out: number[] = [];
  for (let at = 0; at < dots.length; at += BLOCK_ROWS)
    out.push(Math.max(...dots.slice(at, at + BLOCK_ROWS)));
  return out;
}

const byte = fc.integer({ min: -127, max: 127 });

const matrixArbitrary = fc.integer({ min: 1, max: 70 }).chain((dimensions) =>
  fc.record({
    dimensions: fc.constant(dimensions),
    rows: fc.array(fc.array(byte, { minLength: dimensions, maxLength: dimensions }), {
      maxLength: 70,
    }),
    query: fc.array(byte, { minLength: dimensions, maxLength: dimensions }),
  }),
);

describe('int8 dot products', () => {
  it('runs in WebAssembly SIMD on this Node', () => {
    assert.equal(int8DotsBackend(), 'simd');
  });

  it('gives the same sums as the plain loop for any rows, query and width', () => {
    fc.assert(
      fc.property(matrixArbitrary, ({ dimensions, rows, query }) => {
        const fast = int8Matrix(rows.length, dimensions);
        const plain = new PlainMatrix(rows.length, dimensions);
        rows.forEach((row, at) => {
          fast.setRow(at, Int8Array.from(row));
          plain.setRow(at, Int8Array.from(row));
        });
        const expected = rows.map((row) =>
          row.reduce((sum, value, i) => sum + value * query[i]!, 0),
        );
        assert.deepEqual([...plain.dots(Int8Array.from(query))], expected);
        assert.deepEqual([...fast.dots(Int8Array.from(query))], expected);
        rows.forEach((row, at) => assert.deepEqual([...fast.row(at)], row));
      }),
      { numRuns: 300 },
    );
  });

  it('gives each query of a batch the sums it gets alone, across passes and as room is taken, with their block maxima', () => {
    fc.assert(
      fc.property(
        matrixArbitrary.chain((matrix) =>
          fc.record({
            matrix: fc.constant(matrix),
            queries: fc.array(
              fc.array(byte, { minLength: matrix.dimensions, maxLength: matrix.dimensions }),
              { minLength: 1, maxLength: 9 },
            ),
          }),
        ),
        ({ matrix: { dimensions, rows }, queries }) => {
          const fast = int8Matrix(rows.length, dimensions);
          const plain = new PlainMatrix(rows.length, dimensions);
          rows.forEach((row, at) => {
            fast.setRow(at, Int8Array.from(row));
            plain.setRow(at, Int8Array.from(row));
          });
          const alone = queries.map((query) => [...plain.dots(Int8Array.from(query))]);
          for (const matrix of [fast, plain]) {
            const visited: number[] = [];
            matrix.dotsEach(
              queries.map((query) => Int8Array.from(query)),
              (dots, index, maxima) => {
                visited.push(index);
                assert.deepEqual([...dots], alone[index]);
                assert.deepEqual([...maxima], maximaOf(alone[index]!));
              },
            );
            assert.deepEqual(visited, [...queries.keys()]);
          }
          rows.forEach((row, at) => assert.deepEqual([...fast.row(at)], row));
          assert.deepEqual([...fast.dots(Int8Array.from(queries[0]!))], alone[0]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives every row its own sum, in groups of four and in the rows after the last group', () => {
    // each row's sum names it: row r holds r + 1 in one column, the query 1 in every column
    for (const dimensions of [1, 16, 17, 64])
      for (let rows = 0; rows <= 9; rows++) {
        const matrix = int8Matrix(rows, dimensions);
        for (let row = 0; row < rows; row++) {
          const values = new Int8Array(dimensions);
          values[row % dimensions] = row + 1;
          matrix.setRow(row, values);
        }
        const expected = Array.from({ length: rows }, (_, row) => row + 1);
        assert.deepEqual([...matrix.dots(new Int8Array(dimensions).fill(1))], expected);
      }
  });

  it('writes a batch of whole rows as writing them one by one does, and refuses one that does not fit', () => {
    fc.assert(
      fc.property(matrixArbitrary, fc.nat(), ({ dimensions, rows }, start) => {
        const first = rows.length ? start % rows.length : 0;
        const batch = rows.slice(first);
        for (const matrix of [
          int8Matrix(rows.length, dimensions),
          new PlainMatrix(rows.length, dimensions),
        ]) {
          matrix.setRows(first, Int8Array.from(batch.flat()));
          batch.forEach((row, i) => assert.deepEqual([...matrix.row(first + i)], row));
          rows
            .slice(0, first)
            .forEach((_, at) => assert.ok(matrix.row(at).every((value) => value === 0)));
          assert.throws(
            () => matrix.setRows(first, new Int8Array(batch.flat().length + dimensions)),
            RangeError,
          );
          if (dimensions > 1)
            assert.throws(() => matrix.setRows(0, new Int8Array(dimensions - 1)), RangeError);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('sums the extremes of every lane without overflow', () => {
    const dimensions = 256;
    const matrix = int8Matrix(3, dimensions);
    matrix.setRow(0, new Int8Array(dimensions).fill(127));
    matrix.setRow(1, new Int8Array(dimensions).fill(-127));
    const query = new Int8Array(dimensions).fill(-127);
    assert.deepEqual([...matrix.dots(query)], [-127 * 127 * 256, 127 * 127 * 256, 0]);
  });
});
