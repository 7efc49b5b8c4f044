import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import type { IndexStats } from '../engine/engine';
import { EngineWorkerClient, type WorkerState } from '../engine/host/client';
import type { IndexProgress } from '../engine/index/indexer';
import { relativePath } from '../engine/util/paths';
import { describeError } from '../engine/util/result';
import { CallersTree } from './callers/tree';
import { CallersLens } from './callers/lens';
import { ChatView } from './chat/view';
import * as commands from './commands';
import { readConfig, SECTION } from './config';
import { ExplainErrorActions } from './explain-error';
import { ProposeFixActions } from './fix/actions';
import { FixController } from './fix/controller';
import { FolderIndex } from './folder-index';
import { registerLanguageModelTools } from './lm-tools';
import { languageModelHandler } from './lm-adapter';
import { writeEvent } from './log';
import { registerParticipant } from './participant';
import { IndexStatus } from './status';
import { TranscriptLinks, TRANSCRIPT_LANGUAGE } from './transcript';

/** Settings edits come in bursts (typing in settings.json); the folders restart once after them. */
const RESTART_DELAY_MS = 500;
/** A worker that dies is replaced this often within the window; one that keeps dying stays down. */
const CRASH_RESTARTS = { times: 3, windowMs: 3 * 60_000 };
/** The context key `when` clauses read: true while the engine can serve requests. */
const ENGINE_RUNNING_KEY = 'codeOracle.engineRunning';

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
  readonly fixes = new FixController(this);
  private readonly callersLens: CallersLens;
  private restartTimer: NodeJS.Timeout | undefined;
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
    this.client = new EngineWorkerClient({
      logLevel: readConfig().logLevel,
      restartAfterCrash: CRASH_RESTARTS,
    });
    this.client.setLlmHandler(languageModelHandler);
    this.chat = new ChatView(this);
    this.callersTree = new CallersTree(this);
    this.callersLens = new CallersLens(this);
    this.subscriptions.push(
      this.chat,
      this.callersTree,
      this.callersLens,
      // built or changed: callers counts may have moved
      this.onReady(() => {
        this.callersLens.refresh();
        void this.callersTree.refresh();
      }),
      { dispose: () => clearTimeout(this.restartTimer) },
      this.log,
      this.status,
      this.progressEmitter,
      this.readyEmitter,
      this.failedEmitter,
      { dispose: () => this.client.dispose() },
      this.client.onLog((event) => writeEvent(this.log, event)),
      this.client.onDidChangeState((state) => this.engineStateChanged(state)),
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
    return relativePath(folder.root, uri.fsPath);
  }

  registerCommand(name: string, factory: commands.CommandFactory): void {
    this.subscriptions.push(vscode.commands.registerCommand(name, factory(this)));
  }

  start(): void {
    void setEngineRunning(true);
    for (const [name, factory] of Object.entries(commands.COMMANDS))
      this.registerCommand(name, factory);
    const supported = commands.SUPPORTED_LANGUAGES.map((language) => ({
      language,
      scheme: 'file',
    }));
    this.subscriptions.push(
      vscode.window.registerWebviewViewProvider(ChatView.id, this.chat, {
        webviewOptions: { retainContextWhenHidden: true },
      }),
      vscode.window.registerTreeDataProvider(CallersTree.id, this.callersTree),
      vscode.languages.registerCodeLensProvider(supported, this.callersLens),
      vscode.languages.registerCodeActionsProvider('*', new ExplainErrorActions(), {
        providedCodeActionKinds: ExplainErrorActions.kinds,
      }),
      vscode.languages.registerCodeActionsProvider('*', new ProposeFixActions(), {
        providedCodeActionKinds: ProposeFixActions.kinds,
      }),
      vscode.languages.registerDocumentLinkProvider(
        { language: TRANSCRIPT_LANGUAGE },
        new TranscriptLinks(),
      ),
      ...registerParticipant(this),
      ...registerLanguageModelTools(this),
      vscode.workspace.onDidChangeWorkspaceFolders((event) => {
        for (const folder of event.removed) void this.closeFolder(folder);
        for (const folder of event.added) void this.openFolder(folder);
      }),
      vscode.workspace.onDidChangeConfiguration((event) => this.settingsChanged(event)),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.chat.refreshSettings();
        // a trusted workspace may summarise long functions with a model
        if (readConfig().llm.summarizeLongFunctions) this.scheduleRestart();
      }),
    );
    this.ready = Promise.all(
      (vscode.workspace.workspaceFolders ?? []).map((folder) => this.openFolder(folder)),
    ).then(() => {
      this.indexReady = true;
    });
  }

  /** Starts a new engine worker; the state listener opens the folders in it again. */
  restartEngine(): void {
    this.log.info('Restarting the engine.');
    this.client.restart();
  }

  /** Deletes every folder's store and indexes again from nothing. */
  async rebuildFromScratch(): Promise<void> {
    const folders = this.folders.map((index) => index.folder);
    for (const folder of folders) {
      const index = this.indexes.get(folder.uri.toString())!;
      await this.closeFolder(folder);
      await fs.rm(index.storeDir, { recursive: true, force: true });
    }
    await Promise.all(folders.map((folder) => this.openFolder(folder)));
  }

  dispose(): void {
    this.folders.forEach((index) => index.dispose());
    this.indexes.clear();
    while (this.subscriptions.length) this.subscriptions.pop()!.dispose();
  }

  /**
   * Each setting reaches only what reads it: the model label, the lenses, or (for what the index
   * is built from) a restart of the folders, debounced so one edit of settings.json restarts once.
   * Questions read the model settings afresh, so changing them needs no restart — unless long
   * functions are summarised while indexing.
   */
  private settingsChanged(event: vscode.ConfigurationChangeEvent): void {
    const affects = (key: string) => event.affectsConfiguration(`${SECTION}.${key}`);
    if (affects('chat') || affects('llm') || affects('search')) this.chat.refreshSettings();
    if (affects('callersLens')) this.callersLens.refresh();
    const summarizerChanged =
      affects('llm.summarizeLongFunctions') ||
      (readConfig().llm.summarizeLongFunctions &&
        (affects('llm.provider') || affects('llm.model') || affects('llm.baseUrl')));
    if (
      affects('embeddingModel') ||
      affects('index') ||
      event.affectsConfiguration('files.exclude') ||
      summarizerChanged
    )
      this.scheduleRestart();
  }

  /**
   * Commands that need the engine follow its state through a context key; a stopped engine is
   * shown in the status bar, and a new one gets the folders opened and brought up to date again.
   */
  private engineStateChanged(state: WorkerState): void {
    void setEngineRunning(state.running);
    if (!state.running) {
      this.log.error(`The engine stopped: ${state.reason}`);
      this.indexReady = false;
      this.status.failed(
        `The Code Oracle engine stopped: ${state.reason}. Run "Code Oracle: Restart Engine" to start it again.`,
      );
      return;
    }
    this.log.info('The engine is running again: opening the workspace folders in it.');
    this.indexReady = false;
    this.ready = this.restartFolders().then(() => {
      this.indexReady = true;
    });
  }

  private scheduleRestart(): void {
    clearTimeout(this.restartTimer);
    this.restartTimer = setTimeout(() => void this.restartFolders(), RESTART_DELAY_MS);
  }

  private async openFolder(folder: vscode.WorkspaceFolder): Promise<void> {
    const index = new FolderIndex(
      folder,
      this.client,
      this.extension.globalStorageUri,
      this.extension.secrets,
      {
        progress: (progress) => {
          this.status.indexing(progress);
          this.progressEmitter.fire(progress);
        },
        ready: (stats) => {
          this.stats.set(folder.uri.toString(), stats);
          this.status.ready([...this.stats.values()]);
          this.readyEmitter.fire([...this.stats.values()]);
        },
        unchanged: () => this.status.ready([...this.stats.values()]),
        failed: (message) => this.indexFailed(message),
      },
    );
    this.indexes.set(folder.uri.toString(), index);
    try {
      await index.start();
    } catch (cause) {
      // the worker gone, a storage folder that cannot be made: the status bar says so
      this.indexFailed(`Code Oracle could not index ${folder.name}: ${describeError(cause)}`);
    }
  }

  private indexFailed(message: string): void {
    this.log.error(message);
    this.status.failed(message);
    this.failedEmitter.fire(message);
  }

  private async closeFolder(folder: vscode.WorkspaceFolder): Promise<void> {
    const index = this.indexes.get(folder.uri.toString());
    this.indexes.delete(folder.uri.toString());
    this.stats.delete(folder.uri.toString());
    await index?.close();
  }

  private async restartFolders(): Promise<void> {
    const folders = this.folders.map((index) => index.folder);
    await Promise.all(folders.map((folder) => this.closeFolder(folder)));
    await Promise.all(folders.map((folder) => this.openFolder(folder)));
  }
}

function setEngineRunning(running: boolean): Thenable<unknown> {
  return vscode.commands.executeCommand('setContext', ENGINE_RUNNING_KEY, running);
}
