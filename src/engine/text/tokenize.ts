/**
 * Identifier-aware tokenisation, the same for the corpus and for queries: `getUserById`,
 * `get_user_by_id` and `GetUserByID` all yield the parts get/user/by/id, and the index also keeps
 * the whole identifier (`getuserbyid`) so an exact name outranks a scatter of its parts.
 *
 * A hand-written scanner: the indexer runs it over every chunk, where regular expressions cost
 * more than the parsing itself.
 */
const LETTER = /\p{L}/u;
const UPPER = /\p{Lu}/u;
const DIGIT = /\p{N}/u;

/** Character classes of ASCII, looked up by code; other characters are classified on demand. */
const OTHER = 0;
const LOWER_CASE = 1;
const UPPER_CASE = 2;
const NUMBER = 3;
const JOINER = 4; // '_' and '$' join the parts of an identifier
const ASCII = new Uint8Array(128).map((_, code) => {
  if (code >= 97 && code <= 122) return LOWER_CASE;
  if (code >= 65 && code <= 90) return UPPER_CASE;
  if (code >= 48 && code <= 57) return NUMBER;
  if (code === 95 || code === 36) return JOINER;
  return OTHER;
});

function classify(text: string, index: number): number {
  const code = text.charCodeAt(index);
  if (code < 128) return ASCII[code]!;
  const char = text[index]!;
  if (UPPER.test(char)) return UPPER_CASE;
  if (LETTER.test(char)) return LOWER_CASE;
  return DIGIT.test(char) ? NUMBER : OTHER;
}

/** An identifier's words (camelCase and snake_case split), lowercased, longer than one character. */
export function camelSnakeTokenize(text: string): string[] {
  const out: string[] = [];
  scan(text, out, false);
  return out;
}

/** Parts of every identifier plus the whole identifier when it has more than one part. */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  scan(text, out, true);
  return out;
}

/** `get_user_by_id` and `getUserById` both become `getuserbyid`. */
export function normalizeIdentifier(word: string): string {
  return word.replace(/[_$]/g, '').toLowerCase();
}

export function splitIdentifier(word: string): string[] {
  const out: string[] = [];
  scan(word, out, false);
  return out;
}

export function countTerms(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}

/**
 * `countTerms(indexTerms(text))` without the array of every term found in between: a first index
 * counts the terms of every chunk, and those arrays were a tenth of the garbage it made.
 */
export function indexTermCounts(text: string): Map<string, number> {
  const sink = new TermCounts();
  scan(text, sink, true);
  return sink.counts;
}

/** Where `scan` puts the terms it finds, in order: an array, or their counts. */
interface TermSink {
  /** How many terms were put so far. */
  readonly length: number;
  push(term: string): void;
}

/** Counts each term put, keyed in the order terms first come (as `countTerms` keys them). */
class TermCounts implements TermSink {
  length = 0;
  readonly counts = new Map<string, number>();

  push(term: string): void {
    this.length++;
    this.counts.set(term, (this.counts.get(term) ?? 0) + 1);
  }
}

/**
 * Finds words (a letter, `_` or `$` followed by letters, digits, `_`, `$`; or a run of two or
 * more digits) and pushes their parts, split at `_`/`$` and at lower→upper and UPPER→Upper
 * boundaries (`HTTPServer` → http, server).
 */
function scan(text: string, out: TermSink, withWhole: boolean): void {
  const length = text.length;
  let i = 0;
  while (i < length) {
    const kind = classify(text, i);
    if (kind === OTHER) {
      i++;
      continue;
    }
    if (kind === NUMBER) {
      let end = i + 1;
      while (end < length && classify(text, end) === NUMBER) end++;
      if (end - i >= 2) out.push(text.slice(i, end));
      i = end;
      continue;
    }
    let end = i + 1;
    while (end < length && classify(text, end) !== OTHER) end++;
    pushWord(text, i, end, out, withWhole);
    i = end;
  }
}

/**
 * Splits one word into parts. The cuts are those of the regular expression
 * `([a-z0-9])([A-Z]) | ([A-Z])([A-Z][a-z])` applied left to right without overlaps, so an
 * acronym splits from the word after it (`HTTPServer` → http, server) unless its first letter
 * already ended a part (`RootCAs` → root, cas; `ScanETag` → scan, etag).
 */
function pushWord(
  text: string,
  start: number,
  end: number,
  out: TermSink,
  withWhole: boolean,
): void {
  const before = out.length;
  let partStart = -1;
  /** The last index a cut consumed: the regex resumes matching after it. */
  let consumed = start - 1;
  let previous = JOINER;
  let beforePrevious = JOINER;
  for (let i = start; i <= end; i++) {
    const kind = i < end ? classify(text, i) : JOINER;
    let cut = -1;
    if (kind === JOINER) cut = i;
    else if (
      kind === UPPER_CASE &&
      (previous === LOWER_CASE || previous === NUMBER) &&
      i - 1 > consumed
    ) {
      cut = i;
      consumed = i;
    } else if (
      kind === LOWER_CASE &&
      previous === UPPER_CASE &&
      beforePrevious === UPPER_CASE &&
      i - 2 > consumed
    ) {
      cut = i - 1;
      consumed = i;
    }
    if (cut >= 0 && partStart >= 0) {
      if (cut - partStart > 1) out.push(text.slice(partStart, cut).toLowerCase());
      partStart = kind === JOINER ? -1 : cut;
    } else if (partStart < 0 && kind !== JOINER) partStart = i;
    beforePrevious = previous;
    previous = kind;
  }
  if (withWhole && out.length - before > 1) {
    const whole = normalizeIdentifier(text.slice(start, end));
    if (whole.length > 1) out.push(whole);
  }
}
