import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { countTerms, indexTermCounts, indexTerms } from '../../../src/engine/text/tokenize';

describe('index term counts', () => {
  /** Text made of the pieces identifiers split at: cases, digits, joiners, non-ASCII letters. */
  const codeLike = fc
    .array(
      fc.constantFrom(
        'get',
        'User',
        'HTTP',
        'Server',
        'by_id',
        '$ref',
        '42',
        '7',
        'x',
        'é',
        'Ünïcode',
        '日本',
        ' ',
        '.',
        '(',
        '\n',
        '_',
        'parseURL2',
      ),
      { maxLength: 60 },
    )
    .map((pieces) => pieces.join(''));

  it('counts the terms indexTerms finds, keyed in the order they first come', () => {
    fc.assert(
      fc.property(fc.oneof(codeLike, fc.string(), fc.string({ unit: 'grapheme' })), (text) => {
        assert.deepEqual([...indexTermCounts(text)], [...countTerms(indexTerms(text))]);
      }),
      { numRuns: 2000 },
    );
  });

  it('counts a real source file as indexTerms and countTerms do', () => {
    const code = readFileSync(
      path.resolve(__dirname, '..', '..', 'fixtures', 'shop-ts', 'src', 'internal', 'Channel.ts'),
      'utf8',
    );
    const counts = indexTermCounts(code);
    assert.ok(counts.size > 20, 'the file has terms');
    assert.deepEqual([...counts], [...countTerms(indexTerms(code))]);
  });
});
