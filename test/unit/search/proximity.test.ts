import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import {
  closeWordsFirst,
  PROXIMITY_WINDOW,
  ProximityQuery,
  wordPlaces,
  wordPlacesCache,
  type QuestionWord,
} from '../../../src/engine/search/proximity';
import type { Hit } from '../../../src/engine/search/retrievers';
import { camelSnakeTokenize } from '../../../src/engine/text/tokenize';

/** "status code validation": three words of weights 1, 1 and 2 (total 4), validation also as `validate`. */
const query = new ProximityQuery([
  { forms: ['status'], weight: 1 },
  { forms: ['code'], weight: 1 },
  { forms: ['validation', 'validate'], weight: 2 },
]);
const filler = (words: number) => Array.from({ length: words }, (_, i) => `other${i}`).join(' ');
const hit = (chunkId: string): Hit => ({ chunkId, score: 1, evidence: 'test hit' });
const share = (text: string, of = query) => of.windowShare(wordPlaces(text));

/**
 * The window share as first written (before the word places), verbatim: every word of the text
 * in order. The word places must give exactly its scores.
 */
function windowShareOverEveryWord(words: readonly QuestionWord[], text: string): number {
  const wordOf = new Map<string, number>();
  const counted = words.filter((word) => word.weight > 0);
  counted.forEach(({ forms }, at) => forms.forEach((form) => wordOf.set(form, at)));
  const weights = counted.map((word) => word.weight);
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (weights.length < 2) return 0;
  const places: { at: number; word: number }[] = [];
  camelSnakeTokenize(text).forEach((token, at) => {
    const word = wordOf.get(token);
    if (word !== undefined) places.push({ at, word });
  });
  const inWindow = new Map<number, number>();
  let best = 0;
  let first = 0;
  for (const place of places) {
    inWindow.set(place.word, (inWindow.get(place.word) ?? 0) + 1);
    while (place.at - places[first]!.at >= PROXIMITY_WINDOW) {
      const leaving = places[first++]!.word;
      const left = inWindow.get(leaving)! - 1;
      if (left) inWindow.set(leaving, left);
      else inWindow.delete(leaving);
    }
    if (inWindow.size < 2) continue;
    let held = 0;
    for (const word of inWindow.keys()) held += weights[word]!;
    best = Math.max(best, held);
  }
  return best / total;
}

describe('term proximity', () => {
  it('scores the best window by the share of the question it holds', () => {
    assert.equal(share('if (validateStatus(status)) return'), 3 / 4);
    assert.equal(share('const code = status.code'), 2 / 4);
    assert.equal(share('validate the status code'), 1);
  });

  it('counts words said together, not scattered past the window', () => {
    const scattered = `status ${filler(PROXIMITY_WINDOW)} code ${filler(PROXIMITY_WINDOW)} validate`;
    assert.equal(share(scattered), 0);
    const near = `status ${filler(PROXIMITY_WINDOW - 2)} code`;
    assert.equal(share(near), 2 / 4);
  });

  it('counts nothing for one word alone, however often it repeats', () => {
    assert.equal(share('status status status'), 0);
    assert.equal(share(''), 0);
  });

  it('measures nothing for a question with fewer than two words the index holds', () => {
    const one = new ProximityQuery([
      { forms: ['status'], weight: 1 },
      { forms: ['nowhere'], weight: 0 },
    ]);
    assert.equal(one.measurable, false);
    assert.equal(share('status nowhere', one), 0);
    assert.equal(query.measurable, true);
  });

  it('puts the hits of the head holding close words first, ties and the rest kept in order', () => {
    const texts = new Map([
      ['scattered', `status ${filler(PROXIMITY_WINDOW)} code`],
      ['close', 'validateStatus(code)'],
      ['pair', 'status code'],
      ['also-pair', 'code status'],
      ['past-head', 'validate status code'],
    ]);
    const hits = ['scattered', 'no-text', 'pair', 'close', 'also-pair', 'past-head'].map(hit);
    const reordered = closeWordsFirst(hits, 5, query, (id) => {
      const text = texts.get(id);
      return text === undefined ? undefined : wordPlaces(text);
    });
    assert.deepEqual(
      reordered.map((h) => h.chunkId),
      ['close', 'pair', 'also-pair', 'scattered', 'no-text', 'past-head'],
    );
  });

  it('leaves the list as it is when the question cannot be measured', () => {
    const hits = ['b', 'a'].map(hit);
    const one = new ProximityQuery([{ forms: ['status'], weight: 1 }]);
    assert.deepEqual(
      closeWordsFirst(hits, 2, one, () => wordPlaces('status status')).map((h) => h.chunkId),
      ['b', 'a'],
    );
  });

  it('scores from word places exactly as over every word of the text', () => {
    const vocabulary = ['status', 'code', 'valid', 'validate', 'http', 'send', 'x', 'request'];
    const word = fc.constantFrom(...vocabulary);
    // identifiers joined in the ways code joins words, and separators of every kind between them
    const identifier = fc
      .tuple(fc.array(word, { minLength: 1, maxLength: 3 }), fc.constantFrom('camel', '_', ''))
      .map(([parts, joint]) =>
        joint === 'camel'
          ? parts.map((part, at) => (at ? part[0]!.toUpperCase() + part.slice(1) : part)).join('')
          : parts.join(joint),
      );
    const text = fc
      .array(fc.tuple(identifier, fc.constantFrom(' ', '.', '(', '\n', ' 42 ', ', ')), {
        maxLength: 60,
      })
      .map((pieces) => pieces.flat().join(''));
    const questionWords = fc.array(
      fc.record({
        forms: fc.uniqueArray(word, { minLength: 1, maxLength: 2 }),
        weight: fc.oneof(fc.constant(0), fc.double({ min: 0.01, max: 10, noNaN: true })),
      }),
      { maxLength: 4 },
    );
    fc.assert(
      fc.property(questionWords, text, (words, code) => {
        assert.equal(
          new ProximityQuery(words).windowShare(wordPlaces(code)),
          windowShareOverEveryWord(words, code),
        );
      }),
      { numRuns: 500 },
    );
  });
});

describe('word places kept across questions', () => {
  it('splits a text once while it stays the same', () => {
    const cache = wordPlacesCache();
    const first = cache.get('validate the status code', wordPlaces);
    assert.deepEqual(first.get('status'), [2]);
    assert.equal(cache.get('validate the status code', wordPlaces), first);
  });

  it('splits a chunk again when a save changed its text, never measuring old words', () => {
    const cache = wordPlacesCache();
    assert.equal(query.windowShare(cache.get('validate the status code', wordPlaces)), 1);
    const saved = `status ${filler(PROXIMITY_WINDOW)} code`;
    assert.equal(query.windowShare(cache.get(saved, wordPlaces)), 0);
    assert.equal(cache.get(saved, wordPlaces).get('validate'), undefined);
  });

  it('keeps texts by their characters, the one used last surviving a turn of generations', () => {
    const cache = wordPlacesCache(20);
    const a = cache.get('status code', wordPlaces); // 11 characters
    const b = cache.get('code', wordPlaces); // 15 in all
    cache.get('validate the', wordPlaces); // 27: a new generation begins with it, a and b the old
    // a, found in the old generation, moves to a newer one: 12 + 11 is over 20, so another turn
    // begins and the generation still holding b is dropped
    assert.equal(cache.get('status code', wordPlaces), a);
    assert.notEqual(cache.get('code', wordPlaces), b, 'b was dropped and split again');
  });
});
