import { strict as assert } from 'node:assert';
import { keepLeaders } from '../../../src/engine/search/fusion';

describe('keepLeaders', () => {
  it('places leaders ranked too low right after the first hits, in their order', () => {
    assert.deepEqual(keepLeaders(['a', 'b', 'c', 'd', 'e', 'f', 'x', 'y'], ['y', 'x'], 2), [
      'a',
      'b',
      'y',
      'x',
      'c',
      'd',
      'e',
      'f',
    ]);
  });

  it('leaves a leader already near the top where it is', () => {
    assert.deepEqual(keepLeaders(['a', 'b', 'c', 'x', 'd', 'e', 'y'], ['x', 'y'], 2), [
      'a',
      'b',
      'y',
      'c',
      'x',
      'd',
      'e',
    ]);
    assert.deepEqual(keepLeaders(['x', 'a', 'b'], ['x'], 2), ['x', 'a', 'b']);
  });

  it('adds a leader the order does not hold, once', () => {
    assert.deepEqual(keepLeaders(['a', 'b', 'c', 'd'], ['z', 'z'], 1), ['a', 'z', 'b', 'c', 'd']);
    assert.deepEqual(keepLeaders([], ['z'], 3), ['z']);
  });
});
