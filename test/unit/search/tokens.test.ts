import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import ranks from 'js-tiktoken/ranks/cl100k_base';
import fc from 'fast-check';
import { countTokens } from '../../../src/engine/search/context';

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
});
