import * as vscode from 'vscode';

/**
 * "Propose a fix with Code Oracle": a quick fix on every diagnostic, beside "Explain this error",
 * so it shows in the light bulb and in the Problems view.
 */
export class ProposeFixActions implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  provideCodeActions(
    document: vscode.TextDocument,
    _range: vscode.Range,
    context: vscode.CodeActionContext,
  ): vscode.CodeAction[] {
    return context.diagnostics.map((diagnostic) => {
      const action = new vscode.CodeAction(
        'Propose a fix with Code Oracle',
        vscode.CodeActionKind.QuickFix,
      );
      action.diagnostics = [diagnostic];
      action.command = {
        command: 'codeOracle.proposeFix',
        title: 'Propose a fix',
        arguments: [document.uri, diagnostic],
      };
      return action;
    });
  }
}
