import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { PieceCache } from '../../src/engine/embed/piece-cache';
import { fnv1a } from '../../src/engine/util/hash';

describe('piece cache', () => {
  it('finds what a map of the pieces finds, from anywhere in a text, through growth and clearing', () => {
    const piece = fc.string({ minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(piece, fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 })), {
          maxLength: 300,
        }),
        fc.integer({ min: 1, max: 400 }),
        (uses, limit) => {
          const cache = new PieceCache(limit);
          const reference = new Map<string, readonly number[]>();
          uses.forEach(([word, before, after], at) => {
            const text = `${before}${word}${after}`;
            const found = cache.find(text, before.length, before.length + word.length, fnv1a(word));
            assert.equal(found, reference.get(word), `"${word}" in "${text}"`);
            if (found) return;
            if (reference.size >= limit) reference.clear();
            const ids = [at, word.length];
            cache.keep(word, fnv1a(word), ids);
            reference.set(word, ids);
            assert.equal(cache.size, reference.size);
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('tells apart pieces whose hashes are the same', () => {
    const cache = new PieceCache(100);
    const ids = { ab: [1], ba: [2], abc: [3] };
    for (const [piece, held] of Object.entries(ids)) cache.keep(piece, 7, held);
    assert.equal(cache.find('xxabc', 2, 4, 7), ids.ab);
    assert.equal(cache.find('xxabc', 2, 5, 7), ids.abc);
    assert.equal(cache.find('ba', 0, 2, 7), ids.ba);
    assert.equal(cache.find('bb', 0, 2, 7), undefined);
    assert.equal(cache.find('ab', 0, 2, 8), undefined, 'another hash is another piece');
  });
});
