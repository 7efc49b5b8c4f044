import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { performance, type EventLoopUtilization } from 'node:perf_hooks';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { StaticModel } from '../embed/static-model';
import { getLogger } from '../log/logger';
import type { Disposable } from '../util/event';
import { describeError } from '../util/result';
import { runFileTask, type FileOutcome, type FileTask } from './file-task';

/**
 * Runs file tasks on worker threads, so parsing a large workspace never blocks the thread that
 * owns the engine. The pool leaves a core to the editor (one worker fewer than cores) and each
 * worker lowers its own scheduling priority where the system allows, so typing stays fluid while
 * a first index runs. Each worker holds a few files at once, so it never waits on the engine for
 * its next file. Workers start on demand (or ahead, via `start()`), are reused across runs and
 * stop after a quiet minute, so an idle editor does not hold their memory, or as soon as an
 * indexer's run is done parsing (`release()`). With a size of zero every task runs inline.
 */
interface Pending {
  readonly task: FileTask;
  readonly resolve: (outcome: FileOutcome) => void;
  /** Was in flight on a worker that crashed with others: it runs alone, so a crash blames one file. */
  readonly suspect?: boolean;
}

interface WorkerReady {
  readonly type: 'ready';
  readonly error?: string;
  /** Why the worker's priority could not be lowered, when it could not. */
  readonly priorityError?: string;
}

const log = getLogger('index.pool');
const MAX_CONSECUTIVE_CRASHES = 3;
const DEFAULT_IDLE_TIMEOUT_MS = 60_000;
/**
 * Files posted to a worker ahead of the one it is parsing. The next file is posted from this
 * thread, so the worker runs dry whenever this thread is busy for longer than the files ahead
 * take: a batch write at 10k files holds it for up to half a second, about 90 files of the
 * worker's 5-6 ms. With 16 ahead the worker, the slowest thread of a first index, sat idle for
 * 7.2 s of a 70 s parse at 10k files, 2.8 s with 64 (CPU profiles of the bench's cold index).
 */
const FILES_PER_WORKER = 64;
const MAX_WORKERS = 4;
/**
 * The young generation of a parse worker's heap (V8 splits it into two semi-spaces and a third
 * for large objects: 32 MB each here, against Node's default of 16). Each file's tree nodes,
 * query captures and chunk texts are garbage a few milliseconds later; with the default, the
 * worker scavenged so often that collection took about a tenth of its time, and the larger
 * space cuts its CPU per file by 8-10% (1,244 files, one thread, three rounds each). The memory
 * is the worker's alone, and the worker stops after a quiet minute.
 */
const WORKER_YOUNG_GENERATION_MB = 96;
/** How long a measure of the threads' load holds before it is taken again. */
const LOAD_WINDOW_MS = 3000;

/** Workers for this machine: every core but one (kept for the editor), at least one. */
export function defaultPoolSize(cores = availableParallelism()): number {
  return Math.max(1, Math.min(MAX_WORKERS, cores - 1));
}

export class ParsePool implements Disposable {
  private readonly workers: Worker[] = [];
  private readonly queue: Pending[] = [];
  /** Tasks posted to each worker, by message id. */
  private readonly inFlight = new Map<Worker, Map<number, Pending>>();
  private nextId = 0;
  private disposed = false;
  /** Crashes since the last task a worker finished; workers that cannot even start trip this. */
  private consecutiveCrashes = 0;

  private idleTimer: NodeJS.Timeout | undefined;
  private inline = false;
  private readonly readiness = new Map<Worker, Promise<void>>();

  /**
   * `receiverHasRoom` says, as each file is posted, whether this thread (which receives the
   * outcomes) has time to spare: then the worker leaves the chunks' terms and vectors to it and
   * goes on parsing sooner; otherwise the worker finishes them itself. By default this thread
   * has room while it has been less busy than the workers (threadLoadGauge).
   */
  private readonly receiverHasRoom: () => boolean;

  constructor(
    private readonly size: number,
    private readonly embedder: StaticModel | null,
    private readonly idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS,
    receiverHasRoom?: () => boolean,
  ) {
    this.receiverHasRoom = receiverHasRoom ?? threadLoadGauge(() => this.workers);
  }

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
    void this.stopWorkers();
    for (const pending of [...this.queue, ...this.allInFlight()]) {
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

  /**
   * Stops the workers now when no task is queued or in flight; the next task starts them again.
   * An indexer's run calls it once its files are parsed: what is left of the run (the calls graph,
   * the tables' writes and indexes, the lexical snapshot) is when its memory peaks, and a worker's
   * heap, young generation and grammars held about 170 MB of it at 10k files (the RSS of that part
   * of a cold index, one run with the workers stopped and one without).
   */
  async release(): Promise<void> {
    if (this.busy()) return;
    log.debug('parse_pool_released', { workers: this.workers.length });
    await this.stopIdleWorkers();
  }

  private busy(): boolean {
    return this.queue.length > 0 || this.allInFlight().length > 0;
  }

  /** Stops the workers while none holds a task: their empty records of tasks go with them. */
  private stopIdleWorkers(): Promise<unknown> {
    clearTimeout(this.idleTimer);
    this.inFlight.clear();
    return this.stopWorkers();
  }

  private stopWorkers(): Promise<unknown> {
    const stopped = Promise.all(this.workers.map((worker) => worker.terminate()));
    this.readiness.clear();
    this.workers.length = 0;
    return stopped;
  }

  private allInFlight(): Pending[] {
    return [...this.inFlight.values()].flatMap((tasks) => [...tasks.values()]);
  }

  private scheduleIdleStop(): void {
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => {
      if (this.busy()) return this.scheduleIdleStop();
      log.debug('parse_pool_stopped_idle', { workers: this.workers.length });
      void this.stopIdleWorkers();
    }, this.idleTimeoutMs);
    this.idleTimer.unref();
  }

  private spawn(): void {
    const script = workerScript();
    const worker = new Worker(script.file, {
      workerData: { model: this.embedder?.toPayload() ?? null },
      execArgv: script.execArgv,
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
    });
    let markReady!: () => void;
    this.readiness.set(worker, new Promise((resolve) => (markReady = resolve)));
    worker.on(
      'message',
      (message: WorkerReady | { type: 'outcome'; id: number; outcome: FileOutcome }) => {
        if (message.type === 'ready') {
          if (message.error) log.warn('parse_worker_model_failed', { error: message.error });
          if (message.priorityError)
            log.debug('parse_worker_priority_kept', { reason: message.priorityError });
          markReady();
          return;
        }
        this.consecutiveCrashes = 0;
        const tasks = this.inFlight.get(worker);
        const pending = tasks?.get(message.id);
        tasks?.delete(message.id);
        pending?.resolve(message.outcome);
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
    this.inFlight.set(worker, new Map());
  }

  /**
   * A crashed worker fails only the file it was on; a fresh worker takes its place. When it held
   * several files, which one crashed it is unknown: they go back to the queue to run one at a time.
   */
  private replace(worker: Worker, reason: string): void {
    if (this.disposed || !this.workers.includes(worker)) return;
    const held = [...(this.inFlight.get(worker)?.values() ?? [])];
    this.inFlight.delete(worker);
    this.readiness.delete(worker);
    this.workers.splice(this.workers.indexOf(worker), 1);
    const crashed = held.length === 1 ? held[0] : undefined;
    log.warn('parse_worker_crashed', {
      file_path: crashed?.task.path ?? null,
      files_in_flight: held.length,
      error: reason,
    });
    void worker.terminate();
    if (held.length > 1)
      this.queue.unshift(...held.map((pending) => ({ ...pending, suspect: true })));
    if (++this.consecutiveCrashes >= MAX_CONSECUTIVE_CRASHES) {
      this.fallBackInline(reason, crashed);
      return;
    }
    crashed?.resolve({ kind: 'failed', path: crashed.task.path, error: reason, size: 0 });
    this.spawn();
    this.pump();
  }

  /** Workers that keep dying are given up on: the remaining files are parsed on this thread. */
  private fallBackInline(reason: string, crashed: Pending | undefined): void {
    log.warn('parse_pool_fallback_inline', { reason, queued_files: this.queue.length });
    this.inline = true;
    const remaining = [...(crashed ? [crashed] : []), ...this.allInFlight(), ...this.queue];
    void this.stopWorkers();
    this.inFlight.clear();
    this.queue.length = 0;
    for (const pending of remaining)
      void runFileTask(pending.task, this.embedder).then(pending.resolve);
  }

  /** Fills every worker up to its share of files; a suspect file goes alone to an empty worker. */
  private pump(): void {
    for (const worker of this.workers) {
      const tasks = this.inFlight.get(worker)!;
      while (this.queue.length && tasks.size < FILES_PER_WORKER) {
        if ([...tasks.values()].some((pending) => pending.suspect)) break;
        if (this.queue[0]!.suspect && tasks.size) break;
        const pending = this.queue.shift()!;
        const id = this.nextId++;
        tasks.set(id, pending);
        worker.postMessage({ id, task: pending.task, finish: !this.receiverHasRoom() });
      }
    }
  }
}

/** A thread whose event loop's use can be read: this one's `performance`, or a `Worker`'s. */
export interface MeasuredThread {
  readonly performance: { eventLoopUtilization(): EventLoopUtilization };
}

/**
 * Whether the calling thread has had more time to spare lately than the `workers` it hands
 * files to: over the last `windowMs`, its event loop was busy a smaller share of the time than
 * theirs on average. Whichever side is less busy then counts the chunks' terms and embeds them,
 * so the work goes where a core idles. A fixed bar (this thread busier than 90 %) read the
 * bursts of the engine's batch writes as a thread without room: on two cores the one worker,
 * the cold index's slowest thread (busy throughout, against 55 % for this one in a CPU profile),
 * finished 2-10 % of the files itself. Cold indexes of 10k files, alternating: 69.7-85.5 s
 * (seven runs) with the bar, 63.5-80.1 s (four) with this thread finishing every file, 64.9-76.4 s
 * (three) with this gauge; the machine's noise is as large, the engine thread's CPU fell by a
 * tenth. With many workers this thread is the busy one, and they finish their files themselves.
 * The window spans several batch writes (each keeps the thread busy for a second or so). With
 * no worker to compare with, this thread has room.
 */
export function threadLoadGauge(
  workers: () => Iterable<MeasuredThread>,
  windowMs = LOAD_WINDOW_MS,
): () => boolean {
  const own: MeasuredThread = { performance };
  let readings = new Map<MeasuredThread, EventLoopUtilization>([
    [own, performance.eventLoopUtilization()],
  ]);
  let measuredAt = performance.now();
  let room = true;
  return () => {
    const now = performance.now();
    if (now - measuredAt < windowMs) return room;
    const next = new Map<MeasuredThread, EventLoopUtilization>();
    // a thread first seen is measured over its life so far
    const busy = (thread: MeasuredThread): number => {
      const current = thread.performance.eventLoopUtilization();
      next.set(thread, current);
      const before = readings.get(thread);
      return before
        ? performance.eventLoopUtilization(current, before).utilization
        : current.utilization;
    };
    const mine = busy(own);
    const theirs = [...workers()].map(busy);
    room = !theirs.length || mine < theirs.reduce((sum, share) => sum + share, 0) / theirs.length;
    // stopped workers are forgotten with their readings
    readings = next;
    measuredAt = now;
    return room;
  };
}

/**
 * The bundle ships parse-worker.js beside itself; from sources the worker runs through tsx. A
 * process started with --cpu-prof (the bench's `--cpu-prof`) has its workers profiled too: a
 * worker given its own flags inherits none of the process's.
 */
function workerScript(): { file: string; execArgv: string[] } {
  const profiling = process.execArgv.filter((flag) => flag.startsWith('--cpu-prof'));
  const bundled = path.join(__dirname, 'parse-worker.js');
  if (existsSync(bundled)) return { file: bundled, execArgv: profiling };
  return {
    file: path.join(__dirname, 'parse-worker.ts'),
    execArgv: ['--require', 'tsx/cjs', ...profiling],
  };
}
