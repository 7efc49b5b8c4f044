import * as assert from 'node:assert/strict';
import { lineScore } from '../../../src/engine/search/evidence';
import { detached } from '../../../src/engine/util/generations';
import { heapUsedAfterCollecting } from '../../helpers/heap';

/** `count` texts of `size` characters, each made at run time (no two share their characters). */
function texts(count: number, size: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const line = `  configurationsettingsvalue${i} = lookupregistryentry(${i})\n`;
    return line.repeat(Math.ceil(size / line.length));
  });
}

/** Scores the first line of each of `count` texts; the texts are garbage once it returns. */
function scoreFirstLines(count: number, size: number): number {
  const weights = new Map([['lookupregistryentry', 1]]);
  let scored = 0;
  for (const text of texts(count, size)) scored += lineScore(text.split('\n')[0]!, weights);
  return scored;
}

describe('the line terms kept across searches', () => {
  it('keep the lines they were asked about, not the texts the lines were cut from', () => {
    const before = heapUsedAfterCollecting();
    // 200 texts of 100 KB: 20 MB if a kept line holds its text
    assert.equal(scoreFirstLines(200, 100_000), 200);
    const grown = heapUsedAfterCollecting() - before;
    assert.ok(grown < 5_000_000, `the kept lines hold ${grown} bytes`);
  });

  it('copies a text into a string of its own, equal to it', () => {
    for (const text of ['', 'a', 'a line of code longer than a short string'])
      assert.equal(detached(text), text);
  });
});
