import Anthropic, {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
} from '@anthropic-ai/sdk';
import type {
  Message,
  MessageCreateParamsNonStreaming,
  MessageParam,
  Tool,
} from '@anthropic-ai/sdk/resources/messages';
import { describeError, fail, ok, type Result } from '../util/result';
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
  loggedCall,
  OutputTracker,
  objectJsonSchema,
  retryable,
  retryAfterMs,
  sendWithRetry,
  timedOut,
  withoutRetry,
  type CallOptions,
  type CallSettings,
  type ChatTurn,
  type TransportFailure,
  wireName,
} from './structured';

export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-4-6';
export const DEFAULT_ANTHROPIC_BASE_URL = 'https://api.anthropic.com';
/** The Messages API requires a limit; this fits a long answer with its citations. */
const DEFAULT_MAX_TOKENS = 4096;

export interface AnthropicClientOptions extends CallOptions {
  /** Without one, every call fails with a message saying how to set it. */
  readonly apiKey?: string;
  readonly model?: string;
  readonly baseUrl?: string;
}

/**
 * Claude through the Messages API. A structured answer is a forced tool call whose input is the
 * answer, so the model writes JSON for the schema; the SDK's own retries are off because the
 * shared retry loop backs off the same way for every backend.
 */
export class AnthropicClient implements LlmClient {
  readonly backend = 'anthropic';
  readonly model: string;
  private readonly baseUrl: string;
  private readonly settings: CallSettings;
  private sdkClient: Anthropic | undefined;

  constructor(private readonly options: AnthropicClientOptions = {}) {
    registerSecret(options.apiKey);
    this.model = options.model ?? DEFAULT_ANTHROPIC_MODEL;
    this.baseUrl = options.baseUrl ?? DEFAULT_ANTHROPIC_BASE_URL;
    this.settings = callSettings(this.backend, this.model, 'the Anthropic API', options);
  }

  async complete<T>(request: StructuredRequest<T>): Promise<Result<T>> {
    const inputSchema = objectJsonSchema(request.schema, request.schemaName);
    if (!inputSchema.ok) return inputSchema;
    const tool: Tool = {
      name: wireName(request.schemaName),
      description: `Give the answer as a ${request.schemaName}.`,
      input_schema: inputSchema.value,
    };
    return completeStructured(this.settings, request, (turns, onJsonSoFar) => {
      const params = {
        ...this.params(request.system, turns.map(toMessageParam), request.maxTokens),
        tools: [tool],
        tool_choice: { type: 'tool' as const, name: tool.name },
      };
      return this.send(request.signal, (sdk, signal) =>
        onJsonSoFar
          ? streamToolInput(sdk, params, signal, onJsonSoFar)
          : createToolInput(sdk, params, signal, tool.name),
      );
    });
  }

  async stream(request: TextRequest): Promise<Result<string>> {
    return loggedCall(this.settings, 'text', `${request.system}\n\n${request.prompt}`, () => {
      const params = this.params(
        request.system,
        [{ role: 'user', content: request.prompt }],
        request.maxTokens,
      );
      const output = new OutputTracker(request.onText);
      return this.send(
        request.signal,
        (sdk, signal) => streamText(sdk, params, signal, output.onText),
        () => output.shown,
      );
    });
  }

  async converse(request: ConversationRequest): Promise<Result<AssistantTurn>> {
    return loggedCall(this.settings, 'conversation', conversationPromptText(request), async () => {
      const tools = toolsFor(request.tools);
      if (!tools.ok) return tools;
      const params = {
        ...this.params(
          request.system,
          request.messages.map(toConversationParam),
          request.maxTokens,
        ),
        ...(tools.value.length > 0 ? { tools: tools.value } : {}),
      };
      const message = await this.send(request.signal, (sdk, signal) =>
        sdk.messages.create(params, { signal }),
      );
      return message.ok ? ok(toAssistantTurn(message.value)) : message;
    });
  }

  private params(
    system: string,
    messages: MessageParam[],
    maxTokens: number | undefined,
  ): MessageCreateParamsNonStreaming {
    return { model: this.model, max_tokens: maxTokens ?? DEFAULT_MAX_TOKENS, system, messages };
  }

  /** One request through the SDK with the shared retries; `outputShown` stops retries once output reached the caller. */
  private async send<T>(
    callerSignal: AbortSignal | undefined,
    request: (sdk: Anthropic, signal: AbortSignal) => Promise<T>,
    outputShown: () => boolean = () => false,
  ): Promise<Result<T>> {
    const sdk = this.sdk();
    if (!sdk.ok) return sdk;
    return sendWithRetry(
      this.settings,
      callerSignal,
      (signal) => request(sdk.value, signal),
      (cause) => {
        const failure = this.classify(cause);
        return outputShown() ? withoutRetry(failure) : failure;
      },
    );
  }

  /** The SDK client, made on first use so a missing key is a call's error, never the constructor's. */
  private sdk(): Result<Anthropic> {
    if (!this.options.apiKey)
      return fail(
        'model_unavailable',
        'No Anthropic API key: set ANTHROPIC_API_KEY (or the codeOracle.llm.apiKey setting).',
      );
    try {
      this.sdkClient ??= new Anthropic({
        apiKey: this.options.apiKey,
        baseURL: this.baseUrl,
        maxRetries: 0,
        timeout: this.settings.timeoutMs,
      });
      return ok(this.sdkClient);
    } catch (cause) {
      return fail(
        'model_unavailable',
        `The Anthropic client could not be set up: ${describeError(cause)}.`,
      );
    }
  }

  private classify(cause: unknown): TransportFailure {
    if (cause instanceof APIConnectionTimeoutError) return fatal(timedOut(this.settings).error);
    if (cause instanceof APIConnectionError) {
      if (isConnectionReset(cause))
        return retryable(`the connection to the Anthropic API at ${this.baseUrl} was reset`);
      return fatal({
        code: 'model_unavailable',
        message: `Cannot reach the Anthropic API at ${this.baseUrl}: ${connectionFailure(cause.cause ?? cause)}.`,
      });
    }
    if (!(cause instanceof APIError))
      return fatal({
        code: 'model_unavailable',
        message: `The Anthropic API call failed: ${describeError(cause)}.`,
      });
    const detail = redact(cause.apiMessage ?? cause.type ?? 'no details');
    if (cause.status === 401)
      return fatal({
        code: 'model_unavailable',
        message: 'The Anthropic API key was refused (401).',
      });
    if (cause.status === 429 || (cause.status ?? 0) >= 500)
      return retryable(
        `the Anthropic API answered ${cause.status} (${detail})`,
        retryAfterMs(cause.headers),
      );
    // An error event in the middle of a stream has no status; "overloaded" is worth another try.
    if (cause.status === undefined && cause.type === 'overloaded_error')
      return retryable(`the Anthropic API is overloaded (${detail})`);
    return fatal({
      code: 'model_unavailable',
      message: `The Anthropic API refused the request (${cause.status ?? cause.type ?? 'error'}): ${detail}.`,
    });
  }
}

/** The JSON the model wrote as the forced tool's input, or its text if it wrote no tool call. */
async function createToolInput(
  sdk: Anthropic,
  params: MessageCreateParamsNonStreaming,
  signal: AbortSignal,
  name: string,
): Promise<string> {
  const message = await sdk.messages.create(params, { signal });
  const toolUse = message.content.find((block) => block.type === 'tool_use' && block.name === name);
  return toolUse?.type === 'tool_use' ? JSON.stringify(toolUse.input) : textOf(message);
}

/** Streams the forced tool's input JSON, reporting the whole of it so far after every piece. */
async function streamToolInput(
  sdk: Anthropic,
  params: MessageCreateParamsNonStreaming,
  signal: AbortSignal,
  onJsonSoFar: (jsonSoFar: string) => void,
): Promise<string> {
  let json = '';
  const stream = sdk.messages.stream(params, { signal }).on('inputJson', (delta) => {
    json += delta;
    onJsonSoFar(json);
  });
  const message = await stream.finalMessage();
  return json || textOf(message);
}

async function streamText(
  sdk: Anthropic,
  params: MessageCreateParamsNonStreaming,
  signal: AbortSignal,
  onText: (delta: string) => void,
): Promise<string> {
  const message = await sdk.messages.stream(params, { signal }).on('text', onText).finalMessage();
  return textOf(message);
}

function textOf(message: Message): string {
  return message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
}

function toAssistantTurn(message: Message): AssistantTurn {
  const toolCalls: ToolCall[] = message.content.flatMap((block) =>
    block.type === 'tool_use' ? [{ id: block.id, name: block.name, input: block.input }] : [],
  );
  const stopReason =
    toolCalls.length > 0 ? 'tool_use' : message.stop_reason === 'max_tokens' ? 'max_tokens' : 'end';
  return { text: textOf(message), toolCalls, stopReason };
}

function toMessageParam(turn: ChatTurn): MessageParam {
  return { role: turn.role, content: turn.content };
}

function toConversationParam(message: ConversationMessage): MessageParam {
  switch (message.role) {
    case 'user':
      return { role: 'user', content: message.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: [
          // The API refuses empty text blocks: a turn that only called tools has none.
          ...(message.content ? [{ type: 'text' as const, text: message.content }] : []),
          ...message.toolCalls.map((call) => ({
            type: 'tool_use' as const,
            id: call.id,
            name: call.name,
            input: call.input,
          })),
        ],
      };
    case 'tool':
      return {
        role: 'user',
        content: message.results.map((result) => ({
          type: 'tool_result' as const,
          tool_use_id: result.callId,
          content: result.content,
          ...(result.isError ? { is_error: true } : {}),
        })),
      };
  }
}

function toolsFor(specs: readonly ToolSpec[]): Result<Tool[]> {
  const tools: Tool[] = [];
  for (const spec of specs) {
    const inputSchema = objectJsonSchema(spec.schema, spec.name);
    if (!inputSchema.ok) return inputSchema;
    tools.push({ name: spec.name, description: spec.description, input_schema: inputSchema.value });
  }
  return ok(tools);
}
