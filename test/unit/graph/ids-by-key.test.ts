import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { IdsByKey } from '../../../src/engine/graph/ids-by-key';

describe('ids by key', () => {
  it('holds what a map of sets holds, in the same order, through any adds and removes', () => {
    const operation = fc.record({
      add: fc.boolean(),
      key: fc.constantFrom('f', 'g', 'h'),
      id: fc.constantFrom('a', 'b', 'c', 'd'),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 60 }), (operations) => {
        const compact = new IdsByKey();
        const reference = new Map<string, Set<string>>();
        for (const { add, key, id } of operations) {
          if (add) {
            compact.add(key, id);
            if (!reference.has(key)) reference.set(key, new Set());
            reference.get(key)!.add(id);
          } else {
            compact.remove(key, id);
            reference.get(key)?.delete(id);
            if (reference.get(key)?.size === 0) reference.delete(key);
          }
          for (const name of ['f', 'g', 'h', 'missing']) {
            assert.deepEqual([...compact.get(name)], [...(reference.get(name) ?? [])]);
            assert.equal(compact.count(name), reference.get(name)?.size ?? 0);
          }
        }
      }),
      { numRuns: 500 },
    );
  });
});
