import type { Embedder } from '../embed/embedder';
import { CHUNK_LEVELS, type ChunkLevel } from '../index/model';
import { elapsedMs, getLogger } from '../log/logger';
import type { IndexStore } from '../store/store';
import { indexTerms } from '../text/tokenize';
import { bm25Search } from './bm25';
import { weightedRrf, type FusedHit } from './fusion';

/**
 * Hybrid retrieval: BM25 and vector similarity, per level, fused by weighted RRF. Every call is
 * logged with what it saw, so "why didn't it find X" can be answered from the log.
 */
export interface HybridOptions {
  readonly levels?: readonly ChunkLevel[];
  readonly limit: number;
  readonly lexicalWeight: number;
  readonly semanticWeight: number;
}

export interface HybridHit extends FusedHit {
  readonly lexicalScore: number | null;
  readonly semanticDistance: number | null;
  readonly matched: readonly string[];
}

const log = getLogger('search.hybrid');

/** Query words too common in questions to say anything about code. */
export const QUERY_STOP_WORDS = new Set([
  'the', 'and', 'for', 'with', 'this', 'that', 'what', 'how', 'does', 'from', 'into', 'about', 'which', 'when',
  'where', 'why', 'who', 'is', 'are', 'was', 'were', 'be', 'been', 'do', 'did', 'an', 'in', 'on', 'of', 'to', 'it',
  'its', 'as', 'at', 'by', 'or', 'if', 'can', 'could', 'should', 'would', 'will', 'me', 'my', 'we', 'our', 'you',
  'your', 'there', 'their', 'them', 'they', 'so', 'than', 'then', 'but', 'not', 'no', 'get', 'got', 'any', 'all',
  'some', 'out', 'up', 'use', 'used', 'using', 'code', 'happens', 'work', 'works', 'way',
]);

export function queryTerms(text: string): string[] {
  return indexTerms(text).filter((term) => !QUERY_STOP_WORDS.has(term));
}

export async function hybridRetrieve(store: IndexStore, embedder: Embedder | null, query: string, options: HybridOptions): Promise<HybridHit[]> {
  const started = performance.now();
  const levels = options.levels ?? CHUNK_LEVELS;
  const terms = queryTerms(query);
  const [vector] = embedder ? await embedder.embed([query]) : [undefined];
  const hits: HybridHit[] = [];
  for (const level of levels) {
    const lexical = bm25Search(store.lexical, level, terms, options.limit);
    log.info('bm25_retrieve', { query_tokens: terms, level, top_k: options.limit, results_returned: lexical.length });
    const semantic = vector ? await store.tables.nearest(vector, options.limit, [level]) : [];
    log.info('semantic_retrieve', { query_text_length: query.length, level, top_k: options.limit, results_returned: semantic.length });
    const fused = weightedRrf([
      { ids: lexical.map((hit) => hit.chunkId), weight: options.lexicalWeight },
      { ids: semantic.map((hit) => hit.id), weight: options.semanticWeight },
    ]);
    const lexicalById = new Map(lexical.map((hit) => [hit.chunkId, hit]));
    const semanticById = new Map(semantic.map((hit) => [hit.id, hit]));
    for (const hit of fused) {
      hits.push({ ...hit, lexicalScore: lexicalById.get(hit.id)?.score ?? null, semanticDistance: semanticById.get(hit.id)?.distance ?? null, matched: lexicalById.get(hit.id)?.matched ?? [] });
    }
  }
  const merged = dedupe(hits).slice(0, options.limit);
  log.info('hybrid_retrieve_completed', {
    levels,
    total_results_before_merge: hits.length,
    total_results_after_merge: merged.length,
    consensus_hits: merged.filter((hit) => hit.ranks.every((rank) => rank !== null)).length,
    duration_ms: elapsedMs(started),
  });
  return merged;
}

function dedupe(hits: HybridHit[]): HybridHit[] {
  const best = new Map<string, HybridHit>();
  for (const hit of hits) if (!best.has(hit.id) || best.get(hit.id)!.score < hit.score) best.set(hit.id, hit);
  return [...best.values()].sort((a, b) => b.score - a.score);
}
