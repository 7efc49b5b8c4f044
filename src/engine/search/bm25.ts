import type { ChunkLevel } from '../model';
import type { LexicalIndex, PostingList } from '../store/lexical';

/**
 * BM25 over the lexical segment: posting lists supply the chunks holding each query term with
 * their term frequencies, the segment's statistics supply document frequency and length. A query term found
 * in a chunk's names (its symbol, file stem, folders) adds a boost: naming a thing is the
 * strongest evidence a chunk is about it.
 */
export interface LexicalHit {
  readonly docId: number;
  readonly chunkId: string;
  readonly score: number;
  /** Query terms the chunk contains (text or names). */
  readonly matched: readonly string[];
}

export interface Bm25Options {
  /** How much each term counts (1 when absent): a synonym the question did not use counts less. */
  readonly queryWeights?: ReadonlyMap<string, number>;
  /**
   * How much a term found in a chunk's names counts (its query weight when absent): a word the
   * question only implies matches a name without saying the question names that thing.
   */
  readonly nameWeights?: ReadonlyMap<string, number>;
}

const K1 = 1.2;
const B = 0.75;
/** Added per matched name term, times the term's idf. */
const NAME_BOOST = 2.5;
/** Terms held by more than this share of a level's chunks carry too little to fetch postings for. */
const MAX_DOCUMENT_SHARE = 0.5;

/** A term's rarity among `documents`, `frequency` of which hold it. */
export function bm25Idf(documents: number, frequency: number): number {
  return Math.log(1 + (documents - frequency + 0.5) / (frequency + 0.5));
}

/** What one term adds to a document's score: its frequency there, saturated and normalised by length. */
export function bm25TermScore(
  idf: number,
  tf: number,
  length: number,
  averageLength: number,
): number {
  return tf ? (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * length) / (averageLength || 1))) : 0;
}

export function bm25Search(
  index: LexicalIndex,
  level: ChunkLevel,
  terms: readonly string[],
  limit: number,
  options: Bm25Options = {},
): LexicalHit[] {
  const query = scoredTerms(index, level, terms, options);
  if (!query || limit <= 0) return [];
  const found = query.terms.some((term) => term.weight < 0)
    ? exhaustive(query, limit)
    : accumulated(query, limit);
  return found.map((entry) => ({
    docId: entry.docId,
    chunkId: index.chunkIdOf(entry.docId)!,
    score: entry.score,
    matched: entry.matched,
  }));
}

/** One query term with its posting list, its weight (query weight × idf) and its name boost. */
interface ScoredTerm {
  readonly term: string;
  readonly weight: number;
  readonly nameScore: number;
  readonly list: PostingList;
}

interface ScoredQuery {
  readonly index: LexicalIndex;
  /** In the order the query gave them: scores are summed and `matched` listed in this order. */
  readonly terms: readonly ScoredTerm[];
  readonly averageLength: number;
}

interface Scored {
  readonly docId: number;
  readonly score: number;
  readonly matched: readonly string[];
}

/** The query's terms that count: present at `level`, and not held by most of its chunks. */
function scoredTerms(
  index: LexicalIndex,
  level: ChunkLevel,
  terms: readonly string[],
  options: Bm25Options,
): ScoredQuery | null {
  const { documents, averageLength } = index.levelStats(level);
  if (!documents || !terms.length) return null;
  const present: { term: string; weight: number; nameScore: number; frequency: number }[] = [];
  for (const term of new Set(terms)) {
    const frequency = index.documentFrequencyOf(level, term);
    if (!frequency) continue;
    const idf = bm25Idf(documents, frequency);
    const queryWeight = options.queryWeights?.get(term) ?? 1;
    const nameWeight = options.nameWeights?.get(term) ?? queryWeight;
    present.push({
      term,
      weight: queryWeight * idf,
      nameScore: nameWeight * idf * NAME_BOOST,
      frequency,
    });
  }
  const kept: ScoredTerm[] = [];
  for (const { term, weight, nameScore, frequency } of present) {
    if (frequency > documents * MAX_DOCUMENT_SHARE && present.length > 1) continue;
    const list = index.postingList(level, term);
    if (!list) continue;
    kept.push({ term, weight, nameScore, list });
  }
  return { index, terms: kept, averageLength };
}

/** What term `t` adds to the chunk at position `at` of its list. */
function contribution(query: ScoredQuery, t: ScoredTerm, at: number): number {
  const packed = t.list.payload[at]!;
  const docId = t.list.docs[at]!;
  const tf = packed >>> 1;
  let score = bm25TermScore(t.weight, tf, query.index.lengthOf(docId), query.averageLength);
  if (packed & 1) score += t.nameScore;
  return score;
}

/**
 * Reusable per-document sums and the list of documents touched, cleared after each search
 * (searches run one at a time): a list of every matching chunk per question was megabytes for
 * the collector.
 */
let scratch: { scores: Float64Array; seen: Uint8Array; touched: Int32Array } | null = null;

/**
 * Top-k by summing term after term into one array indexed by doc id: each posting is one add,
 * with no per-chunk bookkeeping, then only the chunks touched are ranked. Sums are made in query
 * order, as the exhaustive scorer makes them, so both give the same numbers.
 */
/** The matched terms of an entry offered to the heap, before they are listed. */
const NOT_LISTED: readonly string[] = [];

function accumulated(query: ScoredQuery, limit: number): Scored[] {
  const { index } = query;
  if (!scratch || scratch.scores.length < index.docIdLimit)
    scratch = {
      scores: new Float64Array(index.docIdLimit * 2),
      seen: new Uint8Array(index.docIdLimit * 2),
      touched: new Int32Array(index.docIdLimit * 2),
    };
  const { scores, seen, touched } = scratch;
  let touchedCount = 0;
  for (const term of query.terms) {
    const { docs, payload, size } = term.list;
    const { nameScore } = term;
    for (let at = 0; at < size; at++) {
      const docId = docs[at]!;
      if (!index.isLive(docId)) continue;
      if (!seen[docId]) {
        seen[docId] = 1;
        touched[touchedCount++] = docId;
      }
      const packed = payload[at]!;
      let score = bm25TermScore(
        term.weight,
        packed >>> 1,
        index.lengthOf(docId),
        query.averageLength,
      );
      if (packed & 1) score += nameScore;
      scores[docId] += score;
    }
  }
  const heap = new TopK(limit, rankIn(index));
  // the heap's threshold, kept here as it changes: asked of the heap per chunk, each answer was
  // a number boxed for the collector
  let threshold = heap.threshold;
  for (let i = 0; i < touchedCount; i++) {
    const docId = touched[i]!;
    const score = scores[docId]!;
    scores[docId] = 0;
    seen[docId] = 0;
    // the matched terms are listed for the entries kept only (below): none are listed for an offer
    if ((!heap.full || score >= threshold) && heap.offer({ docId, score, matched: NOT_LISTED }))
      threshold = heap.threshold;
  }
  return heap.sorted().map((entry) => ({
    ...entry,
    matched: query.terms.filter((term) => holds(term.list, entry.docId)).map((term) => term.term),
  }));
}

function holds(list: PostingList, docId: number): boolean {
  const at = seek(list, 0, docId);
  return at < list.size && list.docs[at] === docId;
}

/** The first position at or after `from` whose chunk id is at least `docId` (galloping, then bisection). */
function seek(list: PostingList, from: number, docId: number): number {
  if (from >= list.size || list.docs[from]! >= docId) return from;
  let step = 1;
  let low = from;
  let high = from + 1;
  while (high < list.size && list.docs[high]! < docId) {
    low = high;
    step *= 2;
    high = from + step;
  }
  high = Math.min(high, list.size);
  while (low + 1 < high) {
    const middle = (low + high) >>> 1;
    if (list.docs[middle]! < docId) low = middle;
    else high = middle;
  }
  return high;
}

/** Every chunk of every list scored: the reference the top-k search must agree with. */
function exhaustive(query: ScoredQuery, limit: number): Scored[] {
  const scores = new Map<number, { score: number; matched: string[] }>();
  for (const term of query.terms) {
    for (let at = 0; at < term.list.size; at++) {
      const docId = term.list.docs[at]!;
      if (!query.index.isLive(docId)) continue;
      const entry = scores.get(docId) ?? { score: 0, matched: [] };
      entry.score += contribution(query, term, at);
      entry.matched.push(term.term);
      scores.set(docId, entry);
    }
  }
  return [...scores]
    .map(([docId, entry]) => ({ docId, ...entry }))
    .sort(rankIn(query.index))
    .slice(0, limit);
}

/** Scores every chunk holding a query term: for tests that check the top-k search against it. */
export function bm25SearchExhaustive(
  index: LexicalIndex,
  level: ChunkLevel,
  terms: readonly string[],
  limit: number,
  options: Bm25Options = {},
): LexicalHit[] {
  const query = scoredTerms(index, level, terms, options);
  if (!query || limit <= 0) return [];
  return exhaustive(query, limit).map((entry) => ({
    ...entry,
    chunkId: index.chunkIdOf(entry.docId)!,
  }));
}

type Rank = (a: Scored, b: Scored) => number;

/**
 * Best score first; ties by chunk id, because the order chunks were indexed in (which decides doc
 * ids) must not decide what makes the cut. Pruning skips only chunks that score strictly lower
 * than the threshold, so a tie is always decided here.
 */
function rankIn(index: LexicalIndex): Rank {
  return (a, b) =>
    b.score - a.score || compareIds(index.chunkIdOf(a.docId)!, index.chunkIdOf(b.docId)!);
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The best `limit` entries seen, as a min-heap on rank; `threshold` is the weakest one's score. */
class TopK {
  private readonly entries: Scored[] = [];

  constructor(
    private readonly limit: number,
    private readonly rank: Rank,
  ) {}

  get full(): boolean {
    return this.entries.length >= this.limit;
  }

  get threshold(): number {
    return this.full ? this.entries[0]!.score : -Infinity;
  }

  /** Keeps `entry` if it ranks above the weakest held; says whether the threshold may have risen. */
  offer(entry: Scored): boolean {
    if (!this.full) {
      this.entries.push(entry);
      this.up(this.entries.length - 1);
      return this.full;
    }
    if (this.rank(entry, this.entries[0]!) >= 0) return false;
    this.entries[0] = entry;
    this.down(0);
    return true;
  }

  sorted(): Scored[] {
    return [...this.entries].sort(this.rank);
  }

  /** Whether `a` ranks below `b` (the weaker one sits at the top of the heap). */
  private weaker(a: number, b: number): boolean {
    return this.rank(this.entries[a]!, this.entries[b]!) > 0;
  }

  private up(at: number): void {
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.weaker(at, parent)) return;
      this.swap(at, parent);
      at = parent;
    }
  }

  private down(at: number): void {
    for (;;) {
      const left = at * 2 + 1;
      let weakest = at;
      if (left < this.entries.length && this.weaker(left, weakest)) weakest = left;
      if (left + 1 < this.entries.length && this.weaker(left + 1, weakest)) weakest = left + 1;
      if (weakest === at) return;
      this.swap(at, weakest);
      at = weakest;
    }
  }

  private swap(a: number, b: number): void {
    const held = this.entries[a]!;
    this.entries[a] = this.entries[b]!;
    this.entries[b] = held;
  }
}
