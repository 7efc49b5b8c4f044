import cl100k from 'js-tiktoken/ranks/cl100k_base';
import { KeptTextCounts, TokenCounter } from './token-count';

/**
 * Token counts with the cl100k encoding (what the search's context budget is counted in), and
 * the counts a chunk's text carries in the store so that a search counts no code lines: each
 * line's numbered form and the text's first lines, as the context shows them.
 */

let counter: TokenCounter | undefined;

/** The cl100k counter, its ranks read once, on first use. */
export function cl100kCounter(): TokenCounter {
  counter ??= new TokenCounter(cl100k);
  return counter;
}

/** Tokens per piece of text, kept across calls: code is made of the same few pieces. */
const pieceTokens = new KeptTextCounts(65_536, 1 << 20);

/**
 * The tokens of `text` with the cl100k encoding. The encoding first cuts text into pieces by its
 * pattern and encodes each piece on its own, so the count of a text is the sum of its pieces'
 * counts: pieces are counted once and kept, and later texts only look them up.
 */
export function countText(text: string): number {
  const counter = cl100kCounter();
  let total = 0;
  // special-token names are ordinary text here, as in the whole-text encoding
  const countPiece = (piece: string) => counter.countPiece(piece);
  counter.eachPiece(text, (start, end) => {
    total += pieceTokens.count(text, start, end, countPiece);
  });
  return total;
}

/**
 * Tokens of code lines as a numbered line shows them (` ${line}\n`), kept across calls: code
 * repeats whole lines (closing brackets, blank lines, `return` statements), and a kept line is
 * found without cutting it into pieces.
 */
const numberedLineTokens = new KeptTextCounts(65_536, 1_000_000);

/** The tokens of ` ${line}\n`, `line` being `text.slice(start, end)`. */
export function numberedLineTextTokens(text: string, start: number, end: number): number {
  return numberedLineTokens.count(text, start, end, (line) => countText(` ${line}\n`));
}

/** How many first lines of a text stand for it as the surroundings of what it holds. */
export const PARENT_LINES = 10;

/** A parent's first lines: a class's header and docstring, a file's imports, a folder's summary. */
export function headerOf(body: string): string {
  // the end of the first PARENT_LINES lines, found without splitting a long file's whole text
  let end = -1;
  for (let line = 0; line < PARENT_LINES; line++) {
    end = body.indexOf('\n', end + 1);
    if (end < 0) return body;
  }
  return `${body.slice(0, end)}\n…`;
}

/** The counts a stored text carries (see textTokens). */
export interface TextTokens {
  /** Per line of `text.split('\n')`, the tokens of ` ${line}\n`: the line as a numbered line shows it. */
  readonly lineTokens: readonly number[];
  /** The tokens of `headerOf(text)`. */
  readonly headerTokens: number;
}

/**
 * Lines longer than this leave a text uncounted: a piece's count takes time growing with the
 * square of its length, and code lines are far shorter (minified files are not indexed).
 */
export const LONGEST_COUNTED_LINE = 1000;

/**
 * What a search would count of `text` to fit it to its budget, counted once when the text is
 * stored; null when a line is longer than LONGEST_COUNTED_LINE (the search counts what it shows of
 * such a text itself). A numbered line (`  12 | text`) is counted as its number and ` ${line}\n`,
 * no piece of the encoding crossing between them (see search/context), so any run of a text's
 * lines is counted by adding up its lines'.
 */
export function textTokens(text: string): TextTokens | null {
  const lineTokens: number[] = [];
  let start = 0;
  for (;;) {
    const next = text.indexOf('\n', start);
    const end = next < 0 ? text.length : next;
    if (end - start > LONGEST_COUNTED_LINE) return null;
    lineTokens.push(numberedLineTextTokens(text, start, end));
    if (next < 0) break;
    start = next + 1;
  }
  return { lineTokens, headerTokens: countText(headerOf(text)) };
}
