import type { z } from 'zod';
import type { Result } from '../util/result';

/**
 * What the engine asks of a language model. Every client (Anthropic, an OpenAI-compatible local
 * server, VS Code's language models, a test fake) implements this, and is always passed in as a
 * parameter: nothing in the engine reaches for a global model.
 */
export interface StructuredRequest<T> {
  readonly system: string;
  readonly prompt: string;
  /** The answer must parse with this schema; a client retries with the validation error. */
  readonly schema: z.ZodType<T>;
  /** Names the schema in logs and, for some backends, in the request. */
  readonly schemaName: string;
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
}

export interface LlmClient {
  readonly backend: string;
  readonly model: string;
  complete<T>(request: StructuredRequest<T>): Promise<Result<T>>;
}
