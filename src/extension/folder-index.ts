import * as path from 'node:path';
import * as vscode from 'vscode';
import type { IndexStats } from '../engine/engine';
import { DEFAULT_MODEL_REPO, parseModelSetting } from '../engine/embed/embedder';
import type { EngineWorkerClient } from '../engine/host/client';
import type { IndexProgress, IndexSummary } from '../engine/index/indexer';
import { INDEX_STAGE_LABELS } from '../engine/model/progress';
import type { LlmWire } from '../engine/host/protocol';
import { shortHash } from '../engine/util/hash';
import { isInside } from '../engine/util/paths';
import { describeError, type Result } from '../engine/util/result';
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
  /** The index was built, or changed: its new totals. */
  ready(stats: IndexStats): void;
  /** A run changed nothing (a save of an ignored file, a touched file): the last totals stand. */
  unchanged(): void;
  failed(message: string): void;
}

export class FolderIndex implements vscode.Disposable {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private readonly disposables: vscode.Disposable[] = [];
  private opened = false;
  /** Set by dispose(): a start still awaiting the worker stops there and reports nothing. */
  private disposed = false;

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
    const summarizer = config.llm.summarizeLongFunctions ? await this.summarizerModel() : null;
    if (this.disposed) return;
    const opened = await this.client.open({
      root: this.root,
      storeDir: this.storeDir,
      storageRoot: this.storage.fsPath,
      model: config.embeddingModel
        ? parseModelSetting(config.embeddingModel, this.root)
        : { kind: 'hub', repo: DEFAULT_MODEL_REPO },
      maxFileBytes: config.maxFileSize,
      exclude: [...filesExclude(this.folder), ...config.exclude],
      ...(summarizer && summarizer.provider !== 'none' ? { summarizer } : {}),
    });
    if (this.disposed) return;
    if (!opened.ok) return this.events.failed(opened.error.message);
    this.opened = true;
    for (const notice of opened.value.notices)
      void vscode.window.showInformationMessage(`Code Oracle: ${notice}`);
    this.watch();
    await this.indexAll(true);
  }

  /** A full pass: new, changed and deleted files. The first one shows a progress notification. */
  indexAll(withNotification: boolean): Promise<Result<IndexSummary> | undefined> {
    return this.enqueue(async () => {
      if (!withNotification)
        return this.finish(
          await this.client.index(this.root, (progress) => this.events.progress(progress)),
          true,
        );
      return vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: `Code Oracle: indexing ${this.folder.name}`,
          cancellable: true,
        },
        async (report, token) => {
          const controller = new AbortController();
          token.onCancellationRequested(() => controller.abort());
          let last = 0;
          const result = await this.client.index(
            this.root,
            (progress) => {
              this.events.progress(progress);
              const percent = stagePercent(progress);
              if (percent > last)
                report.report({ increment: percent - last, message: progressMessage(progress) });
              last = Math.max(last, percent);
            },
            controller.signal,
          );
          return this.finish(result, true);
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
    void this.close();
  }

  /**
   * Stops listening and closes the folder's engine; settles once the worker has closed it. The
   * close goes even when no open has finished: the worker runs a folder's opens and closes in
   * order, so it also closes an open still in flight, and closing a folder it never opened is harmless.
   */
  async close(): Promise<void> {
    this.disposed = true;
    this.opened = false;
    clearTimeout(this.timer);
    this.disposables.splice(0).forEach((disposable) => disposable.dispose());
    await this.client.close(this.root);
  }

  private flush(): Promise<unknown> {
    const paths = [...this.pending];
    this.pending.clear();
    return this.enqueue(async () =>
      this.finish(
        await this.client.update(this.root, paths, (progress) => this.events.progress(progress)),
        false,
      ),
    );
  }

  private watch(): void {
    const watcher = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(this.folder, '**/*'),
    );
    this.disposables.push(
      watcher,
      watcher.onDidChange((uri) => this.schedule([uri])),
      watcher.onDidCreate((uri) => this.schedule([uri])),
      watcher.onDidDelete((uri) => this.schedule([uri])),
      vscode.workspace.onDidSaveTextDocument((document) => this.schedule([document.uri])),
      vscode.workspace.onDidCreateFiles((event) => this.schedule(event.files)),
      vscode.workspace.onDidDeleteFiles((event) => this.schedule(event.files)),
      vscode.workspace.onDidRenameFiles((event) =>
        this.schedule(event.files.flatMap((file) => [file.oldUri, file.newUri])),
      ),
    );
  }

  /**
   * Reports a run. A full pass always reports the totals; an update that changed nothing (most
   * watcher events: build output, ignored files) does not ask the worker for them, and so does
   * not refresh lenses, the callers tree or the chat.
   */
  private async finish(
    result: Result<IndexSummary>,
    fullPass: boolean,
  ): Promise<Result<IndexSummary>> {
    if (this.disposed) return result;
    if (!result.ok) {
      if (result.error.code !== 'cancelled') this.events.failed(result.error.message);
      return result;
    }
    if (!fullPass && result.value.indexed + result.value.removed === 0) {
      this.events.unchanged();
      return result;
    }
    const stats = await this.client.stats(this.root);
    if (stats.ok && !this.disposed) this.events.ready(stats.value);
    return result;
  }

  /** The model that summarises long functions; a key that cannot be read means none, with a warning. */
  private async summarizerModel(): Promise<LlmWire | null> {
    try {
      return await llmWire(this.secrets);
    } catch (cause) {
      this.events.failed(
        `Code Oracle could not read the model's key, so long functions are not summarised: ${describeError(cause)}`,
      );
      return null;
    }
  }

  /** Runs are queued: one at a time per folder, in the order they were asked for. */
  private enqueue<T>(run: () => Promise<T>): Promise<T> {
    const next = this.running.then(run, run);
    this.running = next.catch(() => undefined);
    return next;
  }

  private contains(uri: vscode.Uri): boolean {
    return uri.scheme === 'file' && uri.fsPath !== this.root && isInside(this.root, uri.fsPath);
  }
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
  return Math.round(
    from + (to - from) * (progress.total ? Math.min(1, progress.done / progress.total) : 0),
  );
}

function progressMessage(progress: IndexProgress): string {
  const label = INDEX_STAGE_LABELS[progress.stage];
  return progress.stage === 'parse'
    ? `${label} ${progress.done}/${progress.total} files`
    : `${label}…`;
}
