import * as vscode from 'vscode';
import { describeStep } from '../engine/answer/model';
import type { Ctx } from './ctx';

/**
 * `@oracle` in VS Code's own chat: the question is answered by the engine with the model the user
 * picked in that chat (through the same bridge as the "vscode" provider), streamed as Markdown,
 * with the citations as references and anchors that open the exact lines. Registered only where
 * the running VS Code has the chat API.
 */
export const PARTICIPANT_ID = 'codeOracle.oracle';

interface OracleResult extends vscode.ChatResult {
  readonly metadata: { readonly followUps: readonly string[] };
}

export function registerParticipant(ctx: Ctx): vscode.Disposable[] {
  if (typeof vscode.chat?.createChatParticipant !== 'function') return [];
  const participant = vscode.chat.createChatParticipant(
    PARTICIPANT_ID,
    (request, _context, response, token) => answer(ctx, request, response, token),
  );
  participant.iconPath = vscode.Uri.joinPath(ctx.extension.extensionUri, 'media', 'icon.svg');
  participant.followupProvider = {
    provideFollowups: (result: OracleResult) =>
      (result.metadata?.followUps ?? []).map((prompt) => ({ prompt, label: prompt })),
  };
  return [participant];
}

async function answer(
  ctx: Ctx,
  request: vscode.ChatRequest,
  response: vscode.ChatResponseStream,
  token: vscode.CancellationToken,
): Promise<OracleResult> {
  const folder = ctx.folderFor();
  if (!folder) {
    response.markdown('Open a folder, and Code Oracle will answer questions about its code.');
    return { metadata: { followUps: [] } };
  }
  response.progress('Searching the index…');
  const controller = new AbortController();
  token.onCancellationRequested(() => controller.abort());
  let shown = '';
  const mode =
    request.command === 'deep' || request.command === 'thinking' ? request.command : 'fast';
  const result = await ctx.client.ask(
    folder.root,
    {
      question: request.prompt,
      mode,
      llm: { provider: 'vscode', model: `id:${request.model.id}` },
    },
    {
      onText: (text) => {
        // The engine sends the whole text so far; the chat wants what is new. Text that does not
        // continue what was shown is a new attempt (the first failed validation): say so, since
        // a chat response cannot take back what it showed.
        if (!text.startsWith(shown)) response.markdown('\n\n---\n*The model answered again:*\n\n');
        response.markdown(text.startsWith(shown) ? text.slice(shown.length) : text);
        shown = text;
      },
      onStep: (step) => response.progress(describeStep(step)),
    },
    controller.signal,
  );
  if (!result.ok) {
    response.markdown(
      result.error.code === 'cancelled'
        ? ''
        : `Code Oracle could not answer: ${result.error.message}`,
    );
    return {
      metadata: { followUps: [] },
      ...(result.error.code === 'cancelled'
        ? {}
        : { errorDetails: { message: result.error.message } }),
    };
  }
  const value = result.value;
  if (!value.answer.startsWith(shown)) response.markdown(`\n\n---\n${value.answer}`);
  else response.markdown(value.answer.slice(shown.length));
  if (value.citations.length) {
    response.markdown('\n\n**Sources**\n');
    for (const citation of value.citations) {
      const uri = vscode.Uri.joinPath(folder.folder.uri, ...citation.path.split('/'));
      const location = new vscode.Location(
        uri,
        new vscode.Range(citation.startLine - 1, 0, citation.endLine - 1, 0),
      );
      response.reference(location);
      response.markdown('\n- ');
      response.anchor(location, `${citation.path}:${citation.startLine}-${citation.endLine}`);
      response.markdown(` — ${citation.why}`);
    }
  }
  return { metadata: { followUps: value.followUps } };
}
