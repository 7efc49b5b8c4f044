import { MAX_SEGMENT_LINES_IN_CONTENT, MODULE_CODE_MARKER } from '../index/chunks';
import type { ChunkMeta } from '../store/tables';
import { indexTerms } from '../text/tokenize';
import { detached, Generations } from '../util/generations';

/**
 * Evidence at the level of lines: which lines of a chunk carry the words of the question or the
 * text of a quoted error message. Messages are compared by word trigrams, so a message the code
 * builds by concatenation ('Route.' + method + '() requires a callback …') still matches.
 */
export type Trigrams = ReadonlySet<string>;

/** A line of code with its 1-based line number in the file. */
export interface CodeLine {
  readonly line: number;
  readonly text: string;
}

/** A code line of a chunk's text, with its place among the text's lines (split at `\n`). */
export interface ChunkLine extends CodeLine {
  readonly index: number;
}

/**
 * The code lines of a chunk's text with their file line numbers. A function chunk is its lines
 * verbatim; a file chunk's module-level code follows its marker and a class chunk's own code
 * comes first, both laid over the chunk's segments in order (signatures after them carry no line).
 */
export function codeLines(meta: ChunkMeta, text: string): readonly ChunkLine[] {
  const kept = linesOfTexts.get(text, () => ({ meta, lines: splitCodeLines(meta, text) }));
  return sameLines(kept.meta, meta) ? kept.lines : splitCodeLines(meta, text);
}

/**
 * The code lines of recently read texts: a question's shaping, its files list's contenders and
 * its context each read the lines of the same chunks (at 10k files a question split its texts
 * into lines three times over, ~1 ms). Keyed by the text, with the chunk it was split for: two
 * chunks may hold the same text at other lines.
 */
const linesOfTexts = new Generations<string, { meta: ChunkMeta; lines: readonly ChunkLine[] }>(
  512 * 1024,
  (text) => text.length,
);

/** Whether a text splits into the same code lines for chunks `a` and `b`. */
function sameLines(a: ChunkMeta, b: ChunkMeta): boolean {
  if (a === b) return true;
  if (a.level !== b.level || a.startLine !== b.startLine) return false;
  if (a.level === 'function') return true;
  const [x, y] = [a.segments ?? [], b.segments ?? []];
  return (
    x.length === y.length && x.every(([first, last], i) => y[i]![0] === first && y[i]![1] === last)
  );
}

function splitCodeLines(meta: ChunkMeta, text: string): ChunkLine[] {
  const lines = text.split('\n');
  if (meta.level === 'function')
    return lines.map((content, i) => ({ line: meta.startLine + i, text: content, index: i }));
  if (!meta.segments?.length) return [];
  const start = meta.level === 'file' ? lines.indexOf(MODULE_CODE_MARKER) + 1 : 0;
  if (meta.level === 'file' && start === 0) return [];
  const out: ChunkLine[] = [];
  let at = start;
  for (const [first, last] of meta.segments) {
    for (
      let line = first;
      line <= last && out.length < MAX_SEGMENT_LINES_IN_CONTENT && at < lines.length;
      line++
    )
      out.push({ line, text: lines[at]!, index: at++ });
  }
  return out;
}

/**
 * The parts of a quoted message that code may hold verbatim. Pasted console output joins several
 * messages ("Usage: … Error: Got unexpected extra argument (/tmp/out)"), and the user's own values
 * (paths, numbers, quoted names) are never in the code: split at ellipses, line breaks and
 * `Error:`-style prefixes, and drop those values. Fragments of under three words say too little.
 */
export function messageFragments(message: string): string[] {
  const parts = message
    .split(/\.\.\.|…|\n|\n|\b(?:\w*(?:Error|Exception|Warning)|Usage|Error|error|fatal|FATAL):\s/)
    .map((part) =>
      part
        .replace(/(?:^|\s|\()(?:[a-z]:)?[\\/][^\s)]*/gi, ' ')
        .replace(/'[^']*'|"[^"]*"|`[^`]*`/g, ' ')
        .replace(/\b\d+(?:\.\d+)*\b/g, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((part) => (part.match(/[\p{L}]+/gu) ?? []).length >= 3);
  return [...new Set([message, ...parts])];
}

/** Lowercased word trigrams (single words for texts shorter than three words). */
export function trigrams(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  const out = new Set<string>();
  if (words.length < 3) {
    if (words.length) out.add(words.join(' '));
    return out;
  }
  for (let i = 0; i + 2 < words.length; i++) out.add(`${words[i]} ${words[i + 1]} ${words[i + 2]}`);
  return out;
}

export interface LineMatch {
  /** Share of the message's trigrams found, 0–1. */
  readonly coverage: number;
  /** File lines where matched trigrams sit, best first. */
  readonly lines: readonly number[];
}

/**
 * How much of `message` a chunk's text contains, and where. A line's words are joined with the
 * next line's, so a message split over two source lines still matches.
 */
export function matchMessage(message: Trigrams, lines: readonly CodeLine[]): LineMatch {
  if (!message.size) return { coverage: 0, lines: [] };
  const words = new Set([...message].flatMap((gram) => gram.split(' ')));
  const holdsWord = lines.map((line) =>
    (line.text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).some((word) => words.has(word)),
  );
  const found = new Set<string>();
  const perLine: { line: number; hits: number; own: number }[] = [];
  for (let i = 0; i < lines.length; i++) {
    // A window can only match where its lines hold a word of the message.
    if (!holdsWord[i] && !holdsWord[i + 1]) continue;
    const own = literalText(lines[i]!.text);
    const window = trigrams(`${own} ${literalText(lines[i + 1]?.text ?? '')}`);
    let hits = 0;
    for (const gram of window) {
      if (message.has(gram)) {
        hits++;
        found.add(gram);
      }
    }
    // of windows matching alike, the one whose own line holds the message comes first
    if (hits)
      perLine.push({
        line: lines[i]!.line,
        hits,
        own: holdsWord[i] ? [...trigrams(own)].filter((gram) => message.has(gram)).length : 0,
      });
  }
  perLine.sort((a, b) => b.hits - a.hits || b.own - a.own || a.line - b.line);
  return { coverage: found.size / message.size, lines: perLine.map((entry) => entry.line) };
}

/** The text inside a line's string literals when it has some (quotes and `+` joins dropped). */
function literalText(line: string): string {
  const literals = line.match(/"[^"]*"|'[^']*'|`[^`]*`/g);
  return literals ? literals.map((literal) => literal.slice(1, -1)).join(' ') : line;
}

const HASH_COMMENT_LANGUAGES = new Set(['python', 'ruby', 'php']);
/** The opening of a Python docstring, with its quotes in the first group. */
export const DOCSTRING_OPEN = /^[rubfRUBF]{0,2}("""|''')/;

/**
 * The lines of a chunk that are documentation rather than code: comments, docstrings and blank
 * lines. Citations skip long runs of them, since the code is what an answer cites.
 */
export function documentationLines(
  lines: readonly CodeLine[],
  language: string | null,
): Set<number> {
  const docs = new Set<number>();
  const hashComments = HASH_COMMENT_LANGUAGES.has(language ?? '');
  let closing: string | null = null;
  for (const { line, text } of lines) {
    const trimmed = text.trim();
    if (closing) {
      docs.add(line);
      if (trimmed.includes(closing)) closing = null;
      continue;
    }
    const docstring = language === 'python' ? DOCSTRING_OPEN.exec(trimmed) : null;
    if (docstring) {
      docs.add(line);
      const quote = docstring[1]!;
      if (!trimmed.slice(docstring[0].length).includes(quote)) closing = quote;
    } else if (trimmed.startsWith('/*')) {
      docs.add(line);
      if (!trimmed.includes('*/', 2)) closing = '*/';
    } else if (!trimmed || trimmed.startsWith('//') || (hashComments && trimmed.startsWith('#')))
      docs.add(line);
  }
  return docs;
}

/**
 * The terms of each code line, kept across searches: the same chunks come back question after
 * question. The lines kept, and the terms cut from them, are copies: a line split off a chunk's
 * text kept the whole text (after 240 questions at 10k files, 14 MB of texts no cache counted).
 */
const lineTerms = new Generations<string, readonly string[]>(25_000, undefined, detached);
const distinctTerms = (text: string): readonly string[] => [...new Set(indexTerms(text))];

function termsOfLine(text: string): readonly string[] {
  return lineTerms.get(text, distinctTerms);
}

/** The weight of the query terms a line of code holds. */
export function lineScore(text: string, weights: ReadonlyMap<string, number>): number {
  let score = 0;
  for (const term of termsOfLine(text)) score += weights.get(term) ?? 0;
  return score;
}

/** A character outside ASCII: a term holding one is not looked for by its letters. */
const NOT_ASCII = /\P{ASCII}/u;

/**
 * Which of `lines` can score above 0 (lineScore), found without splitting the lines into terms:
 * the lines and their terms are many, the question's weighted terms few. Every term of a line is
 * a lowercased piece of an identifier, or the whole identifier lowercased without its `_` and `$`,
 * so a line holds an ASCII term only where its lowercased text, `_` and `$` left out, holds the
 * term's letters: lowercasing maps each character on its own but for the Greek final sigma, which
 * no ASCII term holds. Null (every line can score) when a weighted term is not ASCII, or a line
 * holds a line break of its own.
 */
export function linesThatCanScore(
  lines: readonly CodeLine[],
  weights: ReadonlyMap<string, number>,
): Uint8Array | null {
  const terms = [...weights.keys()];
  if (terms.some((term) => NOT_ASCII.test(term))) return null;
  const text = lines
    .map((line) => line.text)
    .join('\n')
    .toLowerCase()
    .replace(/[_$]/g, '');
  const breaks: number[] = [];
  for (let at = text.indexOf('\n'); at >= 0; at = text.indexOf('\n', at + 1)) breaks.push(at);
  if (breaks.length !== Math.max(0, lines.length - 1)) return null;
  const holds = new Uint8Array(lines.length);
  for (const term of terms) {
    for (let at = text.indexOf(term); at >= 0;) {
      const line = lineAt(breaks, at);
      holds[line] = 1;
      // the term's next place on a later line: this one is marked
      at = line < breaks.length ? text.indexOf(term, breaks[line]! + 1) : -1;
    }
  }
  return holds;
}

/** The line (0-based) that offset `at` of a text lies on, from the offsets of its line breaks. */
function lineAt(breaks: readonly number[], at: number): number {
  let low = 0;
  let high = breaks.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (breaks[middle]! < at) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Each line's lineScore; the lines linesThatCanScore rules out are not split into terms. */
export function lineScores(
  lines: readonly CodeLine[],
  weights: ReadonlyMap<string, number>,
): Float64Array {
  const scores = new Float64Array(lines.length);
  const scorable = linesThatCanScore(lines, weights);
  for (let i = 0; i < lines.length; i++)
    if (!scorable || scorable[i]) scores[i] = lineScore(lines[i]!.text, weights);
  return scores;
}

/** Ranges of ±radius lines around the best-scoring lines, merged, best first, at most `count`. */
export function windowsAround(
  lines: readonly number[],
  radius: number,
  bounds: readonly [number, number],
  count: number,
): [number, number][] {
  const windows: [number, number][] = [];
  for (const line of lines) {
    if (windows.length >= count) break;
    const start = Math.max(bounds[0], line - radius);
    const end = Math.min(bounds[1], line + radius);
    const overlapping = windows.find(([a, b]) => start <= b + 1 && end >= a - 1);
    if (overlapping) {
      overlapping[0] = Math.min(overlapping[0], start);
      overlapping[1] = Math.max(overlapping[1], end);
    } else windows.push([start, end]);
  }
  return windows;
}

/**
 * A line assigning a module-level name (`DEFAULT_TIMEOUT = 5`, `export const config = …`);
 * `name` is the pattern of the name, in a group when the caller wants it captured.
 */
export function assignmentLine(name: string): RegExp {
  return new RegExp(
    `^\\s*(?:export\\s+)?(?:(?:const|let|var|final|static|public|private)\\s+)*${name}\\s*(?::[^=]+)?=(?!=)`,
  );
}
