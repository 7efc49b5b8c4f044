import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import ranks from 'js-tiktoken/ranks/cl100k_base';
import fc from 'fast-check';
import {
  countTokens,
  cutItemTokens,
  evidenceTokensAtLeast,
  ITEM_CAP,
  linesNotShown,
  linesToKeep,
  numberedItemTokens,
  numberedLines,
} from '../../../src/engine/search/context';
import {
  asciiPieces,
  CL100K_PATTERN,
  KeptTextCounts,
  TokenCounter,
} from '../../../src/engine/search/token-count';

/**
 * Up to 12 numbered code lines of random pieces, `extra` characters among them. A code line never
 * holds a line break; anything else may be in it.
 */
function numberedCodeLines(extra: string, minLength: number) {
  const piece = fc.constantFrom(
    ...`abcXYZ_019 \t\r'"(){}[]<>|!=.,;:+-*/ëé日本語🎉ßŁ\u00a0\u2028${extra}`.split(''),
    '    ',
    'return',
    "'s",
    '<|endoftext|>',
  );
  const text = fc.array(piece, { maxLength: 30 }).map((parts) => parts.join(''));
  return fc.array(fc.record({ line: fc.integer({ min: 1, max: 123_456 }), text }), {
    minLength,
    maxLength: 12,
  });
}

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

  it('merges a long piece pair by pair as js-tiktoken does', () => {
    const tiktoken = new Tiktoken(ranks);
    const counter = new TokenCounter(ranks);
    // long runs of a few letters or signs: many merges, many pairs of equal rank
    const piece = fc.oneof(
      fc.array(fc.constantFrom('a', 'b', 'e', 'r', 's', 't'), { minLength: 2, maxLength: 200 }),
      fc.array(fc.constantFrom('=', '-', '*', '/', '#', '<', '>'), {
        minLength: 2,
        maxLength: 200,
      }),
      fc.array(fc.constantFrom('é', '日', 'ß', 'x'), { minLength: 2, maxLength: 60 }),
    );
    fc.assert(
      fc.property(piece, (parts) => {
        const text = parts.join('');
        // each of these is one piece of the pattern, or a few: count each as the encoder cuts it
        let total = 0;
        for (const match of text.matchAll(counter.pieces)) total += counter.countPiece(match[0]);
        assert.equal(total, tiktoken.encode(text, [], []).length);
      }),
      { numRuns: 400 },
    );
  });

  it('counts an item cut short line by line as counting it whole does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string(),
        numberedCodeLines('…', 1),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: -3, max: 5000 }),
        async (title, lines, width, omitted) => {
          const marker = linesNotShown(omitted);
          const whole = await countTokens(`${title}\n${numberedLines(lines, width)}\n${marker}`);
          // twice: counted, then from the kept line counts
          assert.equal(await cutItemTokens(title, lines, width, marker), whole);
          assert.equal(await cutItemTokens(title, lines, width, marker), whole);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('counts a titled item of numbered lines line by line as counting it whole does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string(),
        numberedCodeLines('', 0),
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

describe('text counts kept across questions', () => {
  it('give each piece the count of the piece itself, counting it once while it is kept', () => {
    const piece = fc
      .array(fc.constantFrom(...'ab_ Zé日🎉\n'.split('')), { minLength: 1, maxLength: 4 })
      .map((parts) => parts.join(''));
    const context = fc.string({ maxLength: 3 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(context, piece, context, context), { maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 40 }),
        (lookups, capacity, characters) => {
          const kept = new KeptTextCounts(capacity, characters);
          let counted = 0;
          // a count that tells most pieces apart, and is 0 for some
          const count = (text: string) => {
            counted++;
            return [...text].reduce((sum, char) => sum * 31 + char.codePointAt(0)!, 7) % 5;
          };
          const expected = (text: string) => {
            const value = count(text);
            counted--;
            return value;
          };
          for (const [before, text, after, elsewhere] of lookups) {
            const first = `${before}${text}${after}`;
            assert.equal(
              kept.count(first, before.length, before.length + text.length, count),
              expected(text),
            );
            // the same piece at another place of another text, right after: counted no more
            const asked = counted;
            const again = `${elsewhere}${text}`;
            assert.equal(kept.count(again, elsewhere.length, again.length, count), expected(text));
            assert.equal(counted, asked, `${JSON.stringify(text)} was counted again`);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the fewest tokens an evidence item can take', () => {
  /** An item's tokens as the context counts them: whole, or cut to ITEM_CAP with a marker. */
  async function itemTokens(title: string, lines: { line: number; text: string }[], width: number) {
    const tokens = await numberedItemTokens(title, lines, width);
    if (tokens <= ITEM_CAP) return tokens;
    const numbered = numberedLines(lines, width).split('\n');
    const keep = linesToKeep(numbered.length, tokens, ITEM_CAP, 3);
    const body = `${numbered.slice(0, keep).join('\n')}\n${linesNotShown(numbered.length - keep)}`;
    return countTokens(`${title}\n${body}`);
  }

  it('are never more than it takes, cut or whole', async () => {
    const piece = fc.constantFrom(
      ...'aZ_09 \t\r\'"(){}|!=.,;ëé日本🎉\u00a0'.split(''),
      '',
      '    ',
      'return',
      'x'.repeat(200),
      '日本語'.repeat(40),
      '1234567890'.repeat(8),
    );
    const text = fc.array(piece, { maxLength: 20 }).map((parts) => parts.join(''));
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 60 }),
        fc.array(text, { maxLength: 160 }),
        fc.integer({ min: 1, max: 90_000 }),
        async (title, texts, first) => {
          const lines = texts.map((line, i) => ({ line: first + i, text: line }));
          const width = String(first + Math.max(0, texts.length - 1)).length;
          const least = evidenceTokensAtLeast(title, { lines, width });
          const counted = await itemTokens(title, lines, width);
          assert.ok(least <= counted, `${least} > ${counted}`);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('are never more than an item cut short after lines of next to nothing takes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 400 }),
        fc.integer({ min: 1, max: 80 }),
        fc.constantFrom('', ' ', 'x', ';'),
        async (short, long, text) => {
          const texts = [
            ...Array<string>(short).fill(text),
            ...Array<string>(long).fill('日本語'.repeat(40)),
          ];
          const lines = texts.map((line, i) => ({ line: 1 + i, text: line }));
          const width = String(texts.length).length;
          const least = evidenceTokensAtLeast('### a.py:1-2 (function f)', { lines, width });
          const counted = await itemTokens('### a.py:1-2 (function f)', lines, width);
          assert.ok(least <= counted, `${least} > ${counted}`);
        },
      ),
      { numRuns: 60 },
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
      const source = readFileSync(path.resolve(file), 'utf8').replace(/[^\p{ASCII}]/gu, '~');
      assert.deepEqual(byHand(source), byPattern(source));
    }
  });
});
