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
    : maxScore(query, limit);
  return found.map((entry) => ({
    docId: entry.docId,
    chunkId: index.document(entry.docId)!.chunkId,
    score: entry.score,
    matched: entry.matched,
  }));
}

/** One query term with its posting list, its weight (query weight × idf) and its bound. */
interface ScoredTerm {
  readonly term: string;
  readonly weight: number;
  readonly list: PostingList;
  /** No chunk gets more than this from the term. */
  readonly bound: number;
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
  readonly matched: string[];
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
  const present: { term: string; weight: number; frequency: number }[] = [];
  for (const term of new Set(terms)) {
    const frequency = index.documentFrequencyOf(level, term);
    if (!frequency) continue;
    const weight = (options.queryWeights?.get(term) ?? 1) * bm25Idf(documents, frequency);
    present.push({ term, weight, frequency });
  }
  const kept: ScoredTerm[] = [];
  for (const { term, weight, frequency } of present) {
    if (frequency > documents * MAX_DOCUMENT_SHARE && present.length > 1) continue;
    const list = index.postingList(level, term);
    if (!list) continue;
    kept.push({ term, weight, list, bound: termBound(weight, list, averageLength) });
  }
  return { index, terms: kept, averageLength };
}

/** The most a term of weight `weight` adds to any chunk of its list (saturation bounds tf's share). */
function termBound(weight: number, list: PostingList, averageLength: number): number {
  const text = list.maxTf ? bm25TermScore(weight, list.maxTf, list.minLength, averageLength) : 0;
  return text + (list.hasNames ? weight * NAME_BOOST : 0);
}

/** What term `t` adds to the chunk at position `at` of its list. */
function contribution(query: ScoredQuery, t: ScoredTerm, at: number): number {
  const packed = t.list.payload[at]!;
  const docId = t.list.docs[at]!;
  const tf = packed >>> 1;
  let score = bm25TermScore(t.weight, tf, query.index.lengthOf(docId), query.averageLength);
  if (packed & 1) score += t.weight * NAME_BOOST;
  return score;
}

/**
 * Top-k by MaxScore: terms are ordered by their bound; once `limit` chunks are held, terms whose
 * bounds together cannot lift a chunk past the weakest held one stop proposing candidates and are
 * only looked up (by galloping search) for chunks the others propose. Scores are summed in query
 * order, as the exhaustive scorer does, so both give the same numbers; equal scores rank by
 * ascending chunk id.
 */
function maxScore(query: ScoredQuery, limit: number): Scored[] {
  const { index } = query;
  const order = query.terms
    .map((term, position) => ({ term, position }))
    .sort((a, b) => a.term.bound - b.term.bound);
  const count = order.length;
  /** `prefix[i]`: the bounds of the `i` weakest terms added up. */
  const prefix = new Float64Array(count + 1);
  for (let i = 0; i < count; i++) prefix[i + 1] = prefix[i]! + order[i]!.term.bound;
  const cursor = new Int32Array(count);
  const parts = new Float64Array(query.terms.length);
  const hit = new Uint8Array(query.terms.length);
  const heap = new TopK(limit, rankIn(index));
  // allow for rounding: a bound within this of the threshold is not used to skip anything
  const slack = 1e-9 * (1 + prefix[count]!);
  let firstEssential = 0;
  for (;;) {
    let candidate = Number.MAX_SAFE_INTEGER;
    for (let i = firstEssential; i < count; i++) {
      const { list } = order[i]!.term;
      let at = cursor[i]!;
      while (at < list.size && !index.isLive(list.docs[at]!)) at++;
      cursor[i] = at;
      if (at < list.size && list.docs[at]! < candidate) candidate = list.docs[at]!;
    }
    if (candidate === Number.MAX_SAFE_INTEGER) break;
    parts.fill(0);
    hit.fill(0);
    let partial = 0;
    for (let i = firstEssential; i < count; i++) {
      const { term, position } = order[i]!;
      const at = cursor[i]!;
      if (at < term.list.size && term.list.docs[at] === candidate) {
        const score = contribution(query, term, at);
        parts[position] = score;
        hit[position] = 1;
        partial += score;
        cursor[i] = at + 1;
      }
    }
    let reachable = true;
    for (let i = firstEssential - 1; i >= 0; i--) {
      if (heap.full && partial + prefix[i + 1]! + slack <= heap.threshold) {
        reachable = false;
        break;
      }
      const { term, position } = order[i]!;
      const at = seek(term.list, cursor[i]!, candidate);
      cursor[i] = at;
      if (at < term.list.size && term.list.docs[at] === candidate) {
        const score = contribution(query, term, at);
        parts[position] = score;
        hit[position] = 1;
        partial += score;
      }
    }
    if (!reachable) continue;
    let score = 0;
    const matched: string[] = [];
    for (let t = 0; t < query.terms.length; t++) {
      if (!hit[t]) continue;
      score += parts[t]!;
      matched.push(query.terms[t]!.term);
    }
    if (heap.offer({ docId: candidate, score, matched })) {
      while (firstEssential < count && prefix[firstEssential + 1]! + slack <= heap.threshold)
        firstEssential++;
    }
  }
  return heap.sorted();
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
    chunkId: index.document(entry.docId)!.chunkId,
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
    b.score - a.score ||
    compareIds(index.document(a.docId)!.chunkId, index.document(b.docId)!.chunkId);
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
