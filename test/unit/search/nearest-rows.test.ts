import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  kthAccepted,
  NearestRows,
  nearestExactly,
  quantiseRow,
  rowsReaching,
  topRows,
} from '../../../src/engine/search/nearest-rows';
import { blockCount, blockMaxima, BLOCK_ROWS } from '../../../src/engine/search/int8-dots';

/** What scanning every row in order and keeping the best gives: the reference. */
function scan(
  values: Float32Array,
  dimensions: number,
  query: Float32Array,
  count: number,
  accept: (row: number) => boolean,
): number[] {
  const best: { row: number; similarity: number }[] = [];
  for (let row = 0; row < values.length / dimensions; row++) {
    let similarity = 0;
    for (let d = 0; d < dimensions; d++) similarity += query[d]! * values[row * dimensions + d]!;
    if (best.length === count && similarity <= best[count - 1]!.similarity) continue;
    if (!accept(row)) continue;
    let at = best.length;
    while (at > 0 && best[at - 1]!.similarity < similarity) at--;
    best.splice(at, 0, { row, similarity });
    if (best.length > count) best.pop();
  }
  return best.map((entry) => entry.row);
}

/**
 * The first look as one pass gathered it before: the `limit` highest rows by sorted insertion, and
 * every row that came within `margin` of the running `limit`-th highest; the candidates were the
 * gathered rows reaching the cutoff.
 */
function topAndNear(
  values: Int32Array,
  limit: number,
  margin: number,
): { top: number[]; near: number[] } {
  const top: number[] = [];
  const near: number[] = [];
  let floor = -Infinity;
  let passed = -Infinity;
  for (let row = 0; row < values.length; row++) {
    const value = values[row]!;
    if (value < passed) continue;
    near.push(row);
    if (value <= floor) continue;
    let at = top.length;
    while (at > 0 && values[top[at - 1]!]! < value) at--;
    top.splice(at, 0, row);
    if (top.length > limit) top.pop();
    if (top.length === limit) {
      floor = values[top[limit - 1]!]!;
      passed = floor - margin;
    }
  }
  return { top, near };
}

/**
 * `values` (unit vectors) as batches of whole rows in their int8 values, as the index's words are
 * taken in, cut after the rows `cuts` names.
 */
async function* batches(
  values: Float32Array,
  dimensions: number,
  cuts: readonly number[] = [],
): AsyncGenerator<Int8Array> {
  const rows = values.length / dimensions;
  let from = 0;
  for (const cut of [...cuts.map((at) => Math.min(at, rows)), rows].sort((a, b) => a - b)) {
    if (cut <= from) continue;
    const codes = new Int8Array((cut - from) * dimensions);
    for (let row = 0; row < cut - from; row++)
      quantiseRow(
        values,
        (from + row) * dimensions,
        codes.subarray(row * dimensions, (row + 1) * dimensions),
      );
    yield await Promise.resolve(codes);
    from = cut;
  }
}

/** The int8 table's candidates ranked exactly, each row's vector given again as a caller does. */
function nearest(
  rows: NearestRows,
  values: Float32Array,
  dimensions: number,
  query: Float32Array,
  count: number,
  accept: (row: number) => boolean,
): { found: number[]; candidates: number } {
  const candidates = rows.candidates([query], count, accept)[0]!;
  const vectors = candidates.map((row) => values.slice(row * dimensions, (row + 1) * dimensions));
  return {
    found: nearestExactly(query, candidates, vectors, count),
    candidates: candidates.length,
  };
}

function unit(values: number[]): number[] {
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

describe('nearest rows: int8 first, exact after', () => {
  it('finds exactly what a full exact scan finds, ties included, for any rows, query, filter and batches', async () => {
    const dimensions = 8;
    // few distinct directions, repeated, some nudged by less than an int8 step: many rows whose
    // int8 products tie or cross while their exact ones differ, and some exact ties
    const direction = fc.array(fc.integer({ min: -3, max: 3 }), {
      minLength: dimensions,
      maxLength: dimensions,
    });
    const nudge = fc.array(fc.double({ min: -0.01, max: 0.01, noNaN: true }), {
      minLength: dimensions,
      maxLength: dimensions,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(direction, fc.option(nudge, { nil: null })), { maxLength: 300 }),
        direction,
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.boolean(), { minLength: 300, maxLength: 300 }),
        fc.array(fc.integer({ min: 0, max: 300 }), { maxLength: 4 }),
        fc.integer({ min: 0, max: 300 }),
        async (drawn, queryDirection, count, accepted, cuts, firstAppend) => {
          const values = Float32Array.from(
            drawn.flatMap(([vector, moved]) =>
              unit(vector.map((value, d) => value + (moved?.[d] ?? 0))),
            ),
          );
          const query = Float32Array.from(unit(queryDirection));
          const accept = (row: number) => accepted[row]!;
          const rows = new NearestRows(dimensions);
          // taken in over two appends, as an index run and a later save add words
          const split = Math.min(firstAppend, drawn.length) * dimensions;
          await rows.append(
            split / dimensions,
            batches(values.subarray(0, split), dimensions, cuts),
          );
          await rows.append(
            drawn.length - split / dimensions,
            batches(values.subarray(split), dimensions, cuts),
          );
          assert.equal(rows.size, drawn.length);
          assert.deepEqual(
            nearest(rows, values, dimensions, query, count, accept).found,
            scan(values, dimensions, query, count, accept),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('finds the row nearest exactly when its rounding works against it on every value and the query rounds too', async () => {
    // row a's values sit just below the query's signs' side of its int8 values, row b's one step
    // further that way (but for the query's smallest value) and just past the other side: b's
    // int8 product is higher by nearly |q|₁/127, a's exact product is higher. Only a bound on the
    // rounding as wide as the worst case keeps a among the candidates.
    const dimensions = 16;
    // no value near zero: the query's smallest one must outweigh a's rounding left on it
    const component = fc
      .tuple(fc.double({ min: 0.05, max: 1, noNaN: true }), fc.boolean())
      .map(([size, negative]) => (negative ? -size : size));
    await fc.assert(
      fc.asyncProperty(
        fc
          .array(component, { minLength: dimensions, maxLength: dimensions })
          .map((values) => unit(values)),
        // small int8 values, so that the rows' |c_v| leaves the query's rounding little room and
        // the bound's first term (the rows' rounding) must be nearly all of the gap
        fc.array(fc.integer({ min: -3, max: 3 }), {
          minLength: dimensions,
          maxLength: dimensions,
        }),
        async (direction, base) => {
          const query = Float32Array.from(direction);
          const smallest = direction.reduce(
            (at, value, d) => (Math.abs(value) < Math.abs(direction[at]!) ? d : at),
            0,
          );
          const sign = direction.map(Math.sign);
          const a = base.map((code, d) => (code + 0.499 * sign[d]!) / 127);
          const b = base.map(
            (code, d) => (code + (d === smallest ? 0 : sign[d]!) - 0.499 * sign[d]!) / 127,
          );
          const values = Float32Array.from([...b, ...a]);
          const rows = new NearestRows(dimensions);
          await rows.append(2, batches(values, dimensions));
          const found = nearest(rows, values, dimensions, query, 1, () => true).found;
          assert.deepEqual(
            found,
            scan(values, dimensions, query, 1, () => true),
          );
          assert.deepEqual(found, [1]);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives every question word of one pass the candidates it gets alone', async () => {
    const dimensions = 8;
    const direction = fc.array(fc.integer({ min: -3, max: 3 }), {
      minLength: dimensions,
      maxLength: dimensions,
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(direction, { maxLength: 200 }),
        fc.array(direction, { minLength: 1, maxLength: 7 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.boolean(), { minLength: 200, maxLength: 200 }),
        async (drawn, queryDirections, count, accepted) => {
          const values = Float32Array.from(drawn.flatMap(unit));
          const accept = (row: number) => accepted[row]!;
          const rows = new NearestRows(dimensions);
          await rows.append(drawn.length, batches(values, dimensions, []));
          const queries = queryDirections.map((query) => Float32Array.from(unit(query)));
          assert.deepEqual(
            rows.candidates(queries, count, accept),
            queries.map((query) => rows.candidates([query], count, accept)[0]),
          );
          for (const query of queries)
            assert.deepEqual(
              nearest(rows, values, dimensions, query, count, accept).found,
              scan(values, dimensions, query, count, accept),
            );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('finds the row nearest exactly when rounding ranks another first', async () => {
    // a rounds to (60, 60) and b to (61, 60): b's int8 product is higher, a's exact one is
    const row = (x: number, y: number) => [
      x / 127,
      y / 127,
      Math.sqrt(127 ** 2 - x * x - y * y) / 127,
    ];
    const rows = new NearestRows(3);
    const values = Float32Array.from([...row(60.5, 60.4), ...row(60.49, 60.49)]);
    await rows.append(2, batches(values, 3));
    const query = Float32Array.from(unit([1, 1, 0]));
    assert.deepEqual(nearest(rows, values, 3, query, 1, () => true).found, [1]);
  });

  it('asks for the exact vectors of only the rows near the best ones', async () => {
    const dimensions = 16;
    const rows = new NearestRows(dimensions);
    const values = new Float32Array(5000 * dimensions);
    for (let row = 0; row < 5000; row++)
      values.set(
        unit([
          row % 16 === 0 ? 1 : 0,
          ...Array.from({ length: 15 }, (_, d) => Math.sin(row * (d + 1))),
        ]),
        row * dimensions,
      );
    await rows.append(5000, batches(values, dimensions, [1000, 2500]));
    const query = Float32Array.from(unit([1, ...new Array<number>(15).fill(0)]));
    const { found, candidates } = nearest(rows, values, dimensions, query, 3, () => true);
    assert.deepEqual(
      found,
      scan(values, dimensions, query, 3, () => true),
    );
    assert.ok(candidates < 5000, `scored ${candidates} of 5000 rows exactly`);
  });

  it('takes the first look and its candidates as gathering near rows in one pass did', () => {
    fc.assert(
      fc.property(
        // few distinct values: many ties, and rows both inside and outside the margin; each block
        // of rows lowered by its own amount, so that whole blocks fall below the floor
        fc.array(fc.integer({ min: -40, max: 40 }), { maxLength: 400 }),
        fc.array(fc.integer({ min: -80, max: 0 }), { minLength: 25, maxLength: 25 }),
        fc.integer({ min: 1, max: 70 }),
        fc.integer({ min: 0, max: 30 }),
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.boolean(), { minLength: 400, maxLength: 400 }),
        (drawn, lowered, limit, margin, count, accepted) => {
          const values = Int32Array.from(
            drawn,
            (value, row) => value + lowered[Math.floor(row / BLOCK_ROWS)]!,
          );
          const maxima = blockMaxima(values, new Int32Array(blockCount(values.length)));
          const accept = (row: number) => accepted[row]!;
          const before = topAndNear(values, limit, margin);
          const top = topRows(values, maxima, limit, new Int32Array(limit));
          assert.deepEqual([...top], before.top);
          const floor = kthAccepted(values, top, count, accept);
          assert.equal(floor, kthAccepted(values, before.top, count, accept));
          if (floor === null) return;
          const cutoff = floor - margin;
          const reaching = rowsReaching(values, maxima, cutoff, accept);
          assert.deepEqual(
            reaching,
            before.near.filter((row) => values[row]! >= cutoff && accept(row)),
          );
          // every row looked at, as before the blocks
          assert.deepEqual(
            reaching,
            [...values.keys()].filter((row) => values[row]! >= cutoff && accept(row)),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('refuses batches that do not hold the rows announced, keeping the rows it had', async () => {
    const rows = new NearestRows(2);
    await rows.append(1, batches(Float32Array.from([1, 0]), 2));
    await assert.rejects(rows.append(2, batches(Float32Array.from([0, 1]), 2)), /expected 2 rows/);
    await assert.rejects(
      rows.append(1, batches(Float32Array.from([0, 1, 1, 0]), 2)),
      /expected 1 rows to append, got more/,
    );
    await assert.rejects(
      rows.append(1, batches(Float32Array.from([0, 1, 1]), 3)),
      /holds part of a row/,
    );
    assert.equal(rows.size, 1);
    assert.deepEqual([...rows.rowCodes(0)], [127, 0]);
  });
});
