import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { IntLists } from '../../../src/engine/graph/int-lists';

describe('int lists', () => {
  it('gives back the list each slot was given, through replacements, clears and trims', () => {
    const operation = fc.record({
      kind: fc.constantFrom('set', 'set', 'clear', 'trim'),
      slot: fc.integer({ min: 0, max: 300 }),
      values: fc.array(fc.integer({ min: -5, max: 1_000_000 }), { maxLength: 90, size: 'max' }),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 120, size: 'max' }), (operations) => {
        const lists = new IntLists();
        const reference = new Map<number, number[]>();
        for (const { kind, slot, values } of operations) {
          if (kind === 'set') {
            lists.set(slot, values);
            if (values.length) reference.set(slot, values);
            else reference.delete(slot);
          } else if (kind === 'clear') {
            lists.clear(slot);
            reference.delete(slot);
          } else lists.trim();
          for (let check = 0; check <= 300; check++) {
            assert.deepEqual([...lists.get(check)], reference.get(check) ?? []);
            assert.equal(lists.has(check), reference.has(check));
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});
