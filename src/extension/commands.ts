import * as vscode from 'vscode';
import { explainError } from './explain-error';
import type { Ctx } from './ctx';
import { readConfig, SECTION, type LlmProviderSetting } from './config';
import { setApiKey } from './models';
import { exportTranscript } from './transcript';

/** Each command is a small factory taking the context, as in rust-analyzer's extension. */
export type CommandFactory = (ctx: Ctx) => (...args: unknown[]) => unknown;

/** The languages whose functions get a callers lens (the index resolves their calls). */
export const SUPPORTED_LANGUAGES = [
  'python',
  'javascript',
  'javascriptreact',
  'typescript',
  'typescriptreact',
  'go',
  'java',
  'rust',
  'csharp',
  'cpp',
  'c',
  'ruby',
  'php',
];

const RESTART_ENGINE = 'Restart Engine';

/**
 * A command that needs the engine: while the engine is stopped it says so and offers to restart
 * it, instead of failing somewhere inside. (The palette also hides it then, by a `when` clause.)
 */
function needsEngine(factory: CommandFactory): CommandFactory {
  return (ctx) => {
    const run = factory(ctx);
    return async (...args: unknown[]) => {
      const state = ctx.client.state;
      if (state.running) return run(...args);
      const choice = await vscode.window.showWarningMessage(
        `Code Oracle's engine is stopped (${state.reason}).`,
        RESTART_ENGINE,
      );
      if (choice === RESTART_ENGINE) ctx.restartEngine();
    };
  };
}

const restartEngine: CommandFactory = (ctx) => () => ctx.restartEngine();

const reindex: CommandFactory = (ctx) => async () => {
  await Promise.all(ctx.folders.map((folder) => folder.indexAll(true)));
};

const clearIndex: CommandFactory = (ctx) => async () => {
  const answer = await vscode.window.showWarningMessage(
    'Delete the Code Oracle index of this workspace and build it again?',
    { modal: true },
    'Clear and Rebuild',
  );
  if (answer !== 'Clear and Rebuild') return;
  await ctx.rebuildFromScratch();
};

const showLog: CommandFactory = (ctx) => () => {
  ctx.log.show(true);
};

/** Sends the selection (or the line under the cursor) to the chat, with a question typed by the user. */
const askAboutSelection: CommandFactory = (ctx) => async () => {
  const editor = vscode.window.activeTextEditor;
  if (!editor)
    return vscode.window.showInformationMessage(
      'Code Oracle: open a file and select some code to ask about.',
    );
  const selection = editor.selection.isEmpty
    ? editor.document.lineAt(editor.selection.active.line).range
    : editor.selection;
  const question = await vscode.window.showInputBox({
    prompt: 'Ask Code Oracle about the selection',
    placeHolder: 'What does this do? Who calls it? Why could it fail?',
    value: 'What does this code do, and who calls it?',
  });
  if (!question) return;
  const folder = ctx.folderFor(editor.document.uri);
  const path = folder ? ctx.relativePath(folder, editor.document.uri) : editor.document.fileName;
  await ctx.chat.askFromHost({
    question,
    attachment: {
      path,
      content: editor.document.getText(selection),
      startLine: selection.start.line + 1,
      endLine: selection.end.line + 1,
    },
    label: `${path}:${selection.start.line + 1}-${selection.end.line + 1}`,
  });
};

const setApiKeyCommand: CommandFactory = (ctx) => async () => {
  const provider = await vscode.window.showQuickPick(
    [
      { label: 'Anthropic', provider: 'anthropic' as const },
      {
        label: 'OpenAI-compatible server',
        description: 'for servers that need a key',
        provider: 'openai-compatible' as const,
      },
    ],
    { placeHolder: 'Which provider is the key for?' },
  );
  if (!provider) return;
  const key = await vscode.window.showInputBox({
    prompt: `API key for ${provider.label} (kept in VS Code's secret storage; empty removes it)`,
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  await setApiKey(ctx.extension.secrets, provider.provider, key.trim());
  void vscode.window.showInformationMessage(
    key.trim()
      ? `Code Oracle: the ${provider.label} key is stored.`
      : `Code Oracle: the ${provider.label} key is removed.`,
  );
};

/** The provider setting as the manifest describes it: its values and what each one means. */
interface ProviderSetting {
  readonly enum: readonly LlmProviderSetting[];
  readonly enumDescriptions: readonly string[];
}

/**
 * "Choose a Language Model…": the provider, and for a local server its address and model, written
 * to the user's settings. The choices and their descriptions are the manifest's own.
 */
const chooseModel: CommandFactory = (ctx) => async () => {
  const setting = (
    ctx.extension.extension.packageJSON as {
      contributes: { configuration: { properties: Record<string, ProviderSetting> } };
    }
  ).contributes.configuration.properties[`${SECTION}.llm.provider`]!;
  const current = readConfig().llm;
  const picked = await vscode.window.showQuickPick(
    setting.enum.map((provider, i) => ({
      label: provider,
      detail: setting.enumDescriptions[i],
      description: provider === current.provider ? 'current' : '',
      provider,
    })),
    { placeHolder: 'Which model writes the answers?' },
  );
  if (!picked) return;
  const config = vscode.workspace.getConfiguration(SECTION);
  if (picked.provider === 'openai-compatible') {
    const baseUrl = await vscode.window.showInputBox({
      prompt: 'Address of the OpenAI-compatible server (Ollama, LM Studio, llama.cpp)',
      value: current.baseUrl,
      ignoreFocusOut: true,
    });
    if (baseUrl === undefined) return;
    const model = await vscode.window.showInputBox({
      prompt: 'Model name on that server (empty for the default)',
      value: current.model,
      ignoreFocusOut: true,
    });
    if (model === undefined) return;
    await config.update('llm.baseUrl', baseUrl.trim(), vscode.ConfigurationTarget.Global);
    await config.update('llm.model', model.trim(), vscode.ConfigurationTarget.Global);
  }
  await config.update('llm.provider', picked.provider, vscode.ConfigurationTarget.Global);
  if (picked.provider === 'anthropic') {
    const action = await vscode.window.showInformationMessage(
      'Code Oracle: Anthropic needs an API key.',
      'Set API Key',
    );
    if (action) await vscode.commands.executeCommand('codeOracle.setApiKey');
  }
};

const showCallers: CommandFactory =
  (ctx) =>
  async (...args: unknown[]) => {
    const [uri, name, line] = args as [
      vscode.Uri | undefined,
      string | undefined,
      number | undefined,
    ];
    const editor = vscode.window.activeTextEditor;
    const target = uri ?? editor?.document.uri;
    const folder = target ? ctx.folderFor(target) : undefined;
    if (!target || !folder)
      return vscode.window.showInformationMessage(
        'Code Oracle: open a file of the workspace to trace callers.',
      );
    const symbol =
      name ??
      (editor
        ? editor.document.getText(editor.document.getWordRangeAtPosition(editor.selection.active))
        : '');
    if (!symbol)
      return vscode.window.showInformationMessage(
        'Code Oracle: put the cursor on a function name to trace its callers.',
      );
    const query = line ? `${ctx.relativePath(folder, target)}:${line}` : symbol;
    await ctx.callersTree.show(folder, query);
  };

const exportChat: CommandFactory = (ctx) => () => exportTranscript(ctx.chat.transcript());

const newChat: CommandFactory = (ctx) => () => ctx.chat.newChat();

export const COMMANDS: Record<string, CommandFactory> = {
  'codeOracle.reindex': needsEngine(reindex),
  'codeOracle.clearIndex': needsEngine(clearIndex),
  'codeOracle.showLog': showLog,
  'codeOracle.askAboutSelection': needsEngine(askAboutSelection),
  'codeOracle.explainError': needsEngine(
    (ctx) =>
      (...args: unknown[]) =>
        explainError(
          ctx,
          args[0] as vscode.Uri | undefined,
          args[1] as vscode.Diagnostic | undefined,
        ),
  ),
  'codeOracle.proposeFix': needsEngine(
    (ctx) =>
      (...args: unknown[]) =>
        ctx.fixes.proposeForDiagnostic(
          args[0] as vscode.Uri | undefined,
          args[1] as vscode.Diagnostic | undefined,
        ),
  ),
  'codeOracle.resolveIssue': needsEngine(
    (ctx) =>
      (...args: unknown[]) =>
        ctx.fixes.resolveIssue(typeof args[0] === 'string' ? args[0] : undefined),
  ),
  'codeOracle.runFixTests': needsEngine((ctx) => () => ctx.fixes.runTests()),
  'codeOracle.setGitHubToken': (ctx) => () => ctx.fixes.setGitHubToken(),
  'codeOracle.setApiKey': setApiKeyCommand,
  'codeOracle.chooseModel': chooseModel,
  'codeOracle.showCallers': needsEngine(showCallers),
  'codeOracle.exportChat': exportChat,
  'codeOracle.newChat': newChat,
  'codeOracle.restartEngine': restartEngine,
};
