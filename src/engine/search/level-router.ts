import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Embedder } from '../embed/embedder';
import { CHUNK_LEVELS, type ChunkLevel } from '../model';
import type { LlmClient } from '../llm/client';
import { elapsedMs, getLogger } from '../log/logger';
import { describeError } from '../util/result';
import type { ParsedQuery } from './preprocess';

/**
 * Which chunk levels a question is about, decided in three layers that stop at the first
 * confident answer (every layer's result is logged either way):
 *   1. regular expressions over the question's phrasing — free, and right for explicit phrasings;
 *   2. nearest phrases of a bank of labelled descriptions (data/query-bank.json), by embedding;
 *   3. a language model's classification, when one is configured.
 * Anything unsure searches every level: a wrong restriction loses answers silently.
 * Fast mode runs the cheap layers; thinking mode runs all of them and searches every level.
 */
export type SearchMode = 'fast' | 'thinking';
export type DecidingLayer = 1 | 2 | 3 | 'fallback';

export interface LevelRoute {
  readonly levels: readonly ChunkLevel[];
  readonly decidedBy: DecidingLayer;
  readonly layers: {
    readonly regex: { matched: boolean; level: ChunkLevel | null; pattern: string | null };
    readonly embedding: {
      scores: Record<ChunkLevel, number>;
      best: ChunkLevel;
      confident: boolean;
    } | null;
    readonly llm: { level: string; confidence: number; reasoning: string } | null;
  };
}

const PATTERNS: Record<ChunkLevel, RegExp[]> = {
  directory: [
    /what does (the )?[\w/]+ (folder|directory|module|package) do/i,
    /how do .+ (work|fit) together/i,
    /(overview|architecture|structure) of [\w/]+/i,
    /what (files|modules) are in/i,
    /purpose of (the )?[\w/]+ (directory|folder|package)/i,
  ],
  file: [
    /what (does|is) (this|the) (file|module)/i,
    /what (is in|imports|exports) [\w.]+\.(py|js|ts)/i,
    /overview of [\w.]+\.(py|js|ts)/i,
    /(structure|contents) of [\w.]+\.(py|js|ts)/i,
    /tell me about [\w.]+\.(py|js|ts)/i,
  ],
  class: [
    /what (does|is) (the|this) \w+ class/i,
    /how (does|is) \w+ (class|object) (work|structured|used)/i,
    /(methods|attributes|properties) (of|in|on) \w+/i,
    /what (can|does) \w+ (do|provide|expose)/i,
  ],
  function: [
    /what does (the|this)?( )?\w+ (function|method|procedure) do/i,
    /how (does|is) \w+ (called|used|implemented|work)/i,
    /(return|returns|return value|output) of \w+/i,
    /(parameters?|arguments?|inputs?) (of|for|to) \w+/i,
    /how to (use|call|invoke) \w+/i,
    /what (happens|occurs) when \w+ is called/i,
  ],
};
/** When patterns of several levels match, the most specific wins. */
const SPECIFICITY: readonly ChunkLevel[] = ['function', 'class', 'file', 'directory'];
const BANK_CONFIDENT_SCORE = 0.65;
const BANK_CONFIDENT_GAP = 0.1;
const LLM_CONFIDENT = 0.6;

const Classification = z.object({
  level: z.enum(['directory', 'file', 'class', 'function', 'all']),
  confidence: z.number().min(0).max(1),
  reasoning: z.string(),
});

const log = getLogger('search.router');

export class LevelRouter {
  private bank: { levels: ChunkLevel[]; vectors: Float32Array[] } | null | undefined;

  constructor(private readonly embedder: Embedder | null) {}

  async route(
    query: ParsedQuery,
    mode: SearchMode,
    llm: LlmClient | null,
    signal?: AbortSignal,
  ): Promise<LevelRoute> {
    const started = performance.now();
    log.info('routing_started', { mode });
    try {
      const regex = this.regexLayer(query);
      const embedding = await this.embeddingLayer(query);
      const llmResult =
        mode === 'thinking' || (!regex.matched && !embedding?.confident)
          ? await this.llmLayer(query, llm, signal)
          : null;
      let levels: readonly ChunkLevel[] = CHUNK_LEVELS;
      let decidedBy: DecidingLayer = 'fallback';
      if (mode === 'fast' && regex.matched) [levels, decidedBy] = [[regex.level!], 1];
      else if (mode === 'fast' && embedding?.confident) [levels, decidedBy] = [[embedding.best], 2];
      else if (
        mode === 'fast' &&
        llmResult &&
        llmResult.level !== 'all' &&
        llmResult.confidence >= LLM_CONFIDENT
      )
        [levels, decidedBy] = [[llmResult.level as ChunkLevel], 3];
      else {
        const reason =
          mode === 'thinking'
            ? 'thinking_mode_all_levels'
            : llmResult
              ? 'layer3_low_confidence'
              : 'no_confident_layer';
        if (mode === 'fast') log.warn('routing_fallback_triggered', { reason });
      }
      log.info('routing_completed', {
        final_levels: levels,
        decided_by_layer: decidedBy,
        total_duration_ms: elapsedMs(started),
      });
      return { levels, decidedBy, layers: { regex, embedding, llm: llmResult } };
    } catch (cause) {
      log.warn('routing_fallback_triggered', { reason: 'exception', error: describeError(cause) });
      return {
        levels: CHUNK_LEVELS,
        decidedBy: 'fallback',
        layers: {
          regex: { matched: false, level: null, pattern: null },
          embedding: null,
          llm: null,
        },
      };
    }
  }

  private regexLayer(query: ParsedQuery): LevelRoute['layers']['regex'] {
    const started = performance.now();
    let found: { level: ChunkLevel; pattern: string } | null = null;
    for (const level of SPECIFICITY) {
      const pattern = PATTERNS[level].find((candidate) => candidate.test(query.naturalLanguage));
      if (pattern) {
        found = { level, pattern: pattern.source };
        break;
      }
    }
    log.info('layer1_result', {
      matched: !!found,
      matched_level: found?.level ?? null,
      matched_pattern: found?.pattern ?? null,
      duration_ms: elapsedMs(started),
    });
    return { matched: !!found, level: found?.level ?? null, pattern: found?.pattern ?? null };
  }

  private async embeddingLayer(query: ParsedQuery): Promise<LevelRoute['layers']['embedding']> {
    const started = performance.now();
    const bank = await this.loadBank();
    if (!bank || !this.embedder) {
      log.info('layer2_result', {
        skipped: true,
        reason: this.embedder ? 'no phrase bank' : 'no embedding model',
        duration_ms: elapsedMs(started),
      });
      return null;
    }
    const [vector] = await this.embedder.embed([query.naturalLanguage]);
    const scores = Object.fromEntries(CHUNK_LEVELS.map((level) => [level, -1])) as Record<
      ChunkLevel,
      number
    >;
    bank.vectors.forEach((phrase, i) => {
      const level = bank.levels[i]!;
      scores[level] = Math.max(scores[level], dot(vector!, phrase));
    });
    const ranked = [...CHUNK_LEVELS].sort((a, b) => scores[b] - scores[a]);
    const best = ranked[0]!;
    const gap = scores[best] - scores[ranked[1]!];
    const confident = scores[best] > BANK_CONFIDENT_SCORE && gap > BANK_CONFIDENT_GAP;
    log.info('layer2_result', {
      level_scores: roundAll(scores),
      best_level: best,
      best_score: round(scores[best]),
      confidence_gap: round(gap),
      confident,
      duration_ms: elapsedMs(started),
    });
    return { scores, best, confident };
  }

  private async llmLayer(
    query: ParsedQuery,
    llm: LlmClient | null,
    signal?: AbortSignal,
  ): Promise<LevelRoute['layers']['llm']> {
    if (!llm) return null;
    const started = performance.now();
    const result = await llm.complete({
      system:
        'You route questions about a codebase to the level of code that answers them: directory (how parts fit together), file (what a module holds), class (what a type exposes), function (how something is implemented), or all when several levels matter.',
      prompt: `Question: ${query.naturalLanguage}\nAnswer with the level, your confidence from 0 to 1, and one sentence of reasoning.`,
      schema: Classification,
      schemaName: 'QueryClassification',
      ...(signal ? { signal } : {}),
    });
    if (!result.ok) {
      log.warn('layer3_result', {
        failed: true,
        error: result.error.message,
        duration_ms: elapsedMs(started),
      });
      return null;
    }
    log.info('layer3_result', {
      classified_level: result.value.level,
      confidence: result.value.confidence,
      reasoning: result.value.reasoning,
      duration_ms: elapsedMs(started),
    });
    return result.value;
  }

  /** The bank's vectors, or its phrases embedded with the loaded model when that model differs. */
  private async loadBank(): Promise<{ levels: ChunkLevel[]; vectors: Float32Array[] } | null> {
    if (this.bank !== undefined) return this.bank;
    try {
      const file = QueryBankFile.parse(JSON.parse(readFileSync(bankPath(), 'utf8')));
      const levels = file.entries.map((entry) => entry.level);
      if (!this.embedder) return (this.bank = null);
      const vectors =
        this.embedder.id.endsWith(file.model) && this.embedder.dimensions === file.dimensions
          ? file.entries.map((entry) => decodeVector(entry.vector))
          : await this.embedder.embed(file.entries.map((entry) => entry.phrase));
      this.bank = { levels, vectors };
    } catch (cause) {
      log.warn('query_bank_unavailable', { error: describeError(cause) });
      this.bank = null;
    }
    return this.bank;
  }
}

const QueryBankFile = z.object({
  model: z.string(),
  dimensions: z.number().int(),
  entries: z.array(
    z.object({
      level: z.enum(['directory', 'file', 'class', 'function']),
      phrase: z.string(),
      vector: z.string(),
    }),
  ),
});

/** data/query-bank.json: beside the bundle (dist/data), or in the repository from sources. */
function bankPath(): string {
  const bundled = path.join(__dirname, 'data', 'query-bank.json');
  return existsSync(bundled)
    ? bundled
    : path.resolve(__dirname, '..', '..', '..', 'data', 'query-bank.json');
}

function decodeVector(base64: string): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  return new Float32Array(new Uint8Array(bytes).buffer);
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length && i < b.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function roundAll(scores: Record<ChunkLevel, number>): Record<ChunkLevel, number> {
  return Object.fromEntries(
    Object.entries(scores).map(([level, score]) => [level, round(score)]),
  ) as Record<ChunkLevel, number>;
}
