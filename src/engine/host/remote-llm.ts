import type {
  AssistantTurn,
  ConversationRequest,
  LlmClient,
  StructuredRequest,
  TextRequest,
} from '../llm/client';
import {
  callSettings,
  completeStructured,
  conversationPromptText,
  loggedCall,
  objectJsonSchema,
  withSchemaInstructions,
  type CallSettings,
} from '../llm/structured';
import { fail, type Result } from '../util/result';
import type { RemoteCall } from './protocol';

export type { RemoteCall };
type WireTool = Extract<RemoteCall, { kind: 'converse' }>['tools'][number];

/** Sends one call to the host; `onDelta` receives text as it arrives. */
export type RemoteTransport = (
  call: RemoteCall,
  onDelta: ((delta: string) => void) | undefined,
  signal: AbortSignal | undefined,
) => Promise<Result<string | AssistantTurn>>;

/**
 * A model that lives on the other side of the worker boundary: VS Code's language models can
 * only be called from the extension host, so the engine's worker sends each call there and gets
 * the text (streamed) or the conversation turn back. Validation, retries with feedback and the
 * call log events happen here, exactly as for the other clients.
 */
export class RemoteLlmClient implements LlmClient {
  readonly backend = 'vscode';
  private readonly settings: CallSettings;

  constructor(
    readonly model: string,
    private readonly send: RemoteTransport,
    logPrompts = false,
  ) {
    this.settings = callSettings('vscode', model, "VS Code's language model", { logPrompts });
  }

  complete<T>(request: StructuredRequest<T>): Promise<Result<T>> {
    const jsonSchema = objectJsonSchema(request.schema, request.schemaName);
    if (!jsonSchema.ok) return Promise.resolve(jsonSchema);
    const system = withSchemaInstructions(request.system, jsonSchema.value);
    return completeStructured(this.settings, request, async (turns, onJsonSoFar) => {
      let soFar = '';
      const result = await this.send(
        { kind: 'text', model: this.model, system, turns },
        onJsonSoFar ? (delta) => onJsonSoFar((soFar += delta)) : undefined,
        request.signal,
      );
      return asText(result);
    });
  }

  stream(request: TextRequest): Promise<Result<string>> {
    return loggedCall(this.settings, 'text', `${request.system}\n\n${request.prompt}`, async () =>
      asText(
        await this.send(
          {
            kind: 'text',
            model: this.model,
            system: request.system,
            turns: [{ role: 'user', content: request.prompt }],
          },
          request.onText,
          request.signal,
        ),
      ),
    );
  }

  converse(request: ConversationRequest): Promise<Result<AssistantTurn>> {
    const tools: WireTool[] = [];
    for (const tool of request.tools) {
      const schema = objectJsonSchema(tool.schema, tool.name);
      if (!schema.ok) return Promise.resolve(schema);
      tools.push({ name: tool.name, description: tool.description, inputSchema: schema.value });
    }
    return loggedCall(this.settings, 'conversation', conversationPromptText(request), async () => {
      const result = await this.send(
        {
          kind: 'converse',
          model: this.model,
          system: request.system,
          messages: request.messages,
          tools,
        },
        undefined,
        request.signal,
      );
      if (!result.ok) return result;
      return typeof result.value === 'string'
        ? fail('model_unavailable', 'The editor answered a conversation turn with text only.')
        : { ok: true, value: result.value };
    });
  }
}

function asText(result: Result<string | AssistantTurn>): Result<string> {
  if (!result.ok) return result;
  return typeof result.value === 'string'
    ? { ok: true, value: result.value }
    : { ok: true, value: result.value.text };
}
