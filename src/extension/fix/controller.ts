import * as path from 'node:path';
import * as vscode from 'vscode';
import { fetchIssue, gitHubSettingsFromEnv, parseIssueReference } from '../../engine/fix/github';
import type {
  DiagnosticInput,
  FileEdit,
  FixProposal,
  IssueInput,
  TestResult,
} from '../../engine/fix/model';
import { issueFromDiagnostic } from '../../engine/fix/resolver';
import { unifiedDiff } from '../../engine/fix/diff';
import type { ChatFix } from '../chat/protocol';
import { isInside } from '../../engine/util/paths';
import { describeError } from '../../engine/util/result';
import type { Ctx } from '../ctx';
import type { FolderIndex } from '../folder-index';
import { llmWire } from '../models';
import { runTestsWithConsent } from './consent';
import { fixReport } from './report';
import { TRANSCRIPT_LANGUAGE } from '../transcript';

/**
 * The resolver in the editor: a diagnostic or an issue becomes a patch from the engine, shown as
 * a workspace edit that needs confirmation, so VS Code's refactor preview shows the diff and the
 * user applies or discards it; nothing is written otherwise. The project's tests run on a patched
 * copy, in a trusted workspace, after the user agrees. In Restricted Mode nothing runs.
 */
const CONTEXT_LINES = 10;
const GITHUB_TOKEN_KEY = 'codeOracle.githubToken';

export const RESTRICTED_MODE_FIX =
  'Restricted Mode: Code Oracle proposes, runs and writes nothing in a workspace you have not trusted. Trust the workspace to propose a fix.';
export const NEEDS_MODEL_FIX =
  'Proposing a patch needs a language model, and none is configured. Choose one in the setting “Code Oracle › Llm: Provider” (Anthropic, an OpenAI-compatible server such as Ollama, or VS Code’s models), and store its key with “Code Oracle: Set API Key”.';

interface Proposed {
  /** The chat answer the fix was asked from ("Fix this"); null for the editor's commands. */
  readonly chatId: string | null;
  readonly folder: FolderIndex;
  readonly issue: IssueInput;
  readonly proposal: FixProposal;
  accepted: boolean;
  tests: TestResult | null;
}

export class FixController {
  /** The latest proposal, for "Run Tests" and "Preview" after the first look. */
  private latest: Proposed | null = null;
  /** Proposals asked from the chat, by the answer they belong to. */
  private readonly fromChat = new Map<string, Proposed>();

  constructor(private readonly ctx: Ctx) {}

  /** The quick fix: the diagnostic (or the one under the cursor) and the code around it. */
  async proposeForDiagnostic(uri?: vscode.Uri, diagnostic?: vscode.Diagnostic): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    const target = uri ?? editor?.document.uri;
    const chosen =
      diagnostic ??
      (target && editor
        ? vscode.languages
            .getDiagnostics(target)
            .find((candidate) => candidate.range.contains(editor.selection.active))
        : undefined);
    if (!target || !chosen)
      return void vscode.window.showInformationMessage(
        'Code Oracle: put the cursor on a problem (a squiggle) to propose a fix for it.',
      );
    const folder = this.ctx.folderFor(target);
    if (!folder || !isInside(folder.root, target.fsPath))
      return void vscode.window.showInformationMessage(
        'Code Oracle: only files of an open workspace folder can be fixed.',
      );
    const document = await vscode.workspace.openTextDocument(target);
    const input = diagnosticInput(document, this.ctx.relativePath(folder, target), chosen);
    await this.propose(folder, issueFromDiagnostic(input), input);
  }

  /** "Resolve an Issue…": free text, or a GitHub issue by URL or owner/repo#N. */
  async resolveIssue(text?: string): Promise<void> {
    const typed =
      text ??
      (await vscode.window.showInputBox({
        prompt: 'Describe the issue, or paste a GitHub issue URL or owner/repo#N',
        placeHolder: 'cartTotal skips the first item · https://github.com/owner/repo/issues/12',
        ignoreFocusOut: true,
      }));
    if (!typed?.trim()) return;
    const folder = this.ctx.folderFor();
    if (!folder)
      return void vscode.window.showInformationMessage(
        'Code Oracle: open a folder to resolve an issue in it.',
      );
    const reference = parseIssueReference(typed);
    let issue: IssueInput;
    if (reference) {
      const token =
        (await this.ctx.extension.secrets.get(GITHUB_TOKEN_KEY)) ?? gitHubSettingsFromEnv().token;
      const fetched = await fetchIssue(reference, { ...gitHubSettingsFromEnv(), token });
      if (!fetched.ok)
        return void vscode.window.showErrorMessage(`Code Oracle: ${fetched.error.message}`);
      issue = fetched.value;
    } else {
      const [title = '', ...rest] = typed.trim().split('\n');
      issue = { title, body: rest.join('\n'), number: null, repo: null };
    }
    await this.propose(folder, issue);
  }

  async setGitHubToken(): Promise<void> {
    const token = await vscode.window.showInputBox({
      prompt:
        'GitHub token for reading issues (kept in VS Code’s secret storage; empty removes it)',
      password: true,
      ignoreFocusOut: true,
    });
    if (token === undefined) return;
    if (token.trim()) await this.ctx.extension.secrets.store(GITHUB_TOKEN_KEY, token.trim());
    else await this.ctx.extension.secrets.delete(GITHUB_TOKEN_KEY);
    void vscode.window.showInformationMessage(
      token.trim()
        ? 'Code Oracle: the GitHub token is stored.'
        : 'Code Oracle: the GitHub token is removed.',
    );
  }

  /** Runs the project's tests on a copy with the latest patch (trusted workspace, after a yes). */
  async runTests(latest: Proposed | null = this.latest): Promise<TestResult | null> {
    if (!latest)
      return (void vscode.window.showInformationMessage('Code Oracle: propose a fix first.'), null);
    const outcome = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: 'Code Oracle: running the tests on a patched copy…',
        cancellable: true,
      },
      (_progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        return runTestsWithConsent(
          latest.folder.root,
          latest.proposal.edits,
          {
            trusted: vscode.workspace.isTrusted,
            confirm: async (command) =>
              (await vscode.window.showWarningMessage(
                `Run the project's tests (${command}) on a patched copy of ${latest.folder.folder.name}? Its own code runs on this machine.`,
                { modal: true },
                'Run Tests',
              )) === 'Run Tests',
          },
          controller.signal,
        );
      },
    );
    if (!outcome.ran) {
      void vscode.window.showInformationMessage(`Code Oracle: ${outcome.reason}`);
      this.updateChat(latest, { tests: outcome.reason });
      return null;
    }
    latest.tests = outcome.result;
    this.updateChat(latest, { tests: describeTests(outcome.result) });
    this.ctx.log.info(
      `fix_tests framework=${outcome.result.framework} passed=${outcome.result.passed} total=${outcome.result.totalTests ?? '?'} failed=${outcome.result.failedCount}`,
    );
    void vscode.window
      .showInformationMessage(`Code Oracle: ${describeTests(outcome.result)}`, 'Explanation')
      .then((choice) => choice && this.showReport(latest));
    return outcome.result;
  }

  /** "Fix this" under a chat answer: the question and the answer become the issue. */
  async fixFromChat(chatId: string, question: string, answer: string): Promise<void> {
    const folder = this.ctx.folderFor();
    const issue: IssueInput = {
      title: question.trim().split('\n')[0]!.slice(0, 200),
      body: `${question.trim()}\n\nWhat was found about it:\n${answer.trim()}`,
      number: null,
      repo: null,
    };
    if (!folder)
      return this.ctx.chat.showFix(
        chatId,
        chatFix('failed', { error: 'Open a folder to fix its code.' }),
      );
    await this.propose(folder, issue, undefined, chatId);
  }

  async previewFromChat(chatId: string): Promise<boolean> {
    const proposed = this.fromChat.get(chatId);
    return proposed ? this.preview(proposed) : false;
  }

  async runTestsFromChat(chatId: string): Promise<TestResult | null> {
    const proposed = this.fromChat.get(chatId);
    return proposed ? this.runTests(proposed) : null;
  }

  /** The card under the chat answer a fix was asked from, brought up to date. */
  private updateChat(proposed: Proposed, change: { tests?: string }): void {
    if (!proposed.chatId) return;
    const { proposal, folder } = proposed;
    const confidence = Math.min(...proposal.patches.map((patch) => patch.confidence));
    this.ctx.chat.showFix(
      proposed.chatId,
      chatFix(proposed.accepted ? 'applied' : 'proposed', {
        explanation: proposal.patches
          .map((patch) => `${patch.file}: ${patch.explanation}`)
          .join('\n'),
        confidence,
        diff: proposal.edits
          .map((edit) => unifiedDiff(edit.file, edit.before, edit.after))
          .join(''),
        citations: proposal.analysis.relevantChunks.map((chunk) => ({
          path: chunk.path,
          startLine: chunk.startLine,
          endLine: chunk.endLine,
          why: chunk.name,
          folder: folder.folder.uri.toString(),
        })),
        tests: change.tests ?? (proposed.tests ? describeTests(proposed.tests) : null),
      }),
    );
  }

  /** The explanation, the places found (clickable), the diff and the test result, beside the code. */
  private async showReport(proposed: Proposed): Promise<void> {
    const document = await vscode.workspace.openTextDocument({
      language: TRANSCRIPT_LANGUAGE,
      content: `${fixReport(proposed.issue, proposed.proposal, proposed.tests)}\n`,
    });
    await vscode.window.showTextDocument(document, {
      viewColumn: vscode.ViewColumn.Beside,
      preview: true,
    });
  }

  /** Opens the latest patch in the refactor preview again. */
  async previewAgain(): Promise<boolean> {
    if (!this.latest) return false;
    return this.preview(this.latest);
  }

  private async propose(
    folder: FolderIndex,
    issue: IssueInput,
    diagnostic?: DiagnosticInput,
    chatId: string | null = null,
  ): Promise<void> {
    const failed = (error: string) => {
      if (chatId) this.ctx.chat.showFix(chatId, chatFix('failed', { error }));
    };
    // asked from the chat, the card under the answer says it; from the editor, a notification
    if (!vscode.workspace.isTrusted)
      return void (chatId
        ? failed(RESTRICTED_MODE_FIX)
        : vscode.window.showWarningMessage(RESTRICTED_MODE_FIX));
    const llm = await llmWire(this.ctx.extension.secrets);
    if (llm.provider === 'none') {
      if (chatId) return void failed(NEEDS_MODEL_FIX);
      const choice = await vscode.window.showWarningMessage(
        NEEDS_MODEL_FIX,
        'Open Settings',
        'Set API Key',
      );
      if (choice === 'Open Settings')
        await vscode.commands.executeCommand('workbench.action.openSettings', 'codeOracle.llm');
      if (choice === 'Set API Key') await vscode.commands.executeCommand('codeOracle.setApiKey');
      return;
    }
    if (chatId) this.ctx.chat.showFix(chatId, chatFix('proposing'));
    const result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Code Oracle: proposing a fix for “${issue.title.slice(0, 60)}”…`,
        cancellable: true,
      },
      async (_progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        await this.ctx.ready;
        return this.ctx.client.proposeFix(
          folder.root,
          { issue, llm, overlay: unsavedText(folder), ...(diagnostic ? { diagnostic } : {}) },
          controller.signal,
        );
      },
    );
    if (!result.ok) {
      this.ctx.log.warn(`fix_failed code=${result.error.code} message=${result.error.message}`);
      failed(result.error.code === 'cancelled' ? 'Stopped.' : result.error.message);
      if (result.error.code !== 'cancelled')
        void vscode.window.showErrorMessage(`Code Oracle: ${result.error.message}`);
      return;
    }
    const proposed: Proposed = {
      chatId,
      folder,
      issue,
      proposal: result.value,
      accepted: false,
      tests: null,
    };
    this.latest = proposed;
    if (chatId) this.fromChat.set(chatId, proposed);
    this.updateChat(proposed, {});
    this.ctx.log.info(
      `fix_proposed files=${result.value.edits.map((edit) => edit.file).join(',')} attempts=${result.value.attempts}`,
    );
    await this.preview(proposed);
  }

  /** The refactor preview: true when the user applied the patch. */
  private async preview(proposed: Proposed): Promise<boolean> {
    const edit = await workspaceEdit(proposed.folder, proposed.proposal);
    if (typeof edit === 'string') {
      void vscode.window.showErrorMessage(`Code Oracle: ${edit}`);
      return false;
    }
    const confidence = Math.min(...proposed.proposal.patches.map((patch) => patch.confidence));
    void vscode.window
      .showInformationMessage(
        `Code Oracle proposes a fix (confidence ${confidence.toFixed(2)}). Review it in the Refactor Preview: tick the change and Apply, or Discard.`,
        'Explanation',
      )
      .then((choice) => choice && this.showReport(proposed));
    const applied = await vscode.workspace.applyEdit(edit, { isRefactoring: true });
    proposed.accepted ||= applied;
    this.updateChat(proposed, {});
    this.ctx.log.info(`fix_previewed applied=${applied}`);
    const explanation = proposed.proposal.patches.map((patch) => patch.explanation).join(' ');
    const actions = vscode.workspace.isTrusted ? ['Run Tests', 'Explanation'] : ['Explanation'];
    void vscode.window
      .showInformationMessage(
        applied
          ? `Code Oracle applied the fix (unsaved; undo reverts it). ${explanation}`
          : 'Code Oracle: the fix was discarded; nothing changed.',
        ...(applied ? actions : ['Preview Again', 'Explanation']),
      )
      .then(async (choice) => {
        if (choice === 'Run Tests') await this.runTests();
        if (choice === 'Preview Again') await this.previewAgain();
        if (choice === 'Explanation') await this.showReport(proposed);
      });
    return applied;
  }
}

function chatFix(
  status: ChatFix['status'],
  fields: Partial<Omit<ChatFix, 'status'>> = {},
): ChatFix {
  return {
    status,
    explanation: '',
    confidence: null,
    diff: '',
    citations: [],
    tests: null,
    error: null,
    ...fields,
  };
}

function diagnosticInput(
  document: vscode.TextDocument,
  relative: string,
  diagnostic: vscode.Diagnostic,
): DiagnosticInput {
  const first = Math.max(0, diagnostic.range.start.line - CONTEXT_LINES);
  const last = Math.min(document.lineCount - 1, diagnostic.range.end.line + CONTEXT_LINES);
  const code =
    diagnostic.code === undefined
      ? undefined
      : String(typeof diagnostic.code === 'object' ? diagnostic.code.value : diagnostic.code);
  return {
    path: relative,
    message: diagnostic.message,
    ...(code ? { code } : {}),
    ...(diagnostic.source ? { source: diagnostic.source } : {}),
    startLine: diagnostic.range.start.line + 1,
    endLine: diagnostic.range.end.line + 1,
    context: document.getText(new vscode.Range(first, 0, last, document.lineAt(last).text.length)),
    contextStartLine: first + 1,
  };
}

/** Open documents of the folder with unsaved changes: the patch is made against what the user sees. */
function unsavedText(folder: FolderIndex): Record<string, string> {
  const overlay: Record<string, string> = {};
  for (const document of vscode.workspace.textDocuments)
    if (
      document.isDirty &&
      document.uri.scheme === 'file' &&
      isInside(folder.root, document.uri.fsPath)
    )
      overlay[path.relative(folder.root, document.uri.fsPath).split(path.sep).join('/')] =
        document.getText();
  return overlay;
}

/** The patch as a workspace edit whose every change needs the user's confirmation, or why not. */
async function workspaceEdit(
  folder: FolderIndex,
  proposal: FixProposal,
): Promise<vscode.WorkspaceEdit | string> {
  const edit = new vscode.WorkspaceEdit();
  const confidence = Math.min(...proposal.patches.map((patch) => patch.confidence));
  for (const fileEdit of proposal.edits) {
    const uri = vscode.Uri.file(path.join(folder.root, fileEdit.file));
    let document: vscode.TextDocument;
    try {
      document = await vscode.workspace.openTextDocument(uri);
    } catch (cause) {
      return `${fileEdit.file} cannot be opened: ${describeError(cause)}`;
    }
    if (document.getText() !== fileEdit.before)
      return `${fileEdit.file} changed since the fix was proposed; propose it again.`;
    for (const replacement of fileEdit.replacements)
      edit.replace(
        uri,
        new vscode.Range(
          document.positionAt(replacement.start),
          document.positionAt(replacement.end),
        ),
        replacement.text,
        {
          needsConfirmation: true,
          label: 'Code Oracle fix',
          description: `confidence ${confidence.toFixed(2)}: ${explanationFor(proposal, fileEdit)}`,
        },
      );
  }
  return edit;
}

function explanationFor(proposal: FixProposal, fileEdit: FileEdit): string {
  return proposal.patches
    .filter((patch) => patch.file === fileEdit.file || patch.file.endsWith(fileEdit.file))
    .map((patch) => patch.explanation)
    .join(' ');
}

export function describeTests(result: TestResult): string {
  if (result.framework === 'unknown') return result.outputSummary;
  const counts = `${result.passedTests ?? '?'} passed, ${result.failedCount} failed, ${result.totalTests ?? '?'} total`;
  return `${result.passed ? 'the tests pass with the fix' : result.timedOut ? 'the tests timed out' : 'the tests fail with the fix'} (${result.command}: ${counts}).`;
}
