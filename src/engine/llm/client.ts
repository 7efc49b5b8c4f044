import type { z } from 'zod';
import type { Result } from '../util/result';

/**
 * What the engine asks of a language model. Every client (Anthropic, an OpenAI-compatible local
 * server, VS Code's language models, a test fake) implements this, and is always passed in as a
 * parameter: nothing in the engine reaches for a global model.
 *
 * Three kinds of call:
 *   complete — a structured answer validated by a zod schema (up to three attempts, each retry
 *              told what failed validation); can stream one string field of it as it is written;
 *   stream   — prose, streamed;
 *   converse — one turn of a tool-calling conversation (the deep agent).
 * Every call honours an AbortSignal and a timeout, backs off on 429 and 5xx answers, and fails
 * with a message a user can act on (a missing key, a server that cannot be reached).
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
  /**
   * Streams the top-level string field `field` of the answer as it is generated: `onText`
   * receives the whole text of that field so far (it starts again from empty on a retry).
   */
  readonly stream?: { readonly field: string; readonly onText: (textSoFar: string) => void };
}

export interface TextRequest {
  readonly system: string;
  readonly prompt: string;
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
  /** Receives each piece of text as it arrives. */
  readonly onText?: (delta: string) => void;
}

/** A tool the model may call: its input is validated with `schema` before the engine runs it. */
export interface ToolSpec {
  readonly name: string;
  readonly description: string;
  readonly schema: z.ZodType<unknown>;
}

export interface ToolCall {
  /** The backend's id for the call, echoed back with its result. */
  readonly id: string;
  readonly name: string;
  /** The raw input as the model wrote it; the caller validates it with the tool's schema. */
  readonly input: unknown;
}

export type ConversationMessage =
  | { readonly role: 'user'; readonly content: string }
  | {
      readonly role: 'assistant';
      readonly content: string;
      readonly toolCalls: readonly ToolCall[];
    }
  | {
      readonly role: 'tool';
      readonly results: readonly {
        readonly callId: string;
        readonly name: string;
        readonly content: string;
        readonly isError?: boolean;
      }[];
    };

export interface ConversationRequest {
  readonly system: string;
  readonly messages: readonly ConversationMessage[];
  /** Empty: the model must answer in text (the synthesis phase of the agent). */
  readonly tools: readonly ToolSpec[];
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
}

export interface AssistantTurn {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly stopReason: 'end' | 'tool_use' | 'max_tokens';
}

export interface LlmClient {
  /** 'anthropic', 'openai-compatible', 'vscode', 'fake' …: named in every log event. */
  readonly backend: string;
  readonly model: string;
  complete<T>(request: StructuredRequest<T>): Promise<Result<T>>;
  stream(request: TextRequest): Promise<Result<string>>;
  converse(request: ConversationRequest): Promise<Result<AssistantTurn>>;
}
