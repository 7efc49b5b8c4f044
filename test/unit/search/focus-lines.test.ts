import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import {
  lineScore,
  lineScores,
  linesThatCanScore,
  type CodeLine,
} from '../../../src/engine/search/evidence';
import { indexTerms } from '../../../src/engine/text/tokenize';
import { FOCUS_SHARE, focusLines } from '../../../src/engine/search/shaping';

/** The focus lines as first written: every line scored into an object, filtered, sorted. */
function focusLinesByObjects(
  lines: readonly CodeLine[],
  evidence: readonly number[],
  weights: ReadonlyMap<string, number>,
  floor: number,
  share: number,
): number[] {
  const scored = lines
    .map(({ line, text }) => ({ line, score: lineScore(text, weights) }))
    .filter((entry) => entry.score > 0);
  const best = Math.max(0, ...scored.map((entry) => entry.score));
  const strong = scored
    .filter((entry) => entry.score >= Math.max(best * share, floor))
    .sort((a, b) => b.score - a.score);
  return [...new Set([...evidence, ...strong.map((entry) => entry.line)])];
}

describe('line scores', () => {
  it('weigh the distinct terms of a line, for lines asked again after many others', () => {
    const weights = new Map([
      ['retry', 1.5],
      ['limit', 0.25],
      ['line', 0.125],
    ]);
    const direct = (text: string) =>
      [...new Set(indexTerms(text))].reduce((sum, term) => sum + (weights.get(term) ?? 0), 0);
    // more lines than the kept generations hold, each asked twice, the first ones again at the end
    const lines = Array.from(
      { length: 60_000 },
      (_, i) => `retry_limit(line${i}) + retry ${i % 3 ? 'limit' : ''}`,
    );
    for (const text of [...lines, ...lines.slice(0, 30_000), ...lines.slice(0, 100)])
      assert.equal(lineScore(text, weights), direct(text), text);
  });
});

describe('lines that can score', () => {
  // identifiers, joiners, digits, and letters whose lowercase is longer (İ), ASCII (the Kelvin
  // sign), context-dependent (Σ) or not a letter at all (a combining dot)
  const pieces = ['get', 'User', 'BY', 'id', 'Http', '_', '$', '42', '7', ' ', '.', '(', 'Σ', 'ς'];
  const unusual = ['İ', '\u212a', 'ß', '\u0307', 'Ω', 'é', '\n'];
  const text = fc
    .array(fc.constantFrom(...pieces, ...unusual), { maxLength: 12 })
    .map((parts) => parts.join(''));

  it('score as lineScore does, the lines they rule out scoring 0', () => {
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 12 }),
        fc.array(fc.oneof(text, fc.constantFrom('getuserbyid', 'user', 'http', '42', '')), {
          maxLength: 5,
        }),
        fc.array(fc.integer({ min: 0, max: 11 }), { maxLength: 4 }),
        (texts, extraTerms, termsOfLines) => {
          const lines = texts.map((content, i) => ({ line: i + 1, text: content }));
          // the weighted terms: some of the lines' own terms, and others
          const terms = [
            ...termsOfLines.flatMap((at) => indexTerms(texts[at] ?? '')),
            ...extraTerms,
          ];
          const weights = new Map(terms.map((term, i) => [term, 0.5 + i]));
          const scorable = linesThatCanScore(lines, weights);
          lines.forEach(({ text: content }, i) => {
            if (scorable && !scorable[i]) assert.equal(lineScore(content, weights), 0, content);
          });
          assert.deepEqual(
            [...lineScores(lines, weights)],
            lines.map(({ text: content }) => lineScore(content, weights)),
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('leave out the lines holding none of the terms, and every line for a term not in ASCII', () => {
    const lines = [
      'const retry_limit = 3;',
      'return value;',
      'RetryLimit.parse(x)',
      '// Ωmega',
    ].map((content, i) => ({ line: i + 1, text: content }));
    assert.deepEqual([...linesThatCanScore(lines, new Map([['retrylimit', 1]]))!], [1, 0, 1, 0]);
    assert.equal(linesThatCanScore(lines, new Map([['ωmega', 1]])), null);
  });
});

describe('focus lines of a shaped chunk', () => {
  const words = ['retry', 'limit', 'timeout', 'config', 'value', 'other'];

  it('are the evidence lines, then the strong lines best first (ties in line order)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.constantFrom(...words), { maxLength: 6 }), { maxLength: 40 }),
        fc.array(fc.tuple(fc.constantFrom(...words), fc.integer({ min: 0, max: 8 }))),
        fc.array(fc.integer({ min: 1, max: 45 }), { maxLength: 4 }),
        fc.integer({ min: 0, max: 12 }),
        (texts, weighted, evidence, floor) => {
          const lines = texts.map((terms, i) => ({ line: i + 1, text: terms.join(' ') }));
          const weights = new Map(weighted);
          assert.deepEqual(
            focusLines(lines, evidence, weights, floor),
            focusLinesByObjects(lines, evidence, weights, floor, FOCUS_SHARE),
          );
        },
      ),
    );
  });
});
