import type {
  AssistantTurn,
  ConversationRequest,
  LlmClient,
  StructuredRequest,
  TextRequest,
} from '../../src/engine/llm/client';
import { fail, ok, type EngineError, type Result } from '../../src/engine/util/result';

/**
 * A scripted model for tests. Structured answers are parsed with the request's own zod schema,
 * exactly as a real client does, so a script that does not fit the schema fails like a model
 * would; the answer field is streamed in pieces when asked. Every request is recorded.
 */
type Scripted<Request, Reply> =
  Reply | EngineError | ((request: Request, call: number) => Reply | EngineError);

export class FakeLlm implements LlmClient {
  readonly backend = 'fake';
  readonly completions: StructuredRequest<unknown>[] = [];
  readonly conversations: ConversationRequest[] = [];
  readonly texts: TextRequest[] = [];

  constructor(
    private readonly script: {
      complete?:
        | Scripted<StructuredRequest<unknown>, unknown>[]
        | Scripted<StructuredRequest<unknown>, unknown>;
      converse?:
        | Scripted<ConversationRequest, Partial<AssistantTurn>>[]
        | Scripted<ConversationRequest, Partial<AssistantTurn>>;
      stream?: string;
    } = {},
    readonly model = 'fake-model',
  ) {}

  async complete<T>(request: StructuredRequest<T>): Promise<Result<T>> {
    this.completions.push(request as StructuredRequest<unknown>);
    const reply = next(
      this.script.complete,
      request as StructuredRequest<unknown>,
      this.completions.length - 1,
    );
    if (isError(reply)) return fail(reply.code, reply.message);
    if (request.stream && reply && typeof reply === 'object') {
      const text = String((reply as Record<string, unknown>)[request.stream.field] ?? '');
      for (let end = Math.min(8, text.length); end <= text.length; end += 8)
        request.stream.onText(text.slice(0, end));
      request.stream.onText(text);
    }
    const parsed = request.schema.safeParse(reply);
    if (!parsed.success)
      return fail(
        'model_unavailable',
        `The fake model's answer did not fit ${request.schemaName}: ${parsed.error.message}`,
      );
    return ok(parsed.data);
  }

  async stream(request: TextRequest): Promise<Result<string>> {
    this.texts.push(request);
    const text = this.script.stream ?? '';
    for (const word of text.split(/(?<= )/)) request.onText?.(word);
    return ok(text);
  }

  async converse(request: ConversationRequest): Promise<Result<AssistantTurn>> {
    this.conversations.push({ ...request, messages: [...request.messages] });
    const reply = next(this.script.converse, request, this.conversations.length - 1);
    if (isError(reply)) return fail(reply.code, reply.message);
    const turn = reply ?? {};
    return ok({
      text: turn.text ?? '',
      toolCalls: turn.toolCalls ?? [],
      stopReason: turn.stopReason ?? (turn.toolCalls?.length ? 'tool_use' : 'end'),
    });
  }
}

function next<Request, Reply>(
  script: Scripted<Request, Reply>[] | Scripted<Request, Reply> | undefined,
  request: Request,
  call: number,
): Reply | EngineError | undefined {
  const entry = Array.isArray(script) ? script[Math.min(call, script.length - 1)] : script;
  return typeof entry === 'function'
    ? (entry as (request: Request, call: number) => Reply | EngineError)(request, call)
    : entry;
}

function isError(value: unknown): value is EngineError {
  return (
    !!value &&
    typeof value === 'object' &&
    'code' in value &&
    'message' in value &&
    Object.keys(value).length === 2
  );
}

/** A well-formed answer citing the given ranges. */
export function answerCiting(
  answer: string,
  citations: { path: string; startLine: number; endLine: number; why?: string }[],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    answer,
    confidence: 0.9,
    citations: citations.map((citation) => ({ why: 'shows it', ...citation })),
    followUps: ['Who calls it?', 'What does it change?'],
    ...extra,
  };
}
