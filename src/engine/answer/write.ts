import type { z } from 'zod';
import type { LlmClient } from '../llm/client';
import { getLogger } from '../log/logger';
import type { Result } from '../util/result';
import { adjustedConfidence, checkCitations } from './citations';
import type { Citation, Evidence } from './model';
import { contextBlock } from './prompts';
import type { ModelAnswer } from './schemas';

/**
 * One answer-writing call: the question and the context to the model, its structured answer
 * back (the prose streamed as it is written), the citations checked against the evidence shown.
 */
export interface WriteRequest<T extends ModelAnswer> {
  readonly llm: LlmClient;
  readonly system: string;
  readonly question: string;
  /** Everything the model reads (surroundings included). */
  readonly context: string;
  /** What it may cite. */
  readonly evidence: readonly Evidence[];
  readonly schema: z.ZodType<T>;
  readonly schemaName: string;
  readonly notes?: readonly string[];
  readonly onText?: (textSoFar: string) => void;
  readonly signal?: AbortSignal;
}

export interface Written<T extends ModelAnswer> {
  readonly raw: T;
  readonly citations: Citation[];
  readonly dropped: number;
  readonly confidence: number;
}

const log = getLogger('answer.write');

export async function writeAnswer<T extends ModelAnswer>(
  request: WriteRequest<T>,
): Promise<Result<Written<T>>> {
  const prompt = contextBlock(request.question, request.context, request.notes);
  log.info('llm_synthesis_call', {
    context_chunks: request.evidence.length,
    schema: request.schemaName,
  });
  const result = await request.llm.complete({
    system: request.system,
    prompt,
    schema: request.schema,
    schemaName: request.schemaName,
    ...(request.onText ? { stream: { field: 'answer', onText: request.onText } } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
  });
  if (!result.ok) return result;
  const { kept, dropped } = checkCitations(result.value.citations, request.evidence);
  return {
    ok: true,
    value: {
      raw: result.value,
      citations: kept,
      dropped: dropped.length,
      confidence: adjustedConfidence(result.value.confidence, dropped.length),
    },
  };
}
