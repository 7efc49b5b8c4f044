import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import ranks from 'js-tiktoken/ranks/cl100k_base';
import fc from 'fast-check';
import {
  linesNotShown,
  numberedLines,
  storedItemTokens,
  titledTextTokens,
} from '../../../src/engine/search/context';
import { TextsFile, type CountedText } from '../../../src/engine/store/texts';
import { headerOf, LONGEST_COUNTED_LINE } from '../../../src/engine/text/text-tokens';
import { unwrap } from '../../../src/engine/util/result';
import { Scratch } from '../../helpers/workspace';

/**
 * The token counts the texts file keeps beside each text, against js-tiktoken encoding the very
 * text the context shows: any run of a text's lines, numbered, whole or cut with a marker, and a
 * text's first lines under a title.
 */
const tiktoken = new Tiktoken(ranks);
const encoded = (text: string) => tiktoken.encode(text, [], []).length;

/** Code-like texts: lines of pieces, blank lines, line breaks of both kinds, other scripts. */
const text = fc
  .array(
    fc.constantFrom(
      ...'abcXYZ_019 \t\r\'"(){}[]<>|!=.,;:+-*/ëé日本語🎉ßŁ\u00a0\u2028…'.split(''),
      '\n',
      '\n\n',
      '\r\n',
      '    ',
      'return',
      "'s",
      '<|endoftext|>',
    ),
    { maxLength: 160 },
  )
  .map((parts) => parts.join(''));

/** A title as the context writes them: it ends in a bracket. */
const title = fc
  .tuple(fc.string({ maxLength: 20 }), fc.constantFrom(')', ', surroundings)', '日)', ' )'))
  .map(([words, end]) => `### ${words}${end}`);

describe('token counts kept with the stored texts', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  /** `texts` written to a texts file, reopened, and read back with their counts. */
  function stored(texts: readonly string[]): CountedText[] {
    const file = path.join(scratch.folder(), 'texts-0.bin');
    const ids = texts.map((_, i) => `f.py::chunk${i}`);
    const writer = TextsFile.create(file);
    writer.write(
      [],
      texts.map((body, i) => ({ id: ids[i]!, text: body })),
    );
    const catalog = new Map(ids.map((id) => [id, { id }]));
    const reader = TextsFile.load(file, writer.bytes, catalog, false);
    try {
      return ids.map((id) => unwrap(reader.readCounted(id))!);
    } finally {
      writer.close();
      reader.close();
    }
  }

  it('sum any run of a text’s lines as counting the lines numbered does', () => {
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.nat(),
        (texts, a, b) => {
          for (const counted of stored(texts)) {
            const lines = counted.text.split('\n');
            const sums = counted.lineSums!;
            assert.equal(sums.length, lines.length + 1);
            const from = a % (lines.length + 1);
            const to = from + (b % (lines.length + 1 - from));
            // each line as a numbered line shows it, the number's pieces between them
            const run = lines.slice(from, to).reduce((sum, line) => sum + encoded(` ${line}\n`), 0);
            assert.equal(sums[to]! - sums[from]!, run);
            assert.equal(counted.headerTokens, encoded(headerOf(counted.text)));
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('count a numbered run of lines, whole or cut with a marker, as encoding it does', () => {
    fc.assert(
      fc.property(
        text,
        title,
        fc.nat(),
        fc.nat(),
        fc.integer({ min: 1, max: 99_999 }),
        fc.integer({ min: -3, max: 5000 }),
        (body, heading, a, b, firstLine, omitted) => {
          const [counted] = stored([body]);
          const all = counted!.text.split('\n');
          const from = a % all.length;
          const to = from + 1 + (b % (all.length - from));
          const lines = all
            .slice(from, to)
            .map((line, i) => ({ line: firstLine + i, text: line, at: from + i }));
          const width = String(firstLine + lines.length - 1).length;
          const numbered = `${heading}\n${numberedLines(lines, width)}`;
          assert.equal(storedItemTokens(heading, lines, width, counted!), encoded(numbered));
          const marker = linesNotShown(omitted);
          assert.equal(
            storedItemTokens(heading, lines, width, counted!, marker),
            encoded(`${numbered}\n${marker}`),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('count a text’s first lines under a title as encoding them does', () => {
    fc.assert(
      fc.property(text, title, (body, heading) => {
        const [counted] = stored([body]);
        const header = headerOf(counted!.text);
        assert.equal(
          titledTextTokens(heading, header, counted!.headerTokens),
          encoded(`${heading}\n${header}`),
        );
      }),
      { numRuns: 300 },
    );
  });

  it('leave lines that are not one run of the text to be counted one by one', () => {
    const [counted] = stored(['a\nb\nc']);
    const gap = [
      { line: 1, text: 'a', at: 0 },
      { line: 2, text: 'c', at: 2 },
    ];
    assert.equal(storedItemTokens('t)', gap, 1, counted!), null);
  });

  it('leave a text with a line too long to count to be counted when shown', () => {
    const long = 'x'.repeat(LONGEST_COUNTED_LINE + 1);
    const [counted, fits] = stored([`a\n${long}\nb`, `a\n${long.slice(1)}\nb`]);
    assert.equal(counted!.lineSums, null);
    assert.equal(counted!.headerTokens, null);
    assert.equal(storedItemTokens('t)', [{ line: 1, text: 'a', at: 0 }], 1, counted!), null);
    assert.equal(titledTextTokens('t)', 'a', counted!.headerTokens), encoded('t)\na'));
    assert.equal(fits!.lineSums?.length, 4);
  });
});
