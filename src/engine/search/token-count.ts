import { fnv1a } from '../util/hash';

/**
 * Counts the tokens of a text piece by piece with byte-pair merging over an encoding's ranks,
 * as js-tiktoken encodes, without building the tokens: a piece that is itself a token counts
 * one; any other is merged pair by pair, the lowest-ranked (leftmost on a tie) first, until no
 * pair is a token, and counts its parts. Byte strings are keyed as Latin-1 text (one character
 * per byte) instead of js-tiktoken's comma-joined numbers, which made counting a search's
 * context most of its cost.
 */
export interface Ranks {
  /** The pre-tokeniser's pattern: tokens never cross the pieces it cuts text into. */
  readonly pat_str: string;
  /** Lines of `! offset token token …`: base64 tokens, ranked from `offset` on. */
  readonly bpe_ranks: string;
}

export class TokenCounter {
  private readonly ranks = new Map<string, number>();
  /**
   * The ranks of the tokens of two and three bytes again, keyed by their bytes as one number: a
   * piece's merging looks up mostly such short parts, and a number key needs no string cut out
   * of the piece. Two-byte tokens by their 16 bits (-1: none), three-byte ones in a map.
   */
  private readonly twoByteRanks = new Int32Array(1 << 16).fill(-1);
  private readonly threeByteRanks = new Map<number, number>();
  readonly pieces: RegExp;
  /** Whether the pattern is cl100k's, whose pieces of ASCII text `asciiPieces` cuts without it. */
  private readonly cl100k: boolean;

  constructor(ranks: Ranks) {
    this.pieces = new RegExp(ranks.pat_str, 'gu');
    this.cl100k = ranks.pat_str === CL100K_PATTERN;
    for (const line of ranks.bpe_ranks.split('\n')) {
      if (!line) continue;
      const [, offset, ...tokens] = line.split(' ');
      const first = Number.parseInt(offset!, 10);
      tokens.forEach((token, i) =>
        this.keep(Buffer.from(token, 'base64').toString('latin1'), first + i),
      );
    }
  }

  /**
   * Hands `visit` each piece of `text` (start and end offsets) in order, as matching `pieces`
   * over it cuts them: by hand for the ASCII text of cl100k's pattern, which most code is (the
   * regular expression's match objects were a large part of counting a search's context).
   */
  eachPiece(text: string, visit: (start: number, end: number) => void): void {
    if (this.cl100k && isAscii(text)) {
      asciiPieces(text, visit);
      return;
    }
    for (const match of text.matchAll(this.pieces))
      visit(match.index, match.index + match[0].length);
  }

  /**
   * The tokens of one piece of text (a match of `pieces`). Each pair of neighbouring parts keeps
   * its rank, and a merge looks up only the two pairs it changes (a piece of n bytes was n² lookups).
   */
  countPiece(piece: string): number {
    // ASCII text is its own UTF-8 bytes: most code needs no conversion
    const bytes = isAscii(piece) ? piece : Buffer.from(piece, 'utf8').toString('latin1');
    if (bytes.length <= 1 || this.ranks.has(bytes)) return 1;
    // parts[i] is where part i starts; part i ends where part i + 1 starts; pairRanks[i] is the
    // rank of parts i and i + 1 joined (Infinity when that is no token)
    const parts: number[] = [];
    for (let i = 0; i <= bytes.length; i++) parts.push(i);
    const pairRanks: number[] = [];
    for (let i = 0; i + 2 < parts.length; i++) pairRanks.push(this.rankOf(bytes, parts, i));
    while (parts.length > 2) {
      let best = -1;
      let bestRank = Infinity;
      for (let i = 0; i < pairRanks.length; i++) {
        if (pairRanks[i]! < bestRank) {
          bestRank = pairRanks[i]!;
          best = i;
        }
      }
      if (best < 0) break;
      parts.splice(best + 1, 1);
      pairRanks.splice(best, 1);
      // the merged part's pairs with its neighbours changed; every other pair is as it was
      if (best > 0) pairRanks[best - 1] = this.rankOf(bytes, parts, best - 1);
      if (best < pairRanks.length) pairRanks[best] = this.rankOf(bytes, parts, best);
    }
    return parts.length - 1;
  }

  /** Keeps the rank of a token (its bytes as Latin-1 text). */
  private keep(token: string, rank: number): void {
    this.ranks.set(token, rank);
    if (token.length === 2) this.twoByteRanks[bytesKey(token, 0, 2)] = rank;
    else if (token.length === 3) this.threeByteRanks.set(bytesKey(token, 0, 3), rank);
  }

  /** The rank of parts `i` and `i + 1` of `bytes` joined, Infinity when that is no token. */
  private rankOf(bytes: string, parts: readonly number[], i: number): number {
    const start = parts[i]!;
    const end = parts[i + 2]!;
    if (end - start === 2) {
      const rank = this.twoByteRanks[bytesKey(bytes, start, end)]!;
      return rank < 0 ? Infinity : rank;
    }
    if (end - start === 3) return this.threeByteRanks.get(bytesKey(bytes, start, end)) ?? Infinity;
    return this.ranks.get(bytes.slice(start, end)) ?? Infinity;
  }
}

/** Up to three bytes of `bytes` (Latin-1 text, one character per byte) from `start` as one number. */
function bytesKey(bytes: string, start: number, end: number): number {
  let key = 0;
  for (let i = start; i < end; i++) key = (key << 8) | bytes.charCodeAt(i);
  return key;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** cl100k's pre-tokeniser pattern (as js-tiktoken gives it). */
export const CL100K_PATTERN =
  "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

/** ASCII characters by what the pattern tells apart: \p{L}, \p{N}, \s but a line break, a line break. */
const OTHER = 0;
const LETTER = 1;
const DIGIT = 2;
const SPACE = 3;
const BREAK = 4;
const KINDS = new Uint8Array(128).map((_, code) => {
  if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) return LETTER;
  if (code >= 48 && code <= 57) return DIGIT;
  if (code === 10 || code === 13) return BREAK;
  if (code === 32 || (code >= 9 && code <= 12)) return SPACE;
  return OTHER;
});
const APOSTROPHE = 39;

/**
 * The pieces cl100k's pattern cuts ASCII `text` into, as offsets. The pattern's alternatives,
 * first match wins: a contraction ('s 't 'm 'd 're 've 'll, any case); letters, after at most
 * one character that is neither a letter, a digit nor a line break; one to three digits; other
 * characters, after at most one space, with the line breaks that follow; whitespace up to its
 * last line break; whitespace but its last character when something other than whitespace
 * follows; one whitespace character.
 */
export function asciiPieces(text: string, visit: (start: number, end: number) => void): void {
  const length = text.length;
  let start = 0;
  while (start < length) {
    const first = KINDS[text.charCodeAt(start)]!;
    const second = start + 1 < length ? KINDS[text.charCodeAt(start + 1)]! : -1;
    let end = contractionEnd(text, start);
    if (end > start) {
      // a contraction
    } else if (first === LETTER || ((first === OTHER || first === SPACE) && second === LETTER)) {
      end = start + (first === LETTER ? 1 : 2);
      while (end < length && KINDS[text.charCodeAt(end)] === LETTER) end++;
    } else if (first === DIGIT) {
      end = start + 1;
      while (end < length && end < start + 3 && KINDS[text.charCodeAt(end)] === DIGIT) end++;
    } else if (first === OTHER || (text.charCodeAt(start) === 32 && second === OTHER)) {
      end = start + 1;
      while (end < length && KINDS[text.charCodeAt(end)] === OTHER) end++;
      while (end < length && KINDS[text.charCodeAt(end)] === BREAK) end++;
    } else {
      // whitespace: up to its last line break, or all but its last character before other text
      let spaceEnd = start + 1;
      let lastBreak = first === BREAK ? start : -1;
      for (; spaceEnd < length; spaceEnd++) {
        const kind = KINDS[text.charCodeAt(spaceEnd)]!;
        if (kind === BREAK) lastBreak = spaceEnd;
        else if (kind !== SPACE) break;
      }
      if (lastBreak >= 0) end = lastBreak + 1;
      else if (spaceEnd === length || spaceEnd - 1 === start) end = spaceEnd;
      else end = spaceEnd - 1;
    }
    visit(start, end);
    start = end;
  }
}

/** Where a contraction starting at `at` ends ('s, 're, …), or `at` when none does. */
function contractionEnd(text: string, at: number): number {
  if (text.charCodeAt(at) !== APOSTROPHE) return at;
  const next = text.charCodeAt(at + 1) | 32;
  // s t m d
  if (next === 115 || next === 116 || next === 109 || next === 100) return at + 2;
  const after = text.charCodeAt(at + 2) | 32;
  // re ve ll
  if ((next === 114 || next === 118) && after === 101) return at + 3;
  if (next === 108 && after === 108) return at + 3;
  return at;
}

/**
 * Token counts of spans of text kept across questions, looked up by a span's place in its text:
 * no string is cut out of the text to look a span up (a question looks up thousands of pieces and
 * lines, and nearly all are kept), its characters are hashed and compared where they are. The
 * kept spans' characters live in typed arrays, not strings: a kept line cut from a chunk's text
 * would keep the whole text alive, and strings are objects the collector copies. Kept in two
 * generations, as util/generations keeps its memos: when the current table is full it becomes
 * the old one, and a span found in the old one moves to the current.
 */
export class KeptTextCounts {
  private current: SpanTable;
  private previous: SpanTable;

  /** Up to `capacity` spans and `characters` of their text in one generation. */
  constructor(
    private readonly capacity: number,
    private readonly characters: number,
  ) {
    this.current = new SpanTable(capacity);
    this.previous = new SpanTable(capacity);
  }

  /** The count of `text.slice(start, end)`, kept, or `count(span)` kept from now on. */
  count(text: string, start: number, end: number, count: (span: string) => number): number {
    const hash = fnv1a(text, start, end);
    const kept = this.current.find(hash, text, start, end);
    if (kept >= 0) return kept;
    const old = this.previous.find(hash, text, start, end);
    const value = old >= 0 ? old : count(text.slice(start, end));
    if (
      this.current.size >= this.capacity ||
      this.current.characters + (end - start) > this.characters
    ) {
      const emptied = this.previous;
      emptied.clear();
      this.previous = this.current;
      this.current = emptied;
    }
    this.current.add(hash, text, start, end, value);
    return value;
  }
}

/**
 * One generation of span counts: open addressing, at most 70% of its slots (a power of two)
 * used; a slot's span is `length` characters of `chars` from `from`, and -1 marks a free slot.
 */
class SpanTable {
  private readonly mask: number;
  private readonly hashes: Int32Array;
  private readonly counts: Int32Array;
  private readonly from: Int32Array;
  private readonly lengths: Int32Array;
  private chars = new Uint16Array(4096);
  size = 0;
  characters = 0;

  constructor(capacity: number) {
    let slots = 16;
    while (slots * 0.7 < capacity) slots *= 2;
    this.mask = slots - 1;
    this.hashes = new Int32Array(slots);
    this.counts = new Int32Array(slots);
    this.from = new Int32Array(slots);
    this.lengths = new Int32Array(slots).fill(-1);
  }

  /** The count kept for the characters `start`…`end` of `text` (hashed to `hash`), or -1. */
  find(hash: number, text: string, start: number, end: number): number {
    for (let slot = hash & this.mask; ; slot = (slot + 1) & this.mask) {
      const length = this.lengths[slot]!;
      if (length < 0) return -1;
      if (this.hashes[slot] === hash && length === end - start && this.holds(slot, text, start))
        return this.counts[slot]!;
    }
  }

  /** Keeps `count` for the characters `start`…`end` of `text` (not held yet), hashed to `hash`. */
  add(hash: number, text: string, start: number, end: number, count: number): void {
    const length = end - start;
    if (this.characters + length > this.chars.length) {
      const grown = new Uint16Array(Math.max(this.chars.length * 2, this.characters + length));
      grown.set(this.chars.subarray(0, this.characters));
      this.chars = grown;
    }
    for (let i = 0; i < length; i++) this.chars[this.characters + i] = text.charCodeAt(start + i);
    let slot = hash & this.mask;
    while (this.lengths[slot]! >= 0) slot = (slot + 1) & this.mask;
    this.hashes[slot] = hash;
    this.counts[slot] = count;
    this.from[slot] = this.characters;
    this.lengths[slot] = length;
    this.characters += length;
    this.size++;
  }

  clear(): void {
    this.lengths.fill(-1);
    this.size = 0;
    this.characters = 0;
  }

  private holds(slot: number, text: string, start: number): boolean {
    const from = this.from[slot]!;
    const length = this.lengths[slot]!;
    for (let i = 0; i < length; i++)
      if (this.chars[from + i] !== text.charCodeAt(start + i)) return false;
    return true;
  }
}
