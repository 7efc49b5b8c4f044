import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { KeyTable } from '../../../src/engine/graph/key-table';

describe('key table', () => {
  it('holds what a map holds through any sets and deletes, growing past its first size', () => {
    const key = fc.tuple(
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 0, max: 6 }),
      fc.integer({ min: -1, max: 2 }),
    );
    const operation = fc.record({
      set: fc.boolean(),
      key,
      value: fc.integer({ min: 0, max: 1_000_000 }),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 400, size: 'max' }), (operations) => {
        const table = new KeyTable();
        const reference = new Map<string, number>();
        for (const {
          set,
          key: [a, b, c],
          value,
        } of operations) {
          if (set) {
            table.set(a, b, c, value);
            reference.set(`${a},${b},${c}`, value);
          } else {
            table.delete(a, b, c);
            reference.delete(`${a},${b},${c}`);
          }
          assert.equal(table.size, reference.size);
        }
        for (let a = 0; a <= 40; a++)
          for (let b = 0; b <= 6; b++)
            for (let c = -1; c <= 2; c++)
              assert.equal(table.get(a, b, c), reference.get(`${a},${b},${c}`) ?? -1);
      }),
      { numRuns: 200 },
    );
  });
});
