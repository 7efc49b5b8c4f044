import { getLogger } from '../log/logger';
import { camelSnakeTokenize } from '../text/tokenize';
import { STOP_WORDS, type ParsedQuery } from './preprocess';

/**
 * How technical a question is, from 0 (plain English) to 1 (names code and a file): it decides
 * how much lexical matching counts against semantic similarity. Three signals, weighted as in the
 * seed: a code identifier (0.35), a file path or attachment (0.45), and the share of the
 * question's words that occur in the index's vocabulary (0.20).
 */
export interface Technicality {
  readonly identifier: number;
  readonly filePath: number;
  readonly vocabularyOverlap: number;
  readonly score: number;
  readonly lexicalWeight: number;
  readonly semanticWeight: number;
  /** The measured trust in the embedding model that scaled semanticWeight (1: the default weights, unscaled). */
  readonly semanticTrust: number;
}

const log = getLogger('search.technicality');

export function scoreTechnicality(
  query: ParsedQuery,
  vocabulary: { has(term: string): boolean },
  semanticTrust = 1,
): Technicality {
  const identifier = query.extractedIdentifiers.length > 0 ? 1 : 0;
  const filePath = query.extractedFilePaths.length > 0 || query.attachedFilePath !== null ? 1 : 0;
  const tokens = camelSnakeTokenize(query.naturalLanguage).filter(
    (token) => !STOP_WORDS.has(token),
  );
  const vocabularyOverlap = tokens.length
    ? tokens.filter((token) => vocabulary.has(token)).length / tokens.length
    : 0;
  const score = identifier * 0.35 + filePath * 0.45 + vocabularyOverlap * 0.2;
  const weights = retrievalWeights(score, semanticTrust);
  log.info('technicality_scored', {
    s1_identifier: identifier,
    s2_file_path: filePath,
    s3_vocab_overlap: round(vocabularyOverlap),
    final_score: round(score),
    bm25_weight: round(weights.lexical),
    semantic_weight: round(weights.semantic),
    semantic_trust: semanticTrust,
  });
  return {
    identifier,
    filePath,
    vocabularyOverlap,
    score,
    lexicalWeight: weights.lexical,
    semanticWeight: weights.semantic,
    semanticTrust,
  };
}

/** The semantic weight of a question with no code in it (technicality 0), before calibration. */
export const PLAIN_ENGLISH_SEMANTIC_WEIGHT = 0.7;

/**
 * The default weights (lexical 0.3 + 0.5·technicality, semantic the rest), with the semantic weight
 * scaled by how far the embedding model can be trusted on this codebase (see calibration.ts).
 */
export function retrievalWeights(
  technicality: number,
  semanticTrust = 1,
): { lexical: number; semantic: number } {
  const semantic = (PLAIN_ENGLISH_SEMANTIC_WEIGHT - 0.5 * technicality) * semanticTrust;
  return { lexical: 1 - semantic, semantic };
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
