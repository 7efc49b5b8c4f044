import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { SlotsByKey } from '../../../src/engine/graph/slots-by-key';

describe('slots by key', () => {
  it('holds what a map of sets holds, in the same order, through any adds and flushed removals', () => {
    const operation = fc.record({
      kind: fc.constantFrom('add', 'add', 'remove', 'flush'),
      key: fc.constantFrom(0, 1, 2),
      // enough slots for groups whose removals sit before, among and after the slots kept
      slot: fc.integer({ min: 0, max: 9 }),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 160, size: 'max' }), (operations) => {
        const compact = new SlotsByKey();
        const reference = new Map<number, Set<number>>();
        const leaving: [number, number][] = [];
        for (const { kind, key, slot } of operations) {
          if (kind === 'add') {
            // the index's contract: a slot is added to a key once until removed, or again at once
            const group = reference.get(key);
            if (group?.has(slot) && [...group].pop() !== slot) continue;
            if (leaving.some(([k, s]) => k === key && s === slot)) continue;
            compact.add(key, slot);
            if (!group) reference.set(key, new Set([slot]));
            else group.add(slot);
          } else if (kind === 'remove') {
            compact.remove(key, slot);
            leaving.push([key, slot]);
          } else {
            compact.flush();
            for (const [k, s] of leaving.splice(0)) {
              reference.get(k)?.delete(s);
              if (reference.get(k)?.size === 0) reference.delete(k);
            }
          }
          for (const check of [0, 1, 2, 7, undefined]) {
            const expected = check === undefined ? [] : [...(reference.get(check) ?? [])];
            assert.deepEqual([...compact.get(check)], expected);
            assert.equal(compact.count(check), expected.length);
          }
        }
      }),
      { numRuns: 500 },
    );
  });

  it('keeps a slot added twice in a row once', () => {
    const index = new SlotsByKey();
    index.add(4, 9);
    index.add(4, 9);
    index.add(4, 2);
    index.add(4, 2);
    assert.deepEqual(index.get(4), [9, 2]);
  });
});
