import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { Generations } from '../../../src/engine/util/generations';

describe('a memo kept in two generations', () => {
  it('gives what the function gives, whatever keys come and go', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 300 }),
        fc.integer({ min: 1, max: 12 }),
        (keys, capacity) => {
          const memo = new Generations<number, string>(capacity);
          for (const key of keys)
            assert.equal(
              memo.get(key, (k) => `value ${k}`),
              `value ${key}`,
            );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('holds at most two generations of its capacity, counted in the units given', () => {
    const memo = new Generations<string, number>(10, (key) => key.length);
    let computed = 0;
    const count = (key: string) => {
      computed++;
      return key.length;
    };
    for (const key of ['aaaa', 'bbbb', 'cccc', 'dddd', 'eeee']) memo.get(key, count);
    assert.equal(computed, 5);
    // 'aaaa' and 'bbbb' filled the first generation, 'cccc' and 'dddd' the second: 'aaaa' is gone
    memo.get('dddd', count);
    memo.get('cccc', count);
    assert.equal(computed, 5);
    memo.get('aaaa', count);
    assert.equal(computed, 6);
  });
});
