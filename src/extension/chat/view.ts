import * as vscode from 'vscode';
import { describeStep, type Answer } from '../../engine/answer/model';
import { indexTotals, stageHeading } from '../../engine/model/progress';
import { confineToRoot, relativePath } from '../../engine/util/paths';
import { describeError } from '../../engine/util/result';
import { readConfig } from '../config';
import type { Ctx } from '../ctx';
import { stagePercent, type FolderIndex } from '../folder-index';
import { hasModel, llmWire, modelLabel } from '../models';
import { citedCode } from './code';
import { openDiagramPanel } from './diagram';
import { chatHtml } from './html';
import {
  FromWebview,
  MAX_ATTACHMENT_SIZE,
  type Attachment,
  type ChatAnswer,
  type ChatFix,
  type ChatMode,
  type ToWebview,
} from './protocol';

/**
 * The sidebar chat's host side: it creates the webview, answers its questions through the engine
 * worker (streaming the text back, cancelling on Stop), opens citations on the exact lines, and
 * asks on the user's behalf for "Explain this error" and "Ask about selection".
 */
const HIGHLIGHT_MS = 1500;
const TRANSCRIPT_ENTRIES = 50;

export interface TranscriptEntry {
  readonly question: string;
  readonly mode: ChatMode;
  readonly answer: ChatAnswer;
}

export class ChatView implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly id = 'codeOracle.chatView';
  private view: vscode.WebviewView | undefined;
  private webviewReady = false;
  private readonly queued: ToWebview[] = [];
  private readonly running = new Map<string, AbortController>();
  private readonly highlight = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    isWholeLine: true,
  });
  private mode: ChatMode;
  /** The "index ready" banner is for the first index a view sees, not for every later update. */
  private readyAnnounced = false;

  constructor(private readonly ctx: Ctx) {
    this.mode = readConfig().chatMode;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.webviewReady = false;
    const extensionUri = this.ctx.extension.extensionUri;
    view.webview.options = {
      enableScripts: true,
      localResourceRoots: [
        vscode.Uri.joinPath(extensionUri, 'media'),
        vscode.Uri.joinPath(extensionUri, 'dist', 'webview'),
      ],
    };
    view.webview.html = chatHtml(view.webview, extensionUri);
    const subscriptions = [
      view.webview.onDidReceiveMessage((raw: unknown) => void this.receive(raw)),
      this.ctx.onProgress((progress) => {
        if (!this.ctx.indexReady)
          this.post({
            type: 'indexing',
            stage: progress.stage,
            label: `${stageHeading(progress.stage)}…`,
            percent: stagePercent(progress),
          });
      }),
      this.ctx.onReady((stats) => {
        if (this.readyAnnounced) return;
        this.readyAnnounced = true;
        const { files, chunks } = indexTotals(stats);
        this.post({ type: 'indexReady', files, chunks });
      }),
      this.ctx.onFailed((message) => this.post({ type: 'indexFailed', message })),
    ];
    view.onDidDispose(() => {
      subscriptions.forEach((subscription) => subscription.dispose());
      this.view = undefined;
      this.stopAll();
    });
  }

  dispose(): void {
    this.stopAll();
    this.highlight.dispose();
  }

  /** Answers nobody can see any more are stopped, so they spend no more model tokens. */
  private stopAll(): void {
    for (const controller of this.running.values()) controller.abort();
    this.running.clear();
  }

  /** Asks a question as if the user had typed it (Explain this error, Ask about selection). */
  async askFromHost(request: {
    question: string;
    mode?: ChatMode;
    attachment?: Attachment;
    label?: string;
  }): Promise<void> {
    await vscode.commands.executeCommand(`${ChatView.id}.focus`);
    this.post({
      type: 'ask',
      question: request.question,
      mode: request.mode ?? this.mode,
      ...(request.attachment ? { attachment: request.attachment } : {}),
      ...(request.label ? { label: request.label } : {}),
    });
  }

  /** The questions and answers of this window, for "Export Chat". */
  transcript(): readonly TranscriptEntry[] {
    return this.ctx.extension.workspaceState.get<TranscriptEntry[]>('codeOracle.transcript', []);
  }

  /** Shows a fix's progress and result in the card under the answer it was asked from. */
  showFix(id: string, fix: ChatFix): void {
    this.post({ type: 'fixUpdate', id, fix });
  }

  refreshSettings(): void {
    this.post({ type: 'modelLabel', label: modelLabel(), hasModel: hasModel() });
  }

  /** "New Chat": the conversation starts over, and Export Chat starts from it. */
  async newChat(): Promise<void> {
    this.stopAll();
    await this.ctx.extension.workspaceState.update('codeOracle.transcript', []);
    await vscode.commands.executeCommand(`${ChatView.id}.focus`);
    this.post({ type: 'newChat' });
  }

  private post(message: ToWebview): void {
    if (!this.view || !this.webviewReady) {
      if (message.type === 'ask') this.queued.push(message);
      return;
    }
    void this.view.webview.postMessage(message);
  }

  private async receive(raw: unknown): Promise<void> {
    const parsed = FromWebview.safeParse(raw);
    if (!parsed.success)
      return this.ctx.log.warn(
        `chat_message_rejected reason=${parsed.error.issues[0]?.message ?? 'malformed'}`,
      );
    const message = parsed.data;
    switch (message.type) {
      case 'ready':
        return this.onWebviewReady();
      case 'ask':
        return this.answer(
          message.id,
          message.question,
          message.mode,
          message.attachment,
          message.sessionId,
        );
      case 'stop':
        return this.running.get(message.id)?.abort();
      case 'openCitation':
        return this.openCitation(message.folder, message.path, message.startLine, message.endLine);
      case 'pickFile':
        return this.pickFile();
      case 'dropUris':
        return this.attachUris(message.uris.map((uri) => vscode.Uri.parse(uri)));
      case 'setMode':
        this.mode = message.mode;
        return;
      case 'openDiagram':
        return openDiagramPanel(this.ctx.extension.extensionUri, message.svg);
      case 'fixThis':
        return this.ctx.fixes.fixFromChat(message.id, message.question, message.answer);
      case 'fixPreview':
        return void (await this.ctx.fixes.previewFromChat(message.id));
      case 'fixRunTests':
        return void (await this.ctx.fixes.runTestsFromChat(message.id));
    }
  }

  private onWebviewReady(): void {
    this.webviewReady = true;
    this.readyAnnounced ||= this.ctx.indexReady;
    this.post({
      type: 'init',
      mode: this.mode,
      modelLabel: modelLabel(),
      hasModel: hasModel(),
      indexReady: this.ctx.indexReady,
    });
    for (const message of this.queued.splice(0)) this.post(message);
  }

  private async answer(
    id: string,
    question: string,
    mode: ChatMode,
    attachment: Attachment | undefined,
    sessionId: string | undefined,
  ): Promise<void> {
    const folder = this.ctx.folderFor();
    if (!folder)
      return this.post({
        type: 'answerError',
        id,
        message: 'Open a folder to ask about its code.',
      });
    const controller = new AbortController();
    this.running.set(id, controller);
    this.post({ type: 'answerStart', id });
    try {
      const webSearchUrl = readConfig().webSearchUrl;
      const result = await this.ctx.client.ask(
        folder.root,
        {
          question,
          mode,
          llm: await llmWire(this.ctx.extension.secrets),
          ...(sessionId ? { sessionId } : {}),
          ...(attachment
            ? {
                attachment: {
                  path: attachment.path,
                  content: attachment.content,
                  ...(attachment.startLine ? { startLine: attachment.startLine } : {}),
                },
              }
            : {}),
          ...(webSearchUrl ? { webSearchUrl } : {}),
        },
        {
          onText: (text) => this.post({ type: 'answerText', id, text }),
          onStep: (step) => this.post({ type: 'agentStep', id, step: describeStep(step) }),
        },
        controller.signal,
      );
      if (!result.ok)
        return this.post({
          type: 'answerError',
          id,
          message: result.error.code === 'cancelled' ? 'Stopped.' : result.error.message,
        });
      const answer = await toChatAnswer(result.value, folder);
      this.post({ type: 'answerDone', id, answer });
      await this.remember({ question, mode, answer });
    } catch (cause) {
      // a key that cannot be read, a transcript that cannot be saved: the chat must not spin forever
      const message = describeError(cause);
      this.ctx.log.warn(`chat_answer_failed error=${message}`);
      this.post({ type: 'answerError', id, message: `Code Oracle could not answer: ${message}` });
    } finally {
      this.running.delete(id);
    }
  }

  private async remember(entry: TranscriptEntry): Promise<void> {
    await this.ctx.extension.workspaceState.update(
      'codeOracle.transcript',
      [...this.transcript(), entry].slice(-TRANSCRIPT_ENTRIES),
    );
  }

  /** Opens the cited file on its lines and highlights them for a moment. */
  private async openCitation(
    folderUri: string,
    relative: string,
    startLine: number,
    endLine: number,
  ): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.find(
      (candidate) => candidate.uri.toString() === folderUri,
    );
    const absolute = folder ? confineToRoot(folder.uri.fsPath, relative) : null;
    if (!folder || !absolute)
      return void vscode.window.showWarningMessage(
        `Code Oracle: ${relative} is not in this workspace.`,
      );
    // Joined to the folder's URI rather than made a file URI, so a folder keeps its scheme (remote, virtual).
    const uri = vscode.Uri.joinPath(
      folder.uri,
      ...relativePath(folder.uri.fsPath, absolute).split('/'),
    );
    try {
      const document = await vscode.workspace.openTextDocument(uri);
      const last = Math.min(endLine, document.lineCount);
      const range = new vscode.Range(
        startLine - 1,
        0,
        last - 1,
        document.lineAt(last - 1).text.length,
      );
      const editor = await vscode.window.showTextDocument(document, {
        selection: new vscode.Range(range.start, range.start),
        preview: true,
      });
      editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      editor.setDecorations(this.highlight, [range]);
      setTimeout(() => editor.setDecorations(this.highlight, []), HIGHLIGHT_MS);
    } catch (cause) {
      void vscode.window.showWarningMessage(
        `Code Oracle: cannot open ${relative}: ${describeError(cause)}`,
      );
    }
  }

  private async pickFile(): Promise<void> {
    const folder = this.ctx.folderFor();
    const picked = await vscode.window.showOpenDialog({
      canSelectMany: false,
      openLabel: 'Attach',
      ...(folder ? { defaultUri: folder.folder.uri } : {}),
    });
    if (picked?.[0]) await this.attachUris([picked[0]]);
  }

  private async attachUris(uris: readonly vscode.Uri[]): Promise<void> {
    for (const uri of uris.slice(0, 1)) {
      try {
        const bytes = await vscode.workspace.fs.readFile(uri);
        if (bytes.length > MAX_ATTACHMENT_SIZE)
          return void vscode.window.showWarningMessage(
            'Code Oracle: the file is larger than 512 KB; attach a part of it (select it and use "Ask about Selection").',
          );
        const content = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
        if (content.includes('\u0000'))
          return void vscode.window.showWarningMessage(
            'Code Oracle: that looks like a binary file; attach a text file.',
          );
        const folder = this.ctx.folderFor(uri);
        const path =
          folder && vscode.workspace.getWorkspaceFolder(uri)
            ? this.ctx.relativePath(folder, uri)
            : (uri.path.split('/').pop() ?? uri.path);
        this.post({ type: 'attachment', attachment: { path, content } });
      } catch (cause) {
        void vscode.window.showWarningMessage(
          `Code Oracle: cannot read ${uri.fsPath}: ${describeError(cause)}`,
        );
      }
    }
  }
}

/** Without a model the places are the answer: each carries its code, for the chat to show. */
async function toChatAnswer(answer: Answer, folder: FolderIndex): Promise<ChatAnswer> {
  const { metadata } = answer;
  const search = metadata.search;
  const code = answer.evidenceOnly
    ? await citedCode(folder.root, answer.citations)
    : answer.citations.map(() => null);
  return {
    answer: answer.answer,
    confidence: answer.confidence,
    citations: answer.citations.map((citation, index) => ({
      ...citation,
      folder: folder.folder.uri.toString(),
      ...(code[index] ? { code: code[index] } : {}),
    })),
    followUps: [...answer.followUps],
    evidenceOnly: answer.evidenceOnly,
    notices: [...metadata.notices],
    sessionId: metadata.cgrag?.sessionId ?? null,
    details: {
      mode: answer.mode,
      model: metadata.model ? `${metadata.model.backend} ${metadata.model.name}` : null,
      questionKind: search?.queryMode ?? null,
      crag: search
        ? {
            decision: search.crag.decision,
            score: search.crag.score,
            strategy: search.crag.strategy,
          }
        : null,
      passes: metadata.cgrag?.passesUsed ?? null,
      gapsIdentified: [...(metadata.cgrag?.gapsIdentified ?? [])],
      gapsResolved: [...(metadata.cgrag?.gapsResolved ?? [])],
      gapsUnresolved: [...(metadata.cgrag?.gapsUnresolved ?? [])],
      agentSteps: (metadata.agent?.steps ?? []).map(
        (step) => `${step.iteration}. ${describeStep(step)}`,
      ),
      citationsDropped: metadata.citationsDropped,
      timings: { ...(search?.timings ?? {}) },
      durationMs: metadata.durationMs,
    },
  };
}
