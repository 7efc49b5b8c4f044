import { strict as assert } from 'node:assert';
import {
  closeWordsFirst,
  PROXIMITY_WINDOW,
  ProximityQuery,
} from '../../../src/engine/search/proximity';
import type { Hit } from '../../../src/engine/search/retrievers';

/** "status code validation": three words of weights 1, 1 and 2 (total 4), validation also as `validate`. */
const query = new ProximityQuery([
  { forms: ['status'], weight: 1 },
  { forms: ['code'], weight: 1 },
  { forms: ['validation', 'validate'], weight: 2 },
]);
const filler = (words: number) => Array.from({ length: words }, (_, i) => `other${i}`).join(' ');
const hit = (chunkId: string): Hit => ({ chunkId, score: 1, evidence: 'test hit' });

describe('term proximity', () => {
  it('scores the best window by the share of the question it holds', () => {
    assert.equal(query.windowShare('if (validateStatus(status)) return'), 3 / 4);
    assert.equal(query.windowShare('const code = status.code'), 2 / 4);
    assert.equal(query.windowShare('validate the status code'), 1);
  });

  it('counts words said together, not scattered past the window', () => {
    const scattered = `status ${filler(PROXIMITY_WINDOW)} code ${filler(PROXIMITY_WINDOW)} validate`;
    assert.equal(query.windowShare(scattered), 0);
    const near = `status ${filler(PROXIMITY_WINDOW - 2)} code`;
    assert.equal(query.windowShare(near), 2 / 4);
  });

  it('counts nothing for one word alone, however often it repeats', () => {
    assert.equal(query.windowShare('status status status'), 0);
    assert.equal(query.windowShare(''), 0);
  });

  it('measures nothing for a question with fewer than two words the index holds', () => {
    const one = new ProximityQuery([
      { forms: ['status'], weight: 1 },
      { forms: ['nowhere'], weight: 0 },
    ]);
    assert.equal(one.measurable, false);
    assert.equal(one.windowShare('status nowhere'), 0);
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
    const reordered = closeWordsFirst(hits, 5, query, (id) => texts.get(id));
    assert.deepEqual(
      reordered.map((h) => h.chunkId),
      ['close', 'pair', 'also-pair', 'scattered', 'no-text', 'past-head'],
    );
  });

  it('leaves the list as it is when the question cannot be measured', () => {
    const hits = ['b', 'a'].map(hit);
    const one = new ProximityQuery([{ forms: ['status'], weight: 1 }]);
    assert.deepEqual(
      closeWordsFirst(hits, 2, one, () => 'status status').map((h) => h.chunkId),
      ['b', 'a'],
    );
  });
});
