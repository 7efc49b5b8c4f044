import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { LogEvent, LogLevel } from '../log/logger';
import { Emitter, type Disposable, type Event } from '../util/event';
import { describeError, fail, type Result } from '../util/result';
import type { AssistantTurn } from '../llm/client';
import { forkEngine } from './engine-process';
import {
  METHODS,
  WorkerMessage,
  type FolderOptions,
  type LlmReply,
  type Method,
  type Params,
  type RequestEnvelope,
  type Response,
} from './protocol';
import type { RemoteCall } from './remote-llm';
import { applyTextUpdate, type TextUpdate } from './text-stream';

/**
 * The editor's side of the engine, which runs in a process of its own (engine-process.ts): typed
 * requests that resolve to Results, progress as callbacks, cancellation through AbortSignal. Every
 * response is checked against its method's schema before a caller sees it. It imports nothing from
 * `vscode`, so tests drive it directly.
 */
export type IndexProgress = Extract<WorkerMessage, { type: 'progress' }>['progress'];
export type AgentStep = Extract<WorkerMessage, { type: 'agentStep' }>['step'];

interface Pending {
  readonly method: Method;
  readonly resolve: (result: Result<unknown>) => void;
  readonly onProgress?: (progress: IndexProgress) => void;
  readonly onText?: (text: string) => void;
  /** The answer's text received so far (it arrives as updates: text-stream.ts). */
  text?: string;
  readonly onStep?: (step: AgentStep) => void;
}

/** A fix request as the worker receives it, less the folder the client fills in. */
export type FixOptions = Omit<Params<'fix'>, 'root'>;

/** An ask request as the worker receives it, less the folder the client fills in. */
export type AskOptions = Omit<Params<'ask'>, 'root'>;

/**
 * Runs a model call the worker cannot make itself (VS Code's language models): `onDelta` streams
 * text back, the signal fires when the worker cancels it.
 */
export type HostLlmHandler = (
  call: RemoteCall,
  onDelta: (delta: string) => void,
  signal: AbortSignal,
) => Promise<Result<string | AssistantTurn>>;

export interface WorkerClientOptions {
  readonly logLevel?: LogLevel;
  /**
   * Start a new worker when one dies, at most `times` within `windowMs` (a worker that keeps
   * dying stays stopped, and says why). Off unless set.
   */
  readonly restartAfterCrash?: { readonly times: number; readonly windowMs: number };
}

/** How long a stopped engine may take to leave before it is killed outright. */
const STOP_GRACE_MS = 2_000;

/** The worker's state, for commands that need it: running, or stopped with the reason. */
export type WorkerState = { readonly running: true } | { readonly running: false; reason: string };

export class EngineWorkerClient implements Disposable {
  private worker: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  /** Why the worker stopped, once it has. */
  private stopped: string | null = null;
  private readonly logEmitter = new Emitter<LogEvent>();
  private readonly changeEmitter = new Emitter<{ root: string; paths: string[] }>();
  private readonly exitEmitter = new Emitter<string>();
  private readonly stateEmitter = new Emitter<WorkerState>();
  readonly onLog: Event<LogEvent> = this.logEmitter.event;
  readonly onDidChangeIndex: Event<{ root: string; paths: string[] }> = this.changeEmitter.event;
  /** Fires when the worker dies; pending requests fail with the reason. */
  readonly onDidExit: Event<string> = this.exitEmitter.event;
  /**
   * Fires when the worker stops and when it runs again (restarted by hand or after a crash). A new
   * worker has no folder open: whoever opened folders opens them again.
   */
  readonly onDidChangeState: Event<WorkerState> = this.stateEmitter.event;
  private nextId = 1;
  private disposed = false;
  private llmHandler: HostLlmHandler | null = null;
  private readonly hostCalls = new Map<number, AbortController>();
  /** When the worker was restarted after crashes, for the limit in `restartAfterCrash`. */
  private crashRestarts: number[] = [];

  constructor(private readonly options: WorkerClientOptions = {}) {
    this.worker = this.startWorker();
  }

  /** The engine process's id, for the log and for tests that look at the process. */
  get processId(): number | undefined {
    return this.worker.pid;
  }

  /** Whether requests can be served now, and if not, why. */
  get state(): WorkerState {
    return this.stopped === null ? { running: true } : { running: false, reason: this.stopped };
  }

  /**
   * Replaces the worker with a new one, whether the old one is running or stopped. Requests still
   * waiting on the old worker fail; the new one starts with no folder open.
   */
  restart(): void {
    if (this.disposed) return;
    const old = this.worker;
    this.fail('the engine was restarted');
    stopProcess(old);
    this.worker = this.startWorker();
    this.stopped = null;
    this.stateEmitter.fire(this.state);
  }

  open(folder: FolderOptions): Promise<Result<Response<'open'>>> {
    return this.request('open', { folder });
  }

  index(
    root: string,
    onProgress?: (progress: IndexProgress) => void,
    signal?: AbortSignal,
  ): Promise<Result<Response<'index'>>> {
    return this.request('index', { root }, { onProgress }, signal);
  }

  update(
    root: string,
    paths: string[],
    onProgress?: (progress: IndexProgress) => void,
  ): Promise<Result<Response<'update'>>> {
    return this.request('update', { root, paths }, { onProgress });
  }

  stats(root: string): Promise<Result<Response<'stats'>>> {
    return this.request('stats', { root });
  }

  search(
    root: string,
    query: string,
    mode: Params<'search'>['mode'] = 'fast',
  ): Promise<Result<Response<'search'>>> {
    return this.request('search', { root, query, mode });
  }

  /** Answers a question; the answer's text streams to `onText`, agent steps to `onStep`. */
  ask(
    root: string,
    options: AskOptions,
    callbacks: { onText?: (text: string) => void; onStep?: (step: AgentStep) => void } = {},
    signal?: AbortSignal,
  ): Promise<Result<Response<'ask'>>> {
    return this.request('ask', { root, ...options }, callbacks, signal);
  }

  /** A checked patch for an issue or a diagnostic; nothing is written. */
  proposeFix(
    root: string,
    options: FixOptions,
    signal?: AbortSignal,
  ): Promise<Result<Response<'fix'>>> {
    return this.request('fix', { root, ...options }, {}, signal);
  }

  /** Who runs the model calls the worker sends to the editor. */
  setLlmHandler(handler: HostLlmHandler | null): void {
    this.llmHandler = handler;
  }

  resolve(
    root: string,
    name: string,
    action: Params<'resolve'>['action'],
  ): Promise<Result<Response<'resolve'>>> {
    return this.request('resolve', { root, name, action });
  }

  /** One of the engine's research tools, its result as text for a model. */
  tool(root: string, name: string, input: unknown): Promise<Result<string>> {
    return this.request('tool', { root, name, input });
  }

  outline(root: string, path: string): Promise<Result<Response<'outline'>>> {
    return this.request('outline', { root, path });
  }

  trace(root: string, name: string, depth: number): Promise<Result<Response<'trace'>>> {
    return this.request('trace', { root, name, depth });
  }

  close(root: string): Promise<Result<null>> {
    return this.request('close', { root });
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.fail('the engine was shut down');
    stopProcess(this.worker);
    this.logEmitter.dispose();
    this.changeEmitter.dispose();
    this.exitEmitter.dispose();
    this.stateEmitter.dispose();
  }

  private startWorker(): ChildProcess {
    const worker = forkEngine(this.options.logLevel ?? 'info');
    // a replaced process's last events concern nobody: its requests have already failed
    const current = () => worker === this.worker;
    worker.on('message', (raw: unknown) => current() && this.receive(raw));
    worker.on(
      'error',
      (cause) => current() && this.died(`the engine stopped: ${describeError(cause)}`),
    );
    worker.on('exit', (code, signal) => current() && this.died(exitReason(code, signal)));
    this.forwardOutput(worker, current);
    return worker;
  }

  /**
   * What the engine writes to its own output (a native library's warning, V8 saying it ran out
   * of memory) goes to the log, where whoever reads why it stopped finds it.
   */
  private forwardOutput(worker: ChildProcess, current: () => boolean): void {
    for (const [stream, level] of [
      [worker.stdout, 'info'],
      [worker.stderr, 'warn'],
    ] as const) {
      if (!stream) continue;
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => {
        if (current() && line.trim()) this.logEmitter.fire(engineOutput(level, line));
      });
    }
  }

  /** The worker stopped on its own: say so, and start a new one unless it keeps dying. */
  private died(reason: string): void {
    if (this.stopped !== null || this.disposed) return;
    this.fail(reason);
    this.exitEmitter.fire(reason);
    this.stateEmitter.fire(this.state);
    const limit = this.options.restartAfterCrash;
    if (!limit) return;
    const now = Date.now();
    this.crashRestarts = this.crashRestarts.filter((time) => now - time < limit.windowMs);
    if (this.crashRestarts.length >= limit.times) return;
    this.crashRestarts.push(now);
    this.restart();
  }

  private request<M extends Method>(
    method: M,
    params: Params<M>,
    streams: Pick<Pending, 'onProgress' | 'onText' | 'onStep'> = {},
    signal?: AbortSignal,
  ): Promise<Result<Response<M>>> {
    if (this.disposed) return Promise.resolve(fail('cancelled', 'The engine was shut down.'));
    // a message to a worker that has stopped would never be answered
    if (this.stopped)
      return Promise.resolve(fail('io_error', `The request failed because ${this.stopped}.`));
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.pending.set(id, {
        method,
        resolve: resolve as (result: Result<unknown>) => void,
        ...definedStreams(streams),
      });
      signal?.addEventListener('abort', () => this.send({ type: 'cancel', target: id }), {
        once: true,
      });
      this.send({ type: 'request', id, method, params });
    });
  }

  private send(message: RequestEnvelope | LlmReply): void {
    // a process that has just died cannot take it; its exit fails what was waiting on it
    if (this.worker.connected) this.worker.send(message);
  }

  private receive(raw: unknown): void {
    const parsed = WorkerMessage.safeParse(raw);
    if (!parsed.success)
      return this.logEmitter.fire(protocolError(parsed.error.issues[0]?.message ?? 'unknown'));
    const message = parsed.data;
    switch (message.type) {
      case 'response': {
        const pending = this.pending.get(message.id);
        this.pending.delete(message.id);
        if (pending) pending.resolve(checkedResult(pending.method, message.result));
        return;
      }
      case 'progress':
        this.pending.get(message.id)?.onProgress?.(message.progress);
        return;
      case 'log':
        this.logEmitter.fire(message.event as unknown as LogEvent);
        return;
      case 'changed':
        this.changeEmitter.fire({ root: message.root, paths: message.paths });
        return;
      case 'answerText':
        return this.receiveText(message.id, message);
      case 'agentStep':
        this.pending.get(message.id)?.onStep?.(message.step);
        return;
      case 'llmCall':
        void this.runHostCall(message.callId, message.call);
        return;
      case 'llmCancel':
        this.hostCalls.get(message.callId)?.abort();
        return;
      case 'ready':
        return;
    }
  }

  private receiveText(id: number, update: TextUpdate): void {
    const pending = this.pending.get(id);
    if (!pending?.onText) return;
    const text = applyTextUpdate(pending.text ?? '', update);
    if (text === null)
      return this.logEmitter.fire(protocolError(`answer text for request ${id} out of order`));
    pending.text = text;
    pending.onText(text);
  }

  private async runHostCall(callId: number, call: RemoteCall): Promise<void> {
    const controller = new AbortController();
    this.hostCalls.set(callId, controller);
    let result: Result<string | AssistantTurn>;
    try {
      result = this.llmHandler
        ? await this.llmHandler(
            call,
            (delta) => this.send({ type: 'llmDelta', callId, delta }),
            controller.signal,
          )
        : fail('model_unavailable', "VS Code's language models are not available here.");
    } catch (cause) {
      // the worker waits for a reply to every call: a handler that throws still gets one
      result = fail(
        'model_unavailable',
        `VS Code's language model failed: ${describeError(cause)}`,
      );
    } finally {
      this.hostCalls.delete(callId);
    }
    if (!this.disposed)
      this.send({
        type: 'llmReply',
        callId,
        result: result.ok
          ? { ok: true, value: result.value }
          : { ok: false, error: { ...result.error } },
      });
  }

  private fail(reason: string): void {
    this.stopped ??= reason;
    for (const pending of this.pending.values())
      pending.resolve(fail('io_error', `The request failed because ${reason}.`));
    this.pending.clear();
    // the model calls the old worker asked for have nobody left to answer
    for (const call of this.hostCalls.values()) call.abort();
  }
}

/** A response as the caller sees it: its value checked against the method's schema. */
export function checkedResult(
  method: Method,
  result: Extract<WorkerMessage, { type: 'response' }>['result'],
): Result<unknown> {
  if (!result.ok) return { ok: false, error: result.error };
  const value = METHODS[method].response.safeParse(result.value);
  if (value.success) return { ok: true, value: value.data };
  const issue = value.error.issues[0];
  return fail(
    'io_error',
    `The engine's answer to ${method} did not match the protocol (${issue?.path.join('.') || 'value'}: ${issue?.message ?? 'malformed'}).`,
  );
}

/** Only the callbacks that are set: the pending entry's optional fields stay absent otherwise. */
function definedStreams(
  streams: Pick<Pending, 'onProgress' | 'onText' | 'onStep'>,
): Pick<Pending, 'onProgress' | 'onText' | 'onStep'> {
  return Object.fromEntries(Object.entries(streams).filter(([, callback]) => callback));
}

function protocolError(reason: string): LogEvent {
  return {
    time: new Date().toISOString(),
    level: 'error',
    event: 'engine_protocol_error',
    module: 'host.client',
    reason,
  };
}

/**
 * Asks a process to leave (it frees its locks on the way out) and kills it if it has not within
 * the grace period: a process whose event loop is stuck never gets to the signal's handler.
 */
function stopProcess(worker: ChildProcess): void {
  if (worker.exitCode !== null || worker.signalCode !== null) return;
  worker.kill('SIGTERM');
  const kill = setTimeout(() => worker.kill('SIGKILL'), STOP_GRACE_MS);
  kill.unref();
  worker.once('exit', () => clearTimeout(kill));
}

function exitReason(code: number | null, signal: NodeJS.Signals | null): string {
  return `the engine exited (${signal ? `signal ${signal}` : `code ${code}`})`;
}

/** A line the engine process wrote to stdout or stderr, as a log event. */
function engineOutput(level: 'info' | 'warn', line: string): LogEvent {
  return {
    time: new Date().toISOString(),
    level,
    event: 'engine_output',
    module: 'host.client',
    stream: level === 'warn' ? 'stderr' : 'stdout',
    line,
  };
}
