import { z } from 'zod';
import { elapsedMs, getLogger } from '../log/logger';
import { describeError, fail, ok, type Result } from '../util/result';
import { STOP_WORDS } from './preprocess';

/**
 * Corrective retrieval (CRAG). An LLM-free evaluator scores the retrieved set on
 * four criteria — keyword overlap 0.30, semantic coherence 0.40, length adequacy 0.15, source
 * diversity 0.15 — and decides: RELEVANT (> 0.75) keeps it; PARTIAL (> 0.50) expands the query and
 * merges a second retrieval; IRRELEVANT widens to every level and, only where the user configured
 * a SearXNG endpoint, asks the web.
 */
export type CragDecision = 'RELEVANT' | 'PARTIAL' | 'IRRELEVANT';

export interface CragEvaluation {
  readonly decision: CragDecision;
  readonly score: number;
  readonly keywordOverlap: number;
  readonly semanticCoherence: number;
  readonly lengthAdequacy: number;
  readonly diversity: number;
  readonly reasoning: string;
}

export interface EvaluatedArtifact {
  readonly content: string;
  readonly path: string;
  /** Similarity to the question, 0–1. */
  readonly relevance: number;
}

const WEIGHTS = {
  keywordOverlap: 0.3,
  semanticCoherence: 0.4,
  lengthAdequacy: 0.15,
  diversity: 0.15,
};
export const RELEVANT_THRESHOLD = 0.75;
export const PARTIAL_THRESHOLD = 0.5;
const MIN_TOKENS_PER_CHUNK = 100;

const log = getLogger('search.crag');

export function evaluateRetrieval(
  query: string,
  artifacts: readonly EvaluatedArtifact[],
): CragEvaluation {
  const keywords = [
    ...new Set(
      query
        .toLowerCase()
        .split(/\s+/)
        .map((word) => word.replace(/[^\p{L}\p{N}_]/gu, '')),
    ),
  ].filter((word) => word.length > 2 && !STOP_WORDS.has(word));
  const combined = artifacts.map((artifact) => artifact.content.toLowerCase()).join(' ');
  const keywordOverlap =
    keywords.length && artifacts.length
      ? keywords.filter((keyword) => combined.includes(keyword)).length / keywords.length
      : 0;
  const relevances = artifacts.map((artifact) => artifact.relevance);
  const mean = relevances.length ? relevances.reduce((a, b) => a + b, 0) / relevances.length : 0;
  const variance = relevances.length
    ? relevances.reduce((sum, value) => sum + (value - mean) ** 2, 0) / relevances.length
    : 0;
  const semanticCoherence = clamp(mean * (1 - Math.min(variance, 0.3)));
  const tokens = artifacts.reduce(
    (sum, artifact) => sum + Math.round(artifact.content.split(/\s+/).length * 1.3),
    0,
  );
  const lengthAdequacy = artifacts.length
    ? Math.min(1, tokens / (MIN_TOKENS_PER_CHUNK * artifacts.length))
    : 0;
  const diversity = artifacts.length
    ? Math.min(1, new Set(artifacts.map((artifact) => artifact.path)).size / artifacts.length)
    : 0;
  const score =
    WEIGHTS.keywordOverlap * keywordOverlap +
    WEIGHTS.semanticCoherence * semanticCoherence +
    WEIGHTS.lengthAdequacy * lengthAdequacy +
    WEIGHTS.diversity * diversity;
  const decision: CragDecision =
    score > RELEVANT_THRESHOLD ? 'RELEVANT' : score > PARTIAL_THRESHOLD ? 'PARTIAL' : 'IRRELEVANT';
  const reasoning =
    decision === 'RELEVANT'
      ? `High relevance (${score.toFixed(2)}): the retrieved context is sufficient.`
      : decision === 'PARTIAL'
        ? `Partial relevance (${score.toFixed(2)}): expanding the query.`
        : `Low relevance (${score.toFixed(2)}): widening the search.`;
  const evaluation = {
    decision,
    score,
    keywordOverlap,
    semanticCoherence,
    lengthAdequacy,
    diversity,
    reasoning,
  };
  log.info('crag_evaluated', {
    decision,
    score: round(score),
    keyword_overlap: round(keywordOverlap),
    semantic_coherence: round(semanticCoherence),
    length_adequacy: round(lengthAdequacy),
    diversity: round(diversity),
    artifacts: artifacts.length,
  });
  return evaluation;
}

export interface WebResult {
  readonly url: string;
  readonly title: string;
  readonly content: string;
}

const SearxResponse = z.object({
  results: z
    .array(
      z.looseObject({
        url: z.string(),
        title: z.string().default(''),
        content: z.string().default(''),
      }),
    )
    .default([]),
});
const WEB_TIMEOUT_MS = 5000;
const WEB_RESULTS = 5;

/** Asks a SearXNG instance (its JSON API) — only ever called when the user configured one. */
export async function searchWeb(
  baseUrl: string,
  query: string,
  signal?: AbortSignal,
): Promise<Result<WebResult[]>> {
  const started = performance.now();
  const url = new URL('/search', baseUrl);
  url.searchParams.set('q', query);
  url.searchParams.set('format', 'json');
  try {
    const response = await fetch(url, {
      signal: signal
        ? AbortSignal.any([signal, AbortSignal.timeout(WEB_TIMEOUT_MS)])
        : AbortSignal.timeout(WEB_TIMEOUT_MS),
    });
    if (!response.ok)
      return fail('io_error', `The web search at ${baseUrl} answered ${response.status}.`);
    const parsed = SearxResponse.safeParse(await response.json());
    if (!parsed.success)
      return fail('io_error', `The web search at ${baseUrl} sent an unexpected answer.`);
    const results = parsed.data.results
      .slice(0, WEB_RESULTS)
      .map((result) => ({ url: result.url, title: result.title, content: result.content }));
    log.info('web_search_completed', {
      base_url: baseUrl,
      results: results.length,
      duration_ms: elapsedMs(started),
    });
    return ok(results);
  } catch (cause) {
    log.warn('web_search_failed', { base_url: baseUrl, error: describeError(cause) });
    return fail('io_error', `The web search at ${baseUrl} failed: ${describeError(cause)}`);
  }
}

function clamp(value: number): number {
  return Math.max(0, Math.min(1, value));
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
