import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import ranks from 'js-tiktoken/ranks/cl100k_base';
import fc from 'fast-check';
import { countTokens, numberedItemTokens, numberedLines } from '../../../src/engine/search/context';
import { asciiPieces, CL100K_PATTERN } from '../../../src/engine/search/token-count';

describe('token counting', () => {
  it('counts exactly what encoding the whole text counts, piece by piece', async () => {
    const tiktoken = new Tiktoken(ranks);
    const sources = ['src/engine/search/context.ts', 'README.md'].map((file) =>
      readFileSync(path.resolve(file), 'utf8'),
    );
    const odd = "it's <|endoftext|> ünïcödé 日本語 \r\n\t  x = 12345678;\n\n\n    '''doc'''";
    for (const source of [...sources, odd]) {
      const text = `${source}\n${odd}`;
      for (let start = 0; start < text.length; start += 701) {
        const part = text.slice(start, start + 2500);
        assert.equal(await countTokens(part), tiktoken.encode(part, [], []).length);
      }
    }
  });

  it('counts any text as js-tiktoken encodes it', async () => {
    const tiktoken = new Tiktoken(ranks);
    // code-like characters, letters of several scripts, emoji, whitespace runs and line breaks
    const alphabet = fc.constantFrom(
      ...'abcXYZ_019 \t\n\r\'"(){}[]<>|!=.,;:+-*/ëé日本語🎉ßŁ\u00a0\u2028'.split(''),
      'the',
      '    ',
      '\n\n',
      'function',
      '<|endoftext|>',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(alphabet, { maxLength: 120 }),
        fc.string(),
        async (parts, extra) => {
          const text = parts.join('') + extra;
          assert.equal(await countTokens(text), tiktoken.encode(text, [], []).length);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('counts a titled item of numbered lines line by line as counting it whole does', async () => {
    // a code line never holds a line break; anything else may be in it
    const piece = fc.constantFrom(
      ...'abcXYZ_019 \t\r\'"(){}[]<>|!=.,;:+-*/ëé日本語🎉ßŁ\u00a0\u2028'.split(''),
      '    ',
      'return',
      "'s",
      '<|endoftext|>',
    );
    const text = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(''));
    await fc.assert(
      fc.asyncProperty(
        fc.string(),
        fc.array(fc.record({ line: fc.integer({ min: 1, max: 123_456 }), text }), {
          maxLength: 12,
        }),
        fc.integer({ min: 1, max: 6 }),
        async (title, lines, width) => {
          const whole = await countTokens(`${title}\n${numberedLines(lines, width)}`);
          // twice: counted, then from the kept line counts
          assert.equal(await numberedItemTokens(title, lines, width), whole);
          assert.equal(await numberedItemTokens(title, lines, width), whole);
        },
      ),
      { numRuns: 400 },
    );
  });
});

describe("cl100k's pieces of ASCII text", () => {
  const pattern = new RegExp(ranks.pat_str, 'gu');
  const byPattern = (text: string) => [...text.matchAll(pattern)].map((match) => match[0]);
  const byHand = (text: string) => {
    const pieces: string[] = [];
    asciiPieces(text, (start, end) => pieces.push(text.slice(start, end)));
    return pieces;
  };

  it('is the pattern js-tiktoken gives', () => {
    assert.equal(ranks.pat_str, CL100K_PATTERN);
  });

  it('are the pieces the pattern cuts, for any ASCII text', () => {
    // every kind the pattern tells apart, contractions in every case, runs of each
    const alphabet = fc.constantFrom(
      ...'aZq09 \t\n\r\u000b\u000c\'"(){}|!=.,;:+-*/_$#'.split(''),
      "'s",
      "'T",
      "'re",
      "'vE",
      "'Ll",
      "'d",
      "'M",
      "'x",
      '    ',
      '\n\n',
      ' \n ',
      '\r\n',
      '1234567',
      'function',
      ' |',
      '  12 |',
    );
    fc.assert(
      fc.property(
        fc.array(alphabet, { maxLength: 80 }),
        fc.string({ unit: 'binary-ascii', maxLength: 40 }),
        (parts, extra) => {
          const text = parts.join('') + extra;
          assert.deepEqual(byHand(text), byPattern(text));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('are the pattern pieces of real source files', () => {
    for (const file of ['src/engine/search/context.ts', 'src/engine/search/token-count.ts']) {
      // the hand-cut pieces are for ASCII text only: other characters become ones that are
      const source = readFileSync(path.resolve(file), 'utf8').replace(/[^\x00-\x7f]/g, '~');
      assert.deepEqual(byHand(source), byPattern(source));
    }
  });
});
