import * as vscode from 'vscode';
import type { Ctx } from './ctx';

/**
 * "Explain this error": a quick fix on every diagnostic (so it shows in the light bulb and in the
 * Problems view), and a command. The question carries the diagnostic's message, code, source and
 * location, with the code around it attached; the engine answers it in diagnostic mode.
 */
const CONTEXT_LINES = 10;

export class ExplainErrorActions implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  provideCodeActions(
    document: vscode.TextDocument,
    _range: vscode.Range,
    context: vscode.CodeActionContext,
  ): vscode.CodeAction[] {
    return context.diagnostics.map((diagnostic) => {
      const action = new vscode.CodeAction(
        `Explain this error with Code Oracle`,
        vscode.CodeActionKind.QuickFix,
      );
      action.diagnostics = [diagnostic];
      action.command = {
        command: 'codeOracle.explainError',
        title: 'Explain this error',
        arguments: [document.uri, diagnostic],
      };
      return action;
    });
  }
}

export async function explainError(
  ctx: Ctx,
  uri?: vscode.Uri,
  diagnostic?: vscode.Diagnostic,
): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  const target = uri ?? editor?.document.uri;
  const chosen =
    diagnostic ??
    (target && editor ? diagnosticAtCursor(target, editor.selection.active) : undefined);
  if (!target || !chosen)
    return void vscode.window.showInformationMessage(
      'Code Oracle: put the cursor on a problem (a squiggle) to explain it.',
    );
  const document = await vscode.workspace.openTextDocument(target);
  const folder = ctx.folderFor(target);
  const path = folder ? ctx.relativePath(folder, target) : target.fsPath;
  const first = Math.max(0, chosen.range.start.line - CONTEXT_LINES);
  const last = Math.min(document.lineCount - 1, chosen.range.end.line + CONTEXT_LINES);
  const code = document.getText(
    new vscode.Range(first, 0, last, document.lineAt(last).text.length),
  );
  const line = chosen.range.start.line + 1;
  const code_ =
    chosen.code === undefined
      ? ''
      : ` (${typeof chosen.code === 'object' ? chosen.code.value : chosen.code})`;
  const question = `Why do I get this ${severityName(chosen.severity)}${chosen.source ? ` from ${chosen.source}` : ''}${code_} at ${path}:${line}, and how do I fix it?\n"${chosen.message}"`;
  await ctx.chat.askFromHost({
    question,
    mode: 'fast',
    attachment: { path, content: code, startLine: first + 1, endLine: last + 1 },
    label: `Explain: ${chosen.message.slice(0, 80)}`,
  });
}

function diagnosticAtCursor(
  uri: vscode.Uri,
  position: vscode.Position,
): vscode.Diagnostic | undefined {
  const diagnostics = vscode.languages.getDiagnostics(uri);
  return (
    diagnostics.find((diagnostic) => diagnostic.range.contains(position)) ??
    diagnostics.find((diagnostic) => diagnostic.range.start.line === position.line)
  );
}

function severityName(severity: vscode.DiagnosticSeverity): string {
  return severity === vscode.DiagnosticSeverity.Error
    ? 'error'
    : severity === vscode.DiagnosticSeverity.Warning
      ? 'warning'
      : 'problem';
}
