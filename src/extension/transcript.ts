import * as vscode from 'vscode';
import type { TranscriptEntry } from './chat/view';

/**
 * "Export Chat" writes the conversation as a transcript document in its own language
 * (`oracle-transcript`, grammar in syntaxes/): questions, answers and their citations, which the
 * grammar highlights and a link provider makes clickable. It opens as an untitled document, so
 * nothing is written to disk until the user saves it.
 */
export const TRANSCRIPT_LANGUAGE = 'oracle-transcript';
const CITATION = /^\s*- (\S+?):(\d+)-(\d+)\b/;

export async function exportTranscript(entries: readonly TranscriptEntry[]): Promise<void> {
  if (!entries.length)
    return void vscode.window.showInformationMessage(
      'Code Oracle: the chat is empty; ask a question first.',
    );
  const content = entries.map(renderEntry).join('\n\n---\n\n');
  const document = await vscode.workspace.openTextDocument({
    language: TRANSCRIPT_LANGUAGE,
    content: `# Code Oracle chat\n\n${content}\n`,
  });
  await vscode.window.showTextDocument(document);
}

function renderEntry(entry: TranscriptEntry): string {
  const { answer } = entry;
  const sources = answer.citations.map(
    (citation) =>
      `  - ${citation.path}:${citation.startLine}-${citation.endLine} — ${citation.why}`,
  );
  return [
    `## Q (${entry.mode}): ${entry.question.trim()}`,
    '',
    answer.answer.trim(),
    ...(sources.length ? ['', 'Sources:', ...sources] : []),
    '',
    `Confidence ${answer.confidence.toFixed(2)}${answer.details.model ? ` · ${answer.details.model}` : ' · no model'}${answer.evidenceOnly ? ' · evidence only' : ''}`,
  ].join('\n');
}

/** Makes each `path:start-end` in a transcript's sources open the file on those lines. */
export class TranscriptLinks implements vscode.DocumentLinkProvider {
  provideDocumentLinks(document: vscode.TextDocument): vscode.DocumentLink[] {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) return [];
    const links: vscode.DocumentLink[] = [];
    for (let line = 0; line < document.lineCount; line++) {
      const match = CITATION.exec(document.lineAt(line).text);
      if (!match) continue;
      const [whole, path, start] = match;
      const column = whole!.indexOf(path!);
      const target = vscode.Uri.joinPath(folder.uri, ...path!.split('/')).with({
        fragment: `L${start}`,
      });
      links.push(
        new vscode.DocumentLink(new vscode.Range(line, column, line, whole!.length), target),
      );
    }
    return links;
  }
}
