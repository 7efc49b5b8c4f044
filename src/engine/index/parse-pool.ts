import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { StaticModel } from '../embed/static-model';
import { getLogger } from '../log/logger';
import type { Disposable } from '../util/event';
import { describeError } from '../util/result';
import { runFileTask, type FileOutcome, type FileTask } from './file-task';

/**
 * Runs file tasks on worker threads, so parsing a large workspace uses every core and never blocks
 * the thread that owns the engine. Workers start on demand (or ahead, via `start()`), are reused
 * across runs and stop after a quiet minute, so an idle editor does not hold their memory.
 * With a size of zero every task runs inline.
 */
interface Pending {
  readonly task: FileTask;
  readonly resolve: (outcome: FileOutcome) => void;
}

const log = getLogger('index.pool');
const MAX_CONSECUTIVE_CRASHES = 3;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;

export class ParsePool implements Disposable {
  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: Pending[] = [];
  private readonly inFlight = new Map<Worker, Pending>();
  private nextId = 0;
  private disposed = false;
  /** Crashes since the last task a worker finished; workers that cannot even start trip this. */
  private consecutiveCrashes = 0;

  private idleTimer: NodeJS.Timeout | undefined;
  private inline = false;
  private readonly readiness = new Map<Worker, Promise<void>>();

  constructor(
    private readonly size: number,
    private readonly embedder: StaticModel | null,
    private readonly idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS,
  ) {}

  /** Starts the workers now, so the first run does not wait for them. */
  start(): void {
    if (this.disposed || this.inline) return;
    while (this.workers.length < this.size) this.spawn();
    this.scheduleIdleStop();
  }

  /** Resolves when every worker has loaded its model (or failed to): nothing is left to warm up. */
  async whenReady(): Promise<void> {
    this.start();
    await Promise.all(this.readiness.values());
  }

  /** Runs a task on a worker, or inline when asked to or when there are no workers. */
  run(task: FileTask, inline = false): Promise<FileOutcome> {
    if (this.disposed)
      return Promise.resolve({
        kind: 'failed',
        path: task.path,
        error: 'the parse pool was closed',
        size: 0,
      });
    if (inline || this.size === 0 || this.inline) return runFileTask(task, this.embedder);
    this.start();
    return new Promise((resolve) => {
      this.queue.push({ task, resolve });
      this.pump();
    });
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.idleTimer);
    this.stopWorkers();
    for (const pending of [...this.queue, ...this.inFlight.values()]) {
      pending.resolve({
        kind: 'failed',
        path: pending.task.path,
        error: 'indexing was stopped',
        size: 0,
      });
    }
    this.queue.length = 0;
    this.inFlight.clear();
  }

  private stopWorkers(): void {
    for (const worker of this.workers) void worker.terminate();
    this.readiness.clear();
    this.workers.length = 0;
    this.idle.length = 0;
  }

  private scheduleIdleStop(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.queue.length || this.inFlight.size) return this.scheduleIdleStop();
      log.debug('parse_pool_stopped_idle', { workers: this.workers.length });
      this.stopWorkers();
    }, this.idleTimeoutMs);
    this.idleTimer.unref();
  }

  private spawn(): void {
    const script = workerScript();
    const worker = new Worker(script.file, {
      workerData: { model: this.embedder?.toPayload() ?? null },
      execArgv: script.execArgv,
    });
    let markReady!: () => void;
    this.readiness.set(worker, new Promise((resolve) => (markReady = resolve)));
    worker.on(
      'message',
      (
        message:
          { type: 'ready'; error?: string } | { type: 'outcome'; id: number; outcome: FileOutcome },
      ) => {
        if (message.type === 'ready') {
          if (message.error) log.warn('parse_worker_model_failed', { error: message.error });
          markReady();
          return;
        }
        const { outcome } = message;
        this.consecutiveCrashes = 0;
        const pending = this.inFlight.get(worker);
        this.inFlight.delete(worker);
        this.idle.push(worker);
        pending?.resolve(outcome);
        this.scheduleIdleStop();
        this.pump();
      },
    );
    worker.on('error', (cause) => {
      markReady();
      this.replace(worker, describeError(cause));
    });
    worker.on('exit', (code) => {
      markReady();
      if (!this.disposed && code !== 0) this.replace(worker, `worker exited with code ${code}`);
    });
    this.workers.push(worker);
    this.idle.push(worker);
  }

  /** A crashed worker fails only the file it was on; a fresh worker takes its place. */
  private replace(worker: Worker, reason: string): void {
    if (this.disposed || !this.workers.includes(worker)) return;
    const pending = this.inFlight.get(worker);
    this.inFlight.delete(worker);
    this.readiness.delete(worker);
    this.workers.splice(this.workers.indexOf(worker), 1);
    const idleIndex = this.idle.indexOf(worker);
    if (idleIndex >= 0) this.idle.splice(idleIndex, 1);
    log.warn('parse_worker_crashed', { file_path: pending?.task.path ?? null, error: reason });
    void worker.terminate();
    if (++this.consecutiveCrashes >= MAX_CONSECUTIVE_CRASHES) {
      this.fallBackInline(reason, pending);
      return;
    }
    pending?.resolve({ kind: 'failed', path: pending.task.path, error: reason, size: 0 });
    this.spawn();
    this.pump();
  }

  /** Workers that keep dying are given up on: the remaining files are parsed on this thread. */
  private fallBackInline(reason: string, crashed: Pending | undefined): void {
    log.warn('parse_pool_fallback_inline', { reason, queued_files: this.queue.length });
    this.inline = true;
    this.stopWorkers();
    const remaining = [...(crashed ? [crashed] : []), ...this.inFlight.values(), ...this.queue];
    this.inFlight.clear();
    this.queue.length = 0;
    for (const pending of remaining)
      void runFileTask(pending.task, this.embedder).then(pending.resolve);
  }

  private pump(): void {
    while (this.idle.length && this.queue.length) {
      const worker = this.idle.pop()!;
      const pending = this.queue.shift()!;
      this.inFlight.set(worker, pending);
      worker.postMessage({ id: this.nextId++, task: pending.task });
    }
  }
}

/** The bundle ships parse-worker.js beside itself; from sources the worker runs through tsx. */
function workerScript(): { file: string; execArgv: string[] } {
  const bundled = path.join(__dirname, 'parse-worker.js');
  if (existsSync(bundled)) return { file: bundled, execArgv: [] };
  return { file: path.join(__dirname, 'parse-worker.ts'), execArgv: ['--require', 'tsx/cjs'] };
}
