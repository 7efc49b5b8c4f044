import { l2Normalize, type Embedder } from '../embed/embedder';
import { elapsedMs, getLogger } from '../log/logger';
import type { LexicalIndex } from '../store/lexical';
import { NearestRows } from './nearest-rows';
import { LANGUAGE_KEYWORDS, STOP_WORDS } from './preprocess';

/** Words shorter than this carry no idea of their own (ids, abbreviations). */
const MIN_LENGTH = 4;

const log = getLogger('search.expansion');

/**
 * The index words nearest each question word in the embedding model's space: the codebase's own
 * words for what the question names otherwise (`redirects` → `allowredirects`, `stored` →
 * `storage`). The index's words are embedded once, as they first appear, and kept: a word that
 * left the index is skipped when it would be chosen.
 */
export class NearestWords {
  private words: string[] = [];
  /** Their unit vectors, row `i` for `words[i]`. */
  private vectors: NearestRows | null = null;
  /** How many of the lexical index's terms (in their order of arrival) were looked at. */
  private seen = 0;

  constructor(
    private readonly lexical: LexicalIndex,
    private readonly embedder: Embedder,
  ) {}

  /** The `count` nearest index words of each term, nearest first, each word once. */
  async nearest(terms: readonly string[], count: number): Promise<string[]> {
    await this.catchUp();
    const given = new Set(terms);
    const found = new Set<string>();
    if (!this.vectors) return [];
    const wanted = (row: number) =>
      !given.has(this.words[row]!) && this.lexical.hasTerm(this.words[row]!);
    for (const vector of await this.embedder.embed(terms))
      for (const row of this.vectors.nearest(l2Normalize(vector), count, wanted))
        found.add(this.words[row]!);
    return [...found];
  }

  /**
   * Embeds the words the index gained since the last call. Each lookup does it first; an index run
   * does it as it ends, so the first question after indexing does not wait for the whole vocabulary.
   */
  async catchUp(): Promise<void> {
    const { terms, next } = this.lexical.termsSince(this.seen);
    this.seen = next;
    const added = terms.filter(isWord);
    if (!added.length) return;
    const started = performance.now();
    const dimensions = this.embedder.dimensions;
    const vectors = new Float32Array((this.words.length + added.length) * dimensions);
    if (this.vectors) vectors.set(this.vectors.values);
    (await this.embedder.embed(added)).forEach((vector, i) =>
      vectors.set(l2Normalize(vector), (this.words.length + i) * dimensions),
    );
    // one at a time: a large index adds more words than a call takes arguments
    for (const word of added) this.words.push(word);
    this.vectors ??= new NearestRows(dimensions);
    this.vectors.reset(vectors);
    log.info('nearest_words_embedded', {
      words: added.length,
      total: this.words.length,
      duration_ms: elapsedMs(started),
    });
  }
}

/** A word of text, not a number, a keyword or a word too short or common to say anything. */
function isWord(term: string): boolean {
  return (
    term.length >= MIN_LENGTH &&
    /^\p{L}+$/u.test(term) &&
    !STOP_WORDS.has(term) &&
    !LANGUAGE_KEYWORDS.has(term)
  );
}

/**
 * The stems a plural, past, gerund or adverb ending leaves (`skipped` → skipp, skip, skipe …),
 * the word itself left out: "skipped" in a question finds `skip` in code once the index is asked
 * which of them it knows.
 */
export function inflectionStems(word: string): string[] {
  const lower = word.toLowerCase();
  const out: string[] = [];
  const add = (stem: string) =>
    stem.length >= 3 && stem !== lower && !out.includes(stem) && out.push(stem);
  if (lower.endsWith('ies')) add(`${lower.slice(0, -3)}y`);
  if (lower.endsWith('es')) add(lower.slice(0, -2));
  if (lower.endsWith('s') && !lower.endsWith('ss')) add(lower.slice(0, -1));
  if (lower.endsWith('ed')) {
    add(lower.slice(0, -2));
    add(lower.slice(0, -1));
    if (/(.)\1ed$/.test(lower)) add(lower.slice(0, -3));
  }
  if (lower.endsWith('ing')) {
    add(lower.slice(0, -3));
    add(`${lower.slice(0, -3)}e`);
    if (/(.)\1ing$/.test(lower)) add(lower.slice(0, -4));
  }
  if (lower.endsWith('ly')) add(lower.slice(0, -2));
  return out;
}
