import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { NearestRows } from '../../../src/engine/search/nearest-rows';

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

function unit(values: number[]): number[] {
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}

describe('nearest rows: int8 first, exact after', () => {
  it('finds exactly what a full exact scan finds, ties included, for any rows, query and filter', () => {
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
    fc.assert(
      fc.property(
        fc.array(fc.tuple(direction, fc.option(nudge, { nil: null })), { maxLength: 300 }),
        direction,
        fc.integer({ min: 1, max: 12 }),
        fc.array(fc.boolean(), { minLength: 300, maxLength: 300 }),
        (drawn, queryDirection, count, accepted) => {
          const values = Float32Array.from(
            drawn.flatMap(([vector, moved]) =>
              unit(vector.map((value, d) => value + (moved?.[d] ?? 0))),
            ),
          );
          const query = Float32Array.from(unit(queryDirection));
          const accept = (row: number) => accepted[row]!;
          const rows = new NearestRows(dimensions);
          rows.reset(values);
          assert.deepEqual(
            rows.nearest(query, count, accept),
            scan(values, dimensions, query, count, accept),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('finds the row nearest exactly when rounding ranks another first', () => {
    // a rounds to (60, 60) and b to (61, 60): b's int8 product is higher, a's exact one is
    const row = (x: number, y: number) => [
      x / 127,
      y / 127,
      Math.sqrt(127 ** 2 - x * x - y * y) / 127,
    ];
    const rows = new NearestRows(3);
    rows.reset(Float32Array.from([...row(60.5, 60.4), ...row(60.49, 60.49)]));
    const query = Float32Array.from(unit([1, 1, 0]));
    assert.deepEqual(
      rows.nearest(query, 1, () => true),
      [1],
    );
  });

  it('scores exactly only rows near the best ones', () => {
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
    rows.reset(values);
    let scored = 0;
    const exact = rows.exact.bind(rows);
    rows.exact = (query, row) => {
      scored++;
      return exact(query, row);
    };
    const query = Float32Array.from(unit([1, ...new Array<number>(15).fill(0)]));
    assert.deepEqual(
      rows.nearest(query, 3, () => true),
      scan(values, dimensions, query, 3, () => true),
    );
    assert.ok(scored < 5000, `scored ${scored} of 5000 rows exactly`);
  });
});
