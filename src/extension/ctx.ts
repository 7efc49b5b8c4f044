import { promises as fs } from 'node:fs';
import * as vscode from 'vscode';
import type { IndexStats } from '../engine/engine';
import { EngineWorkerClient } from '../engine/host/client';
import * as commands from './commands';
import { readConfig, SECTION } from './config';
import { FolderIndex } from './folder-index';
import { writeEvent } from './log';
import { IndexStatus } from './status';

/**
 * The extension's one context object: it owns every disposable (the engine worker, the status
 * bar, the log channel, one index per workspace folder) and is what commands are built from.
 */
export class Ctx implements vscode.Disposable {
  readonly log = vscode.window.createOutputChannel('Code Oracle', { log: true });
  readonly status = new IndexStatus();
  readonly client: EngineWorkerClient;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly indexes = new Map<string, FolderIndex>();
  private readonly stats = new Map<string, IndexStats>();
  /** Settles once every folder's first index has run (activation does not wait for it). */
  ready: Promise<void> = Promise.resolve();

  constructor(readonly extension: vscode.ExtensionContext) {
    this.client = new EngineWorkerClient({ logLevel: readConfig().logLevel });
    this.subscriptions.push(
      this.log,
      this.status,
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

  registerCommand(name: string, factory: commands.CommandFactory): void {
    this.subscriptions.push(vscode.commands.registerCommand(name, factory(this)));
  }

  start(): void {
    this.registerCommand('codeOracle.reindex', commands.reindex);
    this.registerCommand('codeOracle.clearIndex', commands.clearIndex);
    this.registerCommand('codeOracle.showLog', commands.showLog);
    this.subscriptions.push(
      vscode.workspace.onDidChangeWorkspaceFolders((event) => {
        for (const folder of event.removed) this.closeFolder(folder);
        for (const folder of event.added) void this.openFolder(folder);
      }),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(SECTION) || event.affectsConfiguration('files.exclude')) void this.restartFolders();
      }),
    );
    this.ready = Promise.all((vscode.workspace.workspaceFolders ?? []).map((folder) => this.openFolder(folder))).then(() => undefined);
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
    const index = new FolderIndex(folder, this.client, this.extension.globalStorageUri, {
      progress: (progress) => this.status.indexing(progress),
      ready: (stats) => {
        this.stats.set(folder.uri.toString(), stats);
        this.status.ready([...this.stats.values()]);
      },
      failed: (message) => {
        this.log.error(message);
        this.status.failed(message);
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
