import type { ChunkMeta } from '../store/tables';
import type { LexicalIndex } from '../store/lexical';
import { bm25Idf } from './bm25';

/**
 * Pseudo-relevance feedback at chunk level. When the first hits of the fused list all stand in
 * one file, they name what the question asks about (a class, a module), and the words they share
 * beyond the question's own (its attributes, helpers, the names its methods use) are what a
 * function answering the question shares with them while holding few of the question's words.
 * Those words join the lexical query at low weight.
 */
export interface FeedbackOptions {
  /** How many of the first fused hits are read; all of them must share one file. */
  readonly depth: number;
  /** How many words join the query. */
  readonly words: number;
}

/** A word counts as shared when this many of the leading hits hold it. */
const SHARED_BY = 2;

/**
 * The words feedback adds, rarest first, or none when the first hits do not share one file: each
 * held by at least two of the leading hits and by another function chunk besides (a word only
 * they hold leads nowhere), not a query term, ranked by its rarity among function chunks.
 */
export function feedbackWords(
  lexical: LexicalIndex,
  catalog: ReadonlyMap<string, ChunkMeta>,
  leading: readonly string[],
  query: ReadonlySet<string>,
  options: FeedbackOptions,
): string[] {
  const first = leading.slice(0, options.depth);
  const files = new Set(first.map((chunkId) => catalog.get(chunkId)?.filePath));
  const [file] = files;
  if (first.length < options.depth || files.size !== 1 || !file) return [];
  const held = new Map<string, number>();
  for (const chunkId of first) {
    const docId = lexical.docIdAt(file, chunkId);
    if (docId === undefined) continue;
    for (const term of lexical.termsOf(docId))
      if (!query.has(term)) held.set(term, (held.get(term) ?? 0) + 1);
  }
  const { documents } = lexical.levelStats('function');
  const rarity = new Map<string, number>();
  for (const [term, hits] of held) {
    const frequency = lexical.documentFrequencyOf('function', term);
    if (hits >= SHARED_BY && frequency >= 2) rarity.set(term, bm25Idf(documents, frequency));
  }
  return [...rarity]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, options.words)
    .map(([term]) => term);
}
