import * as vscode from 'vscode';
import type { HostLlmHandler } from '../engine/host/client';
import type { RemoteCall } from '../engine/host/remote-llm';
import type { AssistantTurn, ConversationMessage } from '../engine/llm/client';
import { describeError, fail, ok, type Result } from '../engine/util/result';

/**
 * VS Code's Language Model API behind the engine's client interface: the worker sends each call
 * here (see remote-llm.ts), and this runs it on the model the user chose — by family, by id, or
 * the first one the editor offers — streaming text back as it comes.
 */
export const languageModelHandler: HostLlmHandler = async (call, onDelta, signal) => {
  if (!vscode.lm)
    return fail(
      'model_unavailable',
      'This version of VS Code has no language model API; choose another provider in codeOracle.llm.provider.',
    );
  const model = await chooseModel(call.model);
  if (!model)
    return fail(
      'model_unavailable',
      'No VS Code language model is available: install or sign in to a chat extension (such as GitHub Copilot), or choose another provider in codeOracle.llm.provider.',
    );
  const cancellation = new vscode.CancellationTokenSource();
  signal.addEventListener('abort', () => cancellation.cancel(), { once: true });
  try {
    return call.kind === 'text'
      ? await text(model, call, onDelta, cancellation.token)
      : await converse(model, call, cancellation.token);
  } catch (cause) {
    if (signal.aborted) return fail('cancelled', 'The question was cancelled.');
    return fail(
      'model_unavailable',
      `${model.name} could not answer: ${cause instanceof vscode.LanguageModelError ? cause.message : describeError(cause)}`,
    );
  } finally {
    cancellation.dispose();
  }
};

async function chooseModel(choice: string): Promise<vscode.LanguageModelChat | undefined> {
  const wanted = choice === 'default' ? '' : choice;
  const selector: vscode.LanguageModelChatSelector = wanted.startsWith('id:')
    ? { id: wanted.slice(3) }
    : wanted
      ? { family: wanted }
      : {};
  const [model] = await vscode.lm.selectChatModels(selector);
  return model;
}

async function text(
  model: vscode.LanguageModelChat,
  call: Extract<RemoteCall, { kind: 'text' }>,
  onDelta: (delta: string) => void,
  token: vscode.CancellationToken,
): Promise<Result<string>> {
  // The API has no system role: the instructions open the first user message.
  const messages = call.turns.map((turn, i) =>
    turn.role === 'user'
      ? vscode.LanguageModelChatMessage.User(
          i === 0 ? `${call.system}\n\n${turn.content}` : turn.content,
        )
      : vscode.LanguageModelChatMessage.Assistant(turn.content),
  );
  const response = await model.sendRequest(
    messages,
    { justification: 'Code Oracle answers your question about this workspace.' },
    token,
  );
  let answer = '';
  for await (const piece of response.text) {
    answer += piece;
    onDelta(piece);
  }
  return ok(answer);
}

async function converse(
  model: vscode.LanguageModelChat,
  call: Extract<RemoteCall, { kind: 'converse' }>,
  token: vscode.CancellationToken,
): Promise<Result<AssistantTurn>> {
  const messages = [
    vscode.LanguageModelChatMessage.User(call.system),
    ...call.messages.map(toChatMessage),
  ];
  const tools = call.tools.map((tool) => ({
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema,
  }));
  const response = await model.sendRequest(
    messages,
    {
      justification: 'Code Oracle researches your question in this workspace.',
      ...(tools.length ? { tools } : {}),
    },
    token,
  );
  let answer = '';
  const toolCalls: AssistantTurn['toolCalls'][number][] = [];
  for await (const part of response.stream) {
    if (part instanceof vscode.LanguageModelTextPart) answer += part.value;
    else if (part instanceof vscode.LanguageModelToolCallPart)
      toolCalls.push({ id: part.callId, name: part.name, input: part.input });
  }
  return ok({ text: answer, toolCalls, stopReason: toolCalls.length ? 'tool_use' : 'end' });
}

function toChatMessage(message: ConversationMessage): vscode.LanguageModelChatMessage {
  switch (message.role) {
    case 'user':
      return vscode.LanguageModelChatMessage.User(message.content);
    case 'assistant':
      return vscode.LanguageModelChatMessage.Assistant([
        ...(message.content ? [new vscode.LanguageModelTextPart(message.content)] : []),
        ...message.toolCalls.map(
          (call) =>
            new vscode.LanguageModelToolCallPart(call.id, call.name, (call.input ?? {}) as object),
        ),
      ]);
    case 'tool':
      return vscode.LanguageModelChatMessage.User(
        message.results.map(
          (result) =>
            new vscode.LanguageModelToolResultPart(result.callId, [
              new vscode.LanguageModelTextPart(
                result.isError ? `Error: ${result.content}` : result.content,
              ),
            ]),
        ),
      );
  }
}
