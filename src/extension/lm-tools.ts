import * as vscode from 'vscode';
import type { Ctx } from './ctx';

/**
 * The index as language-model tools, so VS Code's agent mode (and other extensions' agents) can
 * search the code, navigate symbols and trace callers. Names and input schemas are declared in
 * package.json (`languageModelTools`); each tool maps to one engine tool. Registered only where
 * the running VS Code has the API.
 */
const TOOLS: Record<string, string> = {
  codeoracle_search_code: 'search_code',
  codeoracle_resolve_symbol: 'resolve_symbol',
  codeoracle_trace_callers: 'trace_callers',
};

export function registerLanguageModelTools(ctx: Ctx): vscode.Disposable[] {
  if (typeof vscode.lm?.registerTool !== 'function') return [];
  return Object.entries(TOOLS).map(([name, engineTool]) =>
    vscode.lm.registerTool<object>(name, {
      async invoke(options, token) {
        const folder = ctx.folderFor();
        if (!folder) return textResult('No workspace folder is open, so there is no index to use.');
        const result = await ctx.client.tool(folder.root, engineTool, options.input);
        if (token.isCancellationRequested) return textResult('Cancelled.');
        return textResult(result.ok ? result.value : result.error.message);
      },
    }),
  );
}

function textResult(text: string): vscode.LanguageModelToolResult {
  return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
}
