import { z } from 'zod';
import { describeError, ok, type Result } from '../util/result';
import type {
  AssistantTurn,
  ConversationMessage,
  ConversationRequest,
  LlmClient,
  StructuredRequest,
  TextRequest,
  ToolCall,
  ToolSpec,
} from './client';
import { redact, registerSecret } from '../util/redact';
import {
  callSettings,
  completeStructured,
  connectionFailure,
  conversationPromptText,
  fatal,
  isConnectionReset,
  isUnreachable,
  loggedCall,
  OutputTracker,
  objectJsonSchema,
  retryable,
  retryAfterMs,
  sendWithRetry,
  wireName,
  withoutRetry,
  withSchemaInstructions,
  type CallOptions,
  type CallSettings,
  type TransportFailure,
} from './structured';

/** Ollama's OpenAI-compatible endpoint; LM Studio (:1234/v1) and llama.cpp (:8080/v1) speak the same API. */
export const DEFAULT_OPENAI_COMPATIBLE_BASE_URL = 'http://127.0.0.1:11434/v1';
export const DEFAULT_OPENAI_COMPATIBLE_MODEL = 'qwen2.5-coder:7b';

export interface OpenAiCompatibleClientOptions extends CallOptions {
  readonly model?: string;
  readonly baseUrl?: string;
  /** Sent as a Bearer token; local servers need none. */
  readonly apiKey?: string;
}

type WireMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string; tool_calls?: WireToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

interface WireToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

const ResponseToolCall = z.object({
  id: z.string().nullish(),
  // Ollama has sent the arguments as an object rather than a JSON string.
  function: z.object({ name: z.string(), arguments: z.unknown() }),
});

const ChatCompletion = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z.array(ResponseToolCall).nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
});

const ChatCompletionChunk = z.object({
  choices: z
    .array(z.object({ delta: z.object({ content: z.string().nullish() }).nullish() }))
    .nullish(),
  error: z.object({ message: z.string() }).nullish(),
});

/** A non-2xx answer, with what the retry decision and the user's message need from it. */
class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly retryAfterMs: number | undefined,
  ) {
    super(`HTTP ${status}: ${detail}`);
  }
}

/** An answer that is not the chat completion it should be. */
class ProtocolError extends Error {}

/**
 * A local (or hosted) model server with the OpenAI chat completions API, through plain fetch.
 * Structured answers use `response_format: json_schema` and repeat the schema in the system
 * prompt, since small local models follow a schema they can read better than one they cannot.
 */
export class OpenAiCompatibleClient implements LlmClient {
  readonly backend = 'openai-compatible';
  readonly model: string;
  private readonly baseUrl: string;
  private readonly settings: CallSettings;

  constructor(private readonly options: OpenAiCompatibleClientOptions = {}) {
    registerSecret(options.apiKey);
    this.model = options.model ?? DEFAULT_OPENAI_COMPATIBLE_MODEL;
    this.baseUrl = (options.baseUrl ?? DEFAULT_OPENAI_COMPATIBLE_BASE_URL).replace(/\/+$/, '');
    this.settings = callSettings(
      this.backend,
      this.model,
      `the model server at ${this.baseUrl}`,
      options,
    );
  }

  async complete<T>(request: StructuredRequest<T>): Promise<Result<T>> {
    const jsonSchema = objectJsonSchema(request.schema, request.schemaName);
    if (!jsonSchema.ok) return jsonSchema;
    const system = withSchemaInstructions(request.system, jsonSchema.value);
    return completeStructured(this.settings, request, (turns, onJsonSoFar) => {
      const body = {
        ...this.bodyBase(system, turns, request.maxTokens),
        response_format: {
          type: 'json_schema',
          json_schema: {
            name: wireName(request.schemaName),
            schema: jsonSchema.value,
            strict: true,
          },
        },
      };
      return this.send(request.signal, (signal) => {
        if (!onJsonSoFar)
          return this.completion(body, signal).then(
            (completion) => completion.choices[0]!.message.content ?? '',
          );
        let json = '';
        return this.streamCompletion(body, signal, (delta) => {
          json += delta;
          onJsonSoFar(json);
        });
      });
    });
  }

  async stream(request: TextRequest): Promise<Result<string>> {
    return loggedCall(this.settings, 'text', `${request.system}\n\n${request.prompt}`, () => {
      const body = this.bodyBase(
        request.system,
        [{ role: 'user', content: request.prompt }],
        request.maxTokens,
      );
      const output = new OutputTracker(request.onText);
      return this.send(
        request.signal,
        (signal) => this.streamCompletion(body, signal, output.onText),
        () => output.shown,
      );
    });
  }

  async converse(request: ConversationRequest): Promise<Result<AssistantTurn>> {
    return loggedCall(this.settings, 'conversation', conversationPromptText(request), async () => {
      const tools = toolsFor(request.tools);
      if (!tools.ok) return tools;
      const body = {
        ...this.bodyBase(
          request.system,
          request.messages.flatMap(toWireMessages),
          request.maxTokens,
        ),
        ...(tools.value.length > 0 ? { tools: tools.value } : {}),
      };
      const completion = await this.send(request.signal, (signal) => this.completion(body, signal));
      return completion.ok ? ok(toAssistantTurn(completion.value)) : completion;
    });
  }

  private bodyBase(
    system: string,
    messages: readonly WireMessage[],
    maxTokens: number | undefined,
  ) {
    return {
      model: this.model,
      messages: [{ role: 'system', content: system }, ...messages],
      ...(maxTokens ? { max_tokens: maxTokens } : {}),
    };
  }

  /** One request with the shared retries; `outputShown` stops retries once output reached the caller. */
  private send<T>(
    callerSignal: AbortSignal | undefined,
    request: (signal: AbortSignal) => Promise<T>,
    outputShown: () => boolean = () => false,
  ): Promise<Result<T>> {
    return sendWithRetry(this.settings, callerSignal, request, (cause) => {
      const failure = this.classify(cause);
      return outputShown() ? withoutRetry(failure) : failure;
    });
  }

  private async completion(
    body: object,
    signal: AbortSignal,
  ): Promise<z.infer<typeof ChatCompletion>> {
    const response = await this.post(body, signal);
    const parsed = ChatCompletion.safeParse(parseJson(await response.text(), 'its body'));
    if (!parsed.success)
      throw new ProtocolError(
        `it is not a chat completion: ${oneLine(z.prettifyError(parsed.error))}`,
      );
    return parsed.data;
  }

  /** Streams the answer's text deltas to `onDelta` and returns the whole text. */
  private async streamCompletion(
    body: object,
    signal: AbortSignal,
    onDelta: (delta: string) => void,
  ): Promise<string> {
    const response = await this.post({ ...body, stream: true }, signal);
    let text = '';
    for await (const data of serverSentData(response)) {
      const delta = chunkText(data);
      if (!delta) continue;
      text += delta;
      onDelta(delta);
    }
    return text;
  }

  private async post(body: object, signal: AbortSignal): Promise<Response> {
    const response = await fetch(`${this.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(this.options.apiKey ? { authorization: `Bearer ${this.options.apiKey}` } : {}),
      },
      body: JSON.stringify(body),
      signal,
    });
    if (response.ok) return response;
    throw new HttpStatusError(
      response.status,
      errorDetail(await response.text()),
      retryAfterMs(response.headers),
    );
  }

  private classify(cause: unknown): TransportFailure {
    if (cause instanceof HttpStatusError) return this.classifyStatus(cause);
    if (cause instanceof ProtocolError)
      return fatal({
        code: 'model_unavailable',
        message: `The model server at ${this.baseUrl} sent an unexpected answer: ${cause.message}.`,
      });
    if (isUnreachable(cause))
      return fatal({
        code: 'model_unavailable',
        message: `Cannot reach the model server at ${this.baseUrl} — is it running (for Ollama: \`ollama serve\`)?`,
      });
    if (isConnectionReset(cause))
      return retryable(`the connection to the model server at ${this.baseUrl} was reset`);
    return fatal({
      code: 'model_unavailable',
      message: `The request to the model server at ${this.baseUrl} failed: ${connectionFailure(cause)}.`,
    });
  }

  private classifyStatus(cause: HttpStatusError): TransportFailure {
    const { status, detail } = cause;
    if (status === 429 || status >= 500)
      return retryable(
        `the model server at ${this.baseUrl} answered ${status} (${detail})`,
        cause.retryAfterMs,
      );
    if (status === 404 && /model/i.test(detail)) {
      return fatal({
        code: 'model_unavailable',
        message: `The model server at ${this.baseUrl} has no model ${this.model} (for Ollama: \`ollama pull ${this.model}\`).`,
      });
    }
    if (status === 404)
      return fatal({
        code: 'model_unavailable',
        message: `The model server at ${this.baseUrl} has no /chat/completions endpoint (404); the base URL usually ends in /v1.`,
      });
    if (status === 401 || status === 403)
      return fatal({
        code: 'model_unavailable',
        message: `The model server at ${this.baseUrl} refused the API key (${status}).`,
      });
    return fatal({
      code: 'model_unavailable',
      message: `The model server at ${this.baseUrl} refused the request (${status}): ${detail}.`,
    });
  }
}

/** The `data:` payloads of a server-sent event stream, up to `[DONE]`. */
async function* serverSentData(response: Response): AsyncGenerator<string> {
  if (!response.body) throw new ProtocolError('the streamed answer has no body');
  let buffered = '';
  for await (const piece of response.body.pipeThrough(new TextDecoderStream())) {
    buffered += piece;
    const lines = buffered.split(/\r?\n/);
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.startsWith('data:')) continue;
      const data = line.slice('data:'.length).trim();
      if (data === '[DONE]') return;
      yield data;
    }
  }
}

function chunkText(data: string): string {
  const chunk = ChatCompletionChunk.safeParse(parseJson(data, 'a streamed event'));
  if (!chunk.success)
    throw new ProtocolError(
      `a streamed event is not a chat completion chunk: ${oneLine(z.prettifyError(chunk.error))}`,
    );
  if (chunk.data.error) throw new ProtocolError(chunk.data.error.message);
  return chunk.data.choices?.[0]?.delta?.content ?? '';
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (cause) {
    throw new ProtocolError(`${what} is not JSON (${describeError(cause)})`);
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

const ErrorBody = z.object({ error: z.union([z.string(), z.object({ message: z.string() })]) });

/** The message of an error body (`{"error": {"message": …}}` or `{"error": "…"}`, else the body itself), short. */
function errorDetail(body: string): string {
  const parsed = ErrorBody.safeParse(jsonOrNull(body));
  const detail =
    oneLine(
      parsed.success
        ? typeof parsed.data.error === 'string'
          ? parsed.data.error
          : parsed.data.error.message
        : body,
    ) || 'no details';
  // servers echo request headers in error bodies: the key must not reach a message or a log
  const safe = redact(detail);
  return safe.length > 200 ? `${safe.slice(0, 200)}…` : safe;
}

function jsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (an HTML error page, a plain message): the caller uses the text as it is.
    return null;
  }
}

function toWireMessages(message: ConversationMessage): WireMessage[] {
  switch (message.role) {
    case 'user':
      return [{ role: 'user', content: message.content }];
    case 'assistant':
      return [
        {
          role: 'assistant',
          content: message.content,
          ...(message.toolCalls.length > 0
            ? { tool_calls: message.toolCalls.map(toWireToolCall) }
            : {}),
        },
      ];
    case 'tool':
      // The API has no error flag for a tool result: the text says so instead.
      return message.results.map((result) => ({
        role: 'tool',
        tool_call_id: result.callId,
        content: result.isError ? `Error: ${result.content}` : result.content,
      }));
  }
}

function toWireToolCall(call: ToolCall): WireToolCall {
  return {
    id: call.id,
    type: 'function',
    function: {
      name: call.name,
      arguments: typeof call.input === 'string' ? call.input : JSON.stringify(call.input),
    },
  };
}

function toolsFor(specs: readonly ToolSpec[]): Result<object[]> {
  const tools: object[] = [];
  for (const spec of specs) {
    const parameters = objectJsonSchema(spec.schema, spec.name);
    if (!parameters.ok) return parameters;
    tools.push({
      type: 'function',
      function: { name: spec.name, description: spec.description, parameters: parameters.value },
    });
  }
  return ok(tools);
}

function toAssistantTurn(completion: z.infer<typeof ChatCompletion>): AssistantTurn {
  const choice = completion.choices[0]!;
  const toolCalls = (choice.message.tool_calls ?? []).map((call, index) => ({
    // llama.cpp has left the id out; any id unique within the turn will do.
    id: call.id || `call_${index}`,
    name: call.function.name,
    input: toolInput(call.function.arguments),
  }));
  // Ollama reports "stop" even when the turn calls tools.
  const stopReason =
    toolCalls.length > 0 ? 'tool_use' : choice.finish_reason === 'length' ? 'max_tokens' : 'end';
  return { text: choice.message.content ?? '', toolCalls, stopReason };
}

/** The arguments as JSON when they parse; otherwise the raw string, which the caller's validation reports. */
function toolInput(rawArguments: unknown): unknown {
  if (typeof rawArguments !== 'string') return rawArguments;
  if (rawArguments.trim() === '') return {};
  try {
    return JSON.parse(rawArguments);
  } catch {
    // Unparsable arguments go to the caller as they are, so its validation can say what is wrong.
    return rawArguments;
  }
}
