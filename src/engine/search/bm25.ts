import type { ChunkLevel } from '../model';
import type { LexicalIndex } from '../store/lexical';

/**
 * BM25 over the lexical segment: FlexSearch supplies the chunks holding each query term, the
 * segment's statistics supply term frequency, document frequency and length. A query term found
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
  const queryWeight = (term: string) => options.queryWeights?.get(term) ?? 1;
  const { documents, averageLength } = index.levelStats(level);
  if (!documents || !terms.length) return [];
  const unique = [...new Set(terms)];
  const weights = new Map<string, number>();
  for (const term of unique) {
    const frequency = index.documentFrequencyOf(level, term);
    if (!frequency) continue;
    weights.set(term, queryWeight(term) * bm25Idf(documents, frequency));
  }
  const scores = new Map<number, { score: number; matched: string[] }>();
  for (const [term, idf] of weights) {
    if (index.documentFrequencyOf(level, term) > documents * MAX_DOCUMENT_SHARE && weights.size > 1)
      continue;
    for (const docId of index.postings(level, term)) {
      const doc = index.document(docId)!;
      const tf = doc.termFrequency(term);
      let score = bm25TermScore(idf, tf, doc.length, averageLength);
      if (doc.hasNameTerm(term)) score += idf * NAME_BOOST;
      const entry = scores.get(docId) ?? { score: 0, matched: [] };
      entry.score += score;
      entry.matched.push(term);
      scores.set(docId, entry);
    }
  }
  return [...scores]
    .sort((a, b) => b[1].score - a[1].score)
    .slice(0, limit)
    .map(([docId, entry]) => ({
      docId,
      chunkId: index.document(docId)!.chunkId,
      score: entry.score,
      matched: entry.matched,
    }));
}
