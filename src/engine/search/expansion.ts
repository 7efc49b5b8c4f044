import { l2Normalize, type Embedder } from '../embed/embedder';
import { elapsedMs, getLogger } from '../log/logger';
import type { LexicalIndex } from '../store/lexical';
import { describeError } from '../util/result';
import { NearestRows, nearestExactly, quantiseRow } from './nearest-rows';
import { LANGUAGE_KEYWORDS, STOP_WORDS } from './preprocess';
import { readWordRows, writeWordRows, type WordRows } from './word-rows-file';

/** Words shorter than this carry no idea of their own (ids, abbreviations). */
const MIN_LENGTH = 4;

const log = getLogger('search.expansion');

/** Words embedded per call while the vocabulary is taken in: bounds the vectors alive at once. */
const EMBED_BATCH = 4096;
/** Candidate words whose unit vectors are kept across questions (a quarter of a kilobyte each). */
const KEPT_CANDIDATES = 10_000;
/** Question words whose nearest index rows are kept across questions. */
const KEPT_WORDS = 4096;
/**
 * Rows ranked for a word beyond those asked for: its own row (a question's word is often an index
 * word) and one more, so that a later question's other words seldom leave its list short.
 */
const SPARE_ROWS = 2;
/** The rows are saved again once those embedded since they last were make this share of all. */
const UNSAVED_SHARE = 1 / 8;

/** Where the rows are kept between openings (see word-rows-file.ts), and whether this process writes there. */
export interface SavedWordRows {
  readonly file: string;
  writable(): boolean;
}

/**
 * Saved rows, for the first take-in after opening. They were saved in the order the index met
 * their words, which an unchanged index meets them in again: a word is looked for at its own
 * position first, and in `rowOf` (built the first time one is not there) after.
 */
class KeptWordRows {
  private rowOf: Map<string, number> | null = null;

  constructor(
    private readonly words: readonly string[],
    readonly codes: Int8Array,
  ) {}

  /** The saved row of `word`, taken in as the `position`-th word; undefined when none was saved. */
  rowOfWord(word: string, position: number): number | undefined {
    if (this.words[position] === word) return position;
    this.rowOf ??= new Map(this.words.map((saved, row) => [saved, row]));
    return this.rowOf.get(word);
  }
}

/** A word's nearest rows; `complete` when they are every row in the index. */
interface KeptRows {
  readonly rows: Int32Array;
  readonly complete: boolean;
}

/**
 * The index words nearest each question word in the embedding model's space: the codebase's own
 * words for what the question names otherwise (`redirects` → `allowredirects`, `stored` →
 * `storage`). The index's words are embedded once, as they first appear, and kept as int8 rows
 * with the lexical index's term ids (the words themselves stay in the index's term table); a
 * question embeds again only the few words near each of its words, for the exact ranking. A word
 * that left the index is skipped when it would be chosen. With a static model the rows are saved
 * beside the index once an eighth of them or more are new, and the first take-in after opening
 * takes the saved row of every word it finds there instead of embedding it.
 */
export class NearestWords {
  /** The lexical term id of each row. */
  private termIds = new Int32Array(0);
  private vectors: NearestRows | null = null;
  /** How many of the lexical index's terms (in their order of arrival) were looked at. */
  private seen = 0;
  /**
   * Unit vectors of candidate words, kept across questions when the model is static: it embeds a
   * word the same way whatever else it is given with, and the next question often weighs the same
   * candidates. Emptied when full.
   */
  private readonly candidateVectors = new Map<string, Float32Array>();
  /** Each question word's index rows, nearest first (see rankedRows), for one vocabulary. */
  private readonly keptRows = new Map<string, KeptRows>();
  private keptFor = { vocabulary: -1, count: -1 };
  /** Whether the saved rows were looked for (by the first take-in). */
  private looked = false;
  /** Rows embedded since the rows were last saved or read back. */
  private unsaved = 0;

  constructor(
    private readonly lexical: LexicalIndex,
    private readonly embedder: Embedder,
    private readonly saved: SavedWordRows | null = null,
  ) {}

  /** The `count` nearest index words of each term, nearest first, each word once. */
  async nearest(terms: readonly string[], count: number): Promise<string[]> {
    await this.catchUp();
    if (!this.vectors || count <= 0) return [];
    const given = new Set(terms);
    const found = new Set<string>();
    for (const rows of await this.rankedRows(terms, count, given)) {
      let taken = 0;
      for (let i = 0; i < rows.length && taken < count; i++) {
        const word = this.wordAt(rows[i]!);
        if (given.has(word)) continue;
        found.add(word);
        taken++;
      }
    }
    return [...found];
  }

  /**
   * For each term, index rows nearest first, at least `count` of them not `given` unless fewer
   * are in the index. A static model embeds a word the same way every time, so each term's rows
   * are kept across questions while the vocabulary stays the same: a kept list ranks every row
   * still in the index, `given` ones too (the exact top rows with some of them left out are the
   * exact top of what remains), a few beyond `count` (the term's own row is among them); a list
   * the question's words leave too short is ranked again, deep enough for all of them. Any other
   * model ranks the rows afresh, without `given`.
   */
  private async rankedRows(
    terms: readonly string[],
    count: number,
    given: ReadonlySet<string>,
  ): Promise<ArrayLike<number>[]> {
    const keep = this.embedder.kind === 'static';
    const vocabulary = this.lexical.vocabularyVersion;
    if (this.keptFor.vocabulary !== vocabulary || this.keptFor.count !== count) {
      this.keptRows.clear();
      this.keptFor = { vocabulary, count };
    }
    const out: ArrayLike<number>[] = [];
    let missing: number[] = [];
    terms.forEach((term, i) => {
      const kept = keep ? this.keptRows.get(term) : undefined;
      if (kept && this.covers(kept, count, given)) out[i] = kept.rows;
      else missing.push(i);
    });
    if (!keep) {
      const wanted = (row: number) => !given.has(this.wordAt(row)) && this.inIndex(row);
      const lists = await this.exactNearest(
        missing.map((i) => terms[i]!),
        count,
        wanted,
      );
      missing.forEach((i, at) => (out[i] = lists[at]!));
      return out;
    }
    // a second ranking, for the lists the question's own words left short, needs no third
    for (const depth of [count + SPARE_ROWS, count + Math.max(SPARE_ROWS, given.size)]) {
      if (!missing.length) break;
      const lists = await this.exactNearest(
        missing.map((i) => terms[i]!),
        depth,
        (row) => this.inIndex(row),
      );
      const short: number[] = [];
      missing.forEach((i, at) => {
        const kept = { rows: Int32Array.from(lists[at]!), complete: lists[at]!.length < depth };
        if (this.keptRows.size >= KEPT_WORDS) this.keptRows.clear();
        this.keptRows.set(terms[i]!, kept);
        if (this.covers(kept, count, given)) out[i] = kept.rows;
        else short.push(i);
      });
      missing = short;
    }
    return out;
  }

  /** For each term, the `depth` rows `wanted` takes with the highest exact product with it. */
  private async exactNearest(
    terms: readonly string[],
    depth: number,
    wanted: (row: number) => boolean,
  ): Promise<number[][]> {
    if (!terms.length) return [];
    const queries = (await this.embedder.embed(terms)).map(l2Normalize);
    const candidates = this.vectors!.candidates(queries, depth, wanted);
    const unitVectors = await this.candidateUnitVectors(
      candidates.flat().map((row) => this.wordAt(row)),
    );
    return queries.map((query, at) => {
      const rows = candidates[at]!;
      const rowVectors = rows.map((row) => unitVectors.get(this.wordAt(row))!);
      return nearestExactly(query, rows, rowVectors, depth);
    });
  }

  /** Whether a kept list gives `count` rows once `given` words are dropped from it. */
  private covers(kept: KeptRows, count: number, given: ReadonlySet<string>): boolean {
    if (kept.complete) return true;
    let left = 0;
    for (let i = 0; i < kept.rows.length && left < count; i++)
      if (!given.has(this.wordAt(kept.rows[i]!))) left++;
    return left >= count;
  }

  private wordAt(row: number): string {
    return this.lexical.termAt(this.termIds[row]!);
  }

  private inIndex(row: number): boolean {
    return this.lexical.hasTerm(this.wordAt(row));
  }

  /** The unit vectors of `words`, embedded in one call but for those kept from earlier questions. */
  private async candidateUnitVectors(words: readonly string[]): Promise<Map<string, Float32Array>> {
    const keep = this.embedder.kind === 'static';
    const out = new Map<string, Float32Array>();
    const missing: string[] = [];
    for (const candidate of words) {
      const kept = keep ? this.candidateVectors.get(candidate) : undefined;
      if (kept) out.set(candidate, kept);
      else if (!out.has(candidate)) {
        out.set(candidate, EMPTY_VECTOR);
        missing.push(candidate);
      }
    }
    if (!missing.length) return out;
    // one call for every term's candidates: a model embeds a batch faster than one word at a time
    const embedded = await this.embedder.embed(missing, { once: true });
    missing.forEach((candidate, i) => {
      const vector = l2Normalize(embedded[i]!);
      out.set(candidate, vector);
      if (!keep) return;
      if (this.candidateVectors.size >= KEPT_CANDIDATES) this.candidateVectors.clear();
      this.candidateVectors.set(candidate, vector);
    });
    return out;
  }

  /**
   * Embeds the words the index gained since the last call. Each lookup does it first; an index run
   * does it as it ends, so the first question after indexing does not wait for the whole vocabulary,
   * and so does the warm-up after opening. One take-in runs at a time: a call made during another
   * waits for it, then takes in what came after (a lookup during a take-in would otherwise find
   * rows not yet filled in). A take-in gives way to other work between batches of words.
   */
  catchUp(): Promise<void> {
    this.calls++;
    const run = this.taking.then(() => this.takeInNewWords()).finally(() => this.calls--);
    // the next take-in follows this one whatever its outcome: this one's callers get its failure
    this.taking = run.catch(() => undefined);
    return run;
  }

  /** Whether a take-in of new words is under way or waiting for one. */
  get busy(): boolean {
    return this.calls > 0;
  }

  private taking: Promise<void> = Promise.resolve();
  private calls = 0;

  private async takeInNewWords(): Promise<void> {
    const { terms, next } = this.lexical.termsSince(this.seen);
    const firstId = this.seen;
    const addedIds: number[] = [];
    terms.forEach((term, i) => isWord(term) && addedIds.push(firstId + i));
    if (!addedIds.length) {
      this.seen = next;
      return;
    }
    const started = performance.now();
    const dimensions = this.embedder.dimensions;
    const vectors = this.vectors ?? new NearestRows(dimensions);
    const kept = await this.savedRows();
    const counted = { embedded: 0 };
    await vectors.append(addedIds.length, this.rowBatches(addedIds, kept, counted));
    const embedded = counted.embedded;
    const termIds = new Int32Array(this.termIds.length + addedIds.length);
    termIds.set(this.termIds);
    termIds.set(addedIds, this.termIds.length);
    // the rows and their term ids are swapped in together, once every row is filled in
    this.vectors = vectors;
    this.termIds = termIds;
    this.seen = next;
    this.unsaved += embedded;
    log.info('nearest_words_embedded', {
      words: addedIds.length,
      embedded,
      total: termIds.length,
      duration_ms: elapsedMs(started),
    });
    if (this.unsaved && this.unsaved >= termIds.length * UNSAVED_SHARE) await this.save();
  }

  /** The saved rows by word, the first time only and for a static model (null otherwise). */
  private async savedRows(): Promise<KeptWordRows | null> {
    if (this.looked || !this.saved || this.embedder.kind !== 'static') return null;
    this.looked = true;
    const { id, dimensions } = this.embedder;
    const read = await readWordRows(this.saved.file, id, dimensions);
    if (!read.ok) {
      log.warn('nearest_words_not_read', { code: read.error.code, error: read.error.message });
      return null;
    }
    if (!read.value) return null;
    return new KeptWordRows(read.value.words, read.value.codes);
  }

  /** Saves every row beside the index, when this process writes it; a failure is logged. */
  private async save(): Promise<void> {
    const vectors = this.vectors;
    if (!this.saved?.writable() || !vectors) return;
    const started = performance.now();
    const { id, dimensions } = this.embedder;
    const rows: WordRows = {
      words: Array.from(this.termIds, (termId) => this.lexical.termAt(termId)),
      codes: new Int8Array(this.termIds.length * dimensions),
    };
    for (let row = 0; row < this.termIds.length; row++)
      rows.codes.set(vectors.rowCodes(row), row * dimensions);
    try {
      await writeWordRows(this.saved.file, id, dimensions, rows);
      this.unsaved = 0;
      log.info('nearest_words_saved', {
        words: rows.words.length,
        duration_ms: elapsedMs(started),
      });
    } catch (cause) {
      log.warn('nearest_words_not_saved', { error: describeError(cause) });
    }
  }

  /**
   * The int8 rows of the terms `ids`, a batch of whole rows at a time: the `kept` row where it
   * holds the word (as it was kept), the word embedded otherwise (counted in `counted`).
   */
  private async *rowBatches(
    ids: readonly number[],
    kept: KeptWordRows | null,
    counted: { embedded: number },
  ): AsyncGenerator<Int8Array> {
    const dimensions = this.embedder.dimensions;
    for (let from = 0; from < ids.length; from += EMBED_BATCH) {
      const words = ids.slice(from, from + EMBED_BATCH).map((id) => this.lexical.termAt(id));
      const batch = new Int8Array(words.length * dimensions);
      const rows = words.map((word, i) => kept?.rowOfWord(word, from + i));
      const fresh = words.filter((_, i) => rows[i] === undefined);
      const vectors = fresh.length ? await this.embedder.embed(fresh, { once: true }) : [];
      counted.embedded += fresh.length;
      let next = 0;
      for (let i = 0; i < rows.length;) {
        const row = rows[i];
        if (row === undefined) {
          quantiseRow(
            l2Normalize(vectors[next++]!),
            0,
            batch.subarray(i * dimensions, (i + 1) * dimensions),
          );
          i++;
          continue;
        }
        // saved rows one after another are copied together: an unchanged index keeps them all in
        // order, and a view and a copy per row were hundreds of thousands for the collector
        let end = i + 1;
        while (end < rows.length && rows[end] === row + (end - i)) end++;
        batch.set(
          kept!.codes.subarray(row * dimensions, (row + end - i) * dimensions),
          i * dimensions,
        );
        i = end;
      }
      yield batch;
      // other work (a save, a message from the editor) runs between batches
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
}

/** A placeholder for a vector being embedded. */
const EMPTY_VECTOR = new Float32Array(0);

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
 * which of them it knows. As in Porter's stemmer, a past, gerund or adverb ending comes off only
 * when what it leaves holds a vowel: `string` is no gerund of `str`.
 */
export function inflectionStems(word: string): string[] {
  const lower = word.toLowerCase();
  const out: string[] = [];
  const add = (stem: string) =>
    stem.length >= 3 && stem !== lower && !out.includes(stem) && out.push(stem);
  const strips = (ending: string) =>
    lower.endsWith(ending) && /[aeiouy]/.test(lower.slice(0, -ending.length));
  if (lower.endsWith('ies')) add(`${lower.slice(0, -3)}y`);
  if (lower.endsWith('es')) add(lower.slice(0, -2));
  if (lower.endsWith('s') && !lower.endsWith('ss')) add(lower.slice(0, -1));
  if (strips('ed')) {
    add(lower.slice(0, -2));
    add(lower.slice(0, -1));
    if (/(.)\1ed$/.test(lower)) add(lower.slice(0, -3));
  }
  if (strips('ing')) {
    add(lower.slice(0, -3));
    add(`${lower.slice(0, -3)}e`);
    if (/(.)\1ing$/.test(lower)) add(lower.slice(0, -4));
  }
  if (strips('ly')) add(lower.slice(0, -2));
  return out;
}
