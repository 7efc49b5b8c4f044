import * as path from 'node:path';
import * as vscode from 'vscode';
import type { IndexStats } from '../engine/engine';
import type { EngineWorkerClient } from '../engine/host/client';
import type { IndexProgress, IndexSummary } from '../engine/index/indexer';
import { shortHash } from '../engine/util/hash';
import type { Result } from '../engine/util/result';
import { filesExclude, readConfig } from './config';
import { llmWire } from './models';

/**
 * One workspace folder's index: opened in the engine worker, built under a progress notification
 * the first time, then kept current from editor events and a file watcher (for changes made
 * outside the editor, such as a branch switch), debounced into batches.
 */
const DEBOUNCE_MS = 400;

export interface FolderIndexEvents {
  progress(progress: IndexProgress): void;
  ready(stats: IndexStats): void;
  failed(message: string): void;
}

export class FolderIndex implements vscode.Disposable {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly disposables: vscode.Disposable[] = [];
  private opened = false;

  constructor(
    readonly folder: vscode.WorkspaceFolder,
    private readonly client: EngineWorkerClient,
    private readonly storage: vscode.Uri,
    private readonly secrets: vscode.SecretStorage,
    private readonly events: FolderIndexEvents,
  ) {}

  get root(): string {
    return this.folder.uri.fsPath;
  }

  /** Where this folder's store lives: the extension's global storage, keyed by the folder. */
  get storeDir(): string {
    return path.join(this.storage.fsPath, 'stores', shortHash(this.root));
  }

  async start(): Promise<void> {
    const config = readConfig();
    const summarizer = config.llm.summarizeLongFunctions ? await llmWire(this.secrets) : null;
    const opened = await this.client.open({
      root: this.root,
      storeDir: this.storeDir,
      storageRoot: this.storage.fsPath,
      model: modelRequest(config.embeddingModel),
      maxFileBytes: config.maxFileSize,
      exclude: [...filesExclude(this.folder), ...config.exclude],
      ...(summarizer && summarizer.provider !== 'none' ? { summarizer } : {}),
    });
    if (!opened.ok) return this.events.failed(opened.error.message);
    this.opened = true;
    for (const notice of opened.value.notices) void vscode.window.showInformationMessage(`Code Oracle: ${notice}`);
    this.watch();
    await this.indexAll(true);
  }

  /** A full pass: new, changed and deleted files. The first one shows a progress notification. */
  indexAll(withNotification: boolean): Promise<Result<IndexSummary> | undefined> {
    return this.enqueue(async () => {
      if (!withNotification) return this.finish(await this.client.index(this.root, (progress) => this.events.progress(progress)));
      return vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Code Oracle: indexing ${this.folder.name}`, cancellable: true },
        async (report, token) => {
          const controller = new AbortController();
          token.onCancellationRequested(() => controller.abort());
          let last = 0;
          const result = await this.client.index(
            this.root,
            (progress) => {
              this.events.progress(progress);
              const percent = stagePercent(progress);
              if (percent > last) report.report({ increment: percent - last, message: progressMessage(progress) });
              last = Math.max(last, percent);
            },
            controller.signal,
          );
          return this.finish(result);
        },
      );
    });
  }

  /** Files that changed: saved, created, deleted or renamed, in the editor or outside it. */
  schedule(uris: readonly vscode.Uri[]): void {
    for (const uri of uris) if (this.contains(uri)) this.pending.add(uri.fsPath);
    if (!this.pending.size || !this.opened) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), DEBOUNCE_MS);
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.disposables.forEach((disposable) => disposable.dispose());
    if (this.opened) void this.client.close(this.root);
  }

  private flush(): Promise<unknown> {
    const paths = [...this.pending];
    this.pending.clear();
    return this.enqueue(async () => this.finish(await this.client.update(this.root, paths, (progress) => this.events.progress(progress))));
  }

  private watch(): void {
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(this.folder, '**/*'));
    this.disposables.push(
      watcher,
      watcher.onDidChange((uri) => this.schedule([uri])),
      watcher.onDidCreate((uri) => this.schedule([uri])),
      watcher.onDidDelete((uri) => this.schedule([uri])),
      vscode.workspace.onDidSaveTextDocument((document) => this.schedule([document.uri])),
      vscode.workspace.onDidCreateFiles((event) => this.schedule(event.files)),
      vscode.workspace.onDidDeleteFiles((event) => this.schedule(event.files)),
      vscode.workspace.onDidRenameFiles((event) => this.schedule(event.files.flatMap((file) => [file.oldUri, file.newUri]))),
    );
  }

  private async finish(result: Result<IndexSummary>): Promise<Result<IndexSummary>> {
    if (!result.ok) {
      if (result.error.code !== 'cancelled') this.events.failed(result.error.message);
      return result;
    }
    const stats = await this.client.stats(this.root);
    if (stats.ok) this.events.ready(stats.value);
    return result;
  }

  /** Runs are queued: one at a time per folder, in the order they were asked for. */
  private enqueue<T>(run: () => Promise<T>): Promise<T> {
    const next = this.running.then(run, run);
    this.running = next.catch(() => undefined);
    return next;
  }

  private contains(uri: vscode.Uri): boolean {
    if (uri.scheme !== 'file') return false;
    const relative = path.relative(this.root, uri.fsPath);
    return !!relative && !relative.startsWith('..') && !path.isAbsolute(relative);
  }
}

function modelRequest(setting: string): { kind: 'none' } | { kind: 'directory'; path: string } | { kind: 'hub'; repo: string } {
  if (setting === 'none') return { kind: 'none' };
  if (!setting) return { kind: 'hub', repo: 'minishlab/potion-code-16M' };
  if (/^[\w.-]+\/[\w.-]+$/.test(setting) && !path.isAbsolute(setting)) return { kind: 'hub', repo: setting };
  return { kind: 'directory', path: setting };
}

const STAGE_SPAN: Record<IndexProgress['stage'], [number, number]> = {
  walk: [0, 5],
  parse: [5, 70],
  summarize: [70, 75],
  facts: [75, 85],
  embed: [85, 92],
  write: [92, 100],
};

/** How far a first index has come, 0–100, by stage. */
export function stagePercent(progress: IndexProgress): number {
  const [from, to] = STAGE_SPAN[progress.stage];
  return Math.round(from + (to - from) * (progress.total ? Math.min(1, progress.done / progress.total) : 0));
}

function progressMessage(progress: IndexProgress): string {
  return progress.stage === 'parse' ? `parsing ${progress.done}/${progress.total} files` : `${progress.stage}…`;
}
