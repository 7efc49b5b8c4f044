import type { ChunkLevel } from '../model';
import type { LexicalIndex } from '../store/lexical';
import { bm25Search } from './bm25';
import { LANGUAGE_KEYWORDS, STOP_WORDS } from './preprocess';

/**
 * Query expansion the index derives from the codebase itself, with no word list: the words that
 * co-occur with the question's words in the chunks they reach best (pseudo-relevance feedback).
 * Rare words frequent in those chunks are the codebase's own names for what is asked about.
 */

/** How many of the best chunks lend their words. */
const SOURCE_CHUNKS = 5;
/** Words in more than this share of a level's chunks (self, none, return) say nothing. */
const COMMON_SHARE = 0.1;
const MIN_LENGTH = 4;

export function coOccurringTerms(
  terms: readonly string[],
  lexical: LexicalIndex,
  levels: readonly ChunkLevel[],
  count: number,
): string[] {
  const given = new Set(terms);
  const weights = new Map<string, number>();
  for (const level of levels) {
    const { documents } = lexical.levelStats(level);
    if (!documents) continue;
    for (const hit of bm25Search(lexical, level, terms, SOURCE_CHUNKS)) {
      const document = lexical.document(hit.docId);
      if (!document) continue;
      for (const candidate of lexical.termsOf(hit.docId)) {
        if (
          given.has(candidate) ||
          candidate.length < MIN_LENGTH ||
          STOP_WORDS.has(candidate) ||
          LANGUAGE_KEYWORDS.has(candidate)
        )
          continue;
        const frequency = lexical.documentFrequencyOf(level, candidate);
        if (frequency > documents * COMMON_SHARE) continue;
        const idf = Math.log(1 + documents / (1 + frequency));
        weights.set(
          candidate,
          (weights.get(candidate) ?? 0) + document.termFrequency(candidate) * idf,
        );
      }
    }
  }
  return [...weights]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, count)
    .map(([term]) => term);
}
