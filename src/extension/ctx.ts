import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { IndexStats } from '../engine/engine';
import { EngineWorkerClient } from '../engine/host/client';
import type { IndexProgress } from '../engine/index/indexer';
import { CallersTree } from './callers/tree';
import { CallersLens } from './callers/lens';
import { ChatView } from './chat/view';
import * as commands from './commands';
import { readConfig, SECTION } from './config';
import { ExplainErrorActions } from './explain-error';
import { FolderIndex } from './folder-index';
import { registerLanguageModelTools } from './lm-tools';
import { languageModelHandler } from './lm-adapter';
import { writeEvent } from './log';
import { registerParticipant } from './participant';
import { IndexStatus } from './status';
import { TranscriptLinks, TRANSCRIPT_LANGUAGE } from './transcript';

/**
 * The extension's one context object: it owns every disposable (the engine worker, the status
 * bar, the log channel, the chat, the callers lens and tree, one index per workspace folder) and
 * is what commands are built from.
 */
export class Ctx implements vscode.Disposable {
  readonly log = vscode.window.createOutputChannel('Code Oracle', { log: true });
  readonly status = new IndexStatus();
  readonly client: EngineWorkerClient;
  readonly chat: ChatView;
  readonly callersTree: CallersTree;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly indexes = new Map<string, FolderIndex>();
  private readonly stats = new Map<string, IndexStats>();
  private readonly progressEmitter = new vscode.EventEmitter<IndexProgress>();
  private readonly readyEmitter = new vscode.EventEmitter<readonly IndexStats[]>();
  private readonly failedEmitter = new vscode.EventEmitter<string>();
  /** Indexing progress of any folder. */
  readonly onProgress = this.progressEmitter.event;
  /** A folder's index was (re)built or updated: the totals of every folder. */
  readonly onReady = this.readyEmitter.event;
  readonly onFailed = this.failedEmitter.event;
  /** Settles once every folder's first index has run (activation does not wait for it). */
  ready: Promise<void> = Promise.resolve();
  /** True once every folder has finished its first index. */
  indexReady = false;

  constructor(readonly extension: vscode.ExtensionContext) {
    this.client = new EngineWorkerClient({ logLevel: readConfig().logLevel });
    this.client.setLlmHandler(languageModelHandler);
    this.chat = new ChatView(this);
    this.callersTree = new CallersTree(this);
    this.subscriptions.push(
      this.log,
      this.status,
      this.progressEmitter,
      this.readyEmitter,
      this.failedEmitter,
      { dispose: () => this.client.dispose() },
      this.client.onLog((event) => writeEvent(this.log, event)),
      this.client.onDidExit((reason) => {
        this.log.error(`The engine stopped: ${reason}`);
        this.status.failed(`The Code Oracle engine stopped: ${reason}. Reload the window to restart it.`);
      }),
    );
  }

  get folders(): FolderIndex[] {
    return [...this.indexes.values()];
  }

  /** The folder a file belongs to; without one, the folder of the active editor, or the first. */
  folderFor(uri?: vscode.Uri): FolderIndex | undefined {
    const target = uri ?? vscode.window.activeTextEditor?.document.uri;
    const folder = target ? vscode.workspace.getWorkspaceFolder(target) : undefined;
    return (folder && this.indexes.get(folder.uri.toString())) ?? this.folders[0];
  }

  /** A folder's file as a path relative to it, in the index's form. */
  relativePath(folder: FolderIndex, uri: vscode.Uri): string {
    return path.relative(folder.root, uri.fsPath).split(path.sep).join('/');
  }

  registerCommand(name: string, factory: commands.CommandFactory): void {
    this.subscriptions.push(vscode.commands.registerCommand(name, factory(this)));
  }

  start(): void {
    for (const [name, factory] of Object.entries(commands.COMMANDS)) this.registerCommand(name, factory);
    const supported = commands.SUPPORTED_LANGUAGES.map((language) => ({ language, scheme: 'file' }));
    this.subscriptions.push(
      vscode.window.registerWebviewViewProvider(ChatView.id, this.chat, { webviewOptions: { retainContextWhenHidden: true } }),
      vscode.window.registerTreeDataProvider(CallersTree.id, this.callersTree),
      vscode.languages.registerCodeLensProvider(supported, new CallersLens(this)),
      vscode.languages.registerCodeActionsProvider('*', new ExplainErrorActions(), { providedCodeActionKinds: ExplainErrorActions.kinds }),
      vscode.languages.registerDocumentLinkProvider({ language: TRANSCRIPT_LANGUAGE }, new TranscriptLinks()),
      ...registerParticipant(this),
      ...registerLanguageModelTools(this),
      vscode.workspace.onDidChangeWorkspaceFolders((event) => {
        for (const folder of event.removed) this.closeFolder(folder);
        for (const folder of event.added) void this.openFolder(folder);
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${SECTION}.chat`) || event.affectsConfiguration(`${SECTION}.callersLens`) || event.affectsConfiguration(`${SECTION}.search`)) return this.chat.refreshSettings();
        if (event.affectsConfiguration(SECTION) || event.affectsConfiguration('files.exclude')) void this.restartFolders();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.restartFolders()),
    );
    this.ready = Promise.all((vscode.workspace.workspaceFolders ?? []).map((folder) => this.openFolder(folder))).then(() => {
      this.indexReady = true;
    });
  }

  /** Deletes every folder's store and indexes again from nothing. */
  async rebuildFromScratch(): Promise<void> {
    const folders = this.folders.map((index) => index.folder);
    for (const folder of folders) {
      const index = this.indexes.get(folder.uri.toString())!;
      this.closeFolder(folder);
      await this.client.close(index.root);
      await fs.rm(index.storeDir, { recursive: true, force: true });
    }
    await Promise.all(folders.map((folder) => this.openFolder(folder)));
  }

  dispose(): void {
    this.folders.forEach((index) => index.dispose());
    this.indexes.clear();
    while (this.subscriptions.length) this.subscriptions.pop()!.dispose();
  }

  private async openFolder(folder: vscode.WorkspaceFolder): Promise<void> {
    const index = new FolderIndex(folder, this.client, this.extension.globalStorageUri, this.extension.secrets, {
      progress: (progress) => {
        this.status.indexing(progress);
        this.progressEmitter.fire(progress);
      },
      ready: (stats) => {
        this.stats.set(folder.uri.toString(), stats);
        this.status.ready([...this.stats.values()]);
        this.readyEmitter.fire([...this.stats.values()]);
      },
      failed: (message) => {
        this.log.error(message);
        this.status.failed(message);
        this.failedEmitter.fire(message);
      },
    });
    this.indexes.set(folder.uri.toString(), index);
    await index.start();
  }

  private closeFolder(folder: vscode.WorkspaceFolder): void {
    this.indexes.get(folder.uri.toString())?.dispose();
    this.indexes.delete(folder.uri.toString());
    this.stats.delete(folder.uri.toString());
  }

  private async restartFolders(): Promise<void> {
    const folders = this.folders.map((index) => index.folder);
    folders.forEach((folder) => this.closeFolder(folder));
    await Promise.all(folders.map((folder) => this.openFolder(folder)));
  }
}
