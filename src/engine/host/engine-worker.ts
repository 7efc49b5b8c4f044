import { Engine } from '../engine';
import type { IndexProgress } from '../index/indexer';
import { getLogger, LOG_LEVELS, logHub, type LogLevel } from '../log/logger';
import { describeError, fail, ok, type Result } from '../util/result';
import { LatestThrottle } from '../util/throttle';
import { lowerProcessPriority } from '../util/thread-priority';
import type { AssistantTurn, LlmClient } from '../llm/client';
import { createLlmClient } from '../llm/factory';
import { LOG_LEVEL_ARG } from './engine-process';
import {
  LlmReply,
  METHODS,
  ModelReply,
  RequestEnvelope,
  type FolderOptions,
  type LlmWire,
  type Method,
  type Params,
  type Response,
  type WorkerMessage,
} from './protocol';
import { RemoteLlmClient, type RemoteCall } from './remote-llm';
import { textUpdate } from './text-stream';

/**
 * The engine's process beside the editor: one Engine per workspace folder, driven by validated
 * requests over the IPC channel the editor forked it with (engine-process.ts). Parsing, embedding
 * and writing happen here (and in its parse worker threads), so the extension host's event loop
 * stays free however large the workspace, and its memory is not the editor's.
 */
if (!process.send)
  throw new Error('engine-worker must run as a process forked with an IPC channel');

const log = getLogger('host.worker');
const engines = new Map<string, Engine>();
/** Opening and closing a folder's engine, one after another per folder. */
const lifecycles = new Map<string, Promise<unknown>>();
/** The editor redraws progress and streamed text; more often than this is work for nothing. */
const UPDATE_INTERVAL_MS = 50;
const cancellations = new Map<number, AbortController>();

logHub.addSink({
  minLevel: logLevelArgument(),
  write: (event) => post({ type: 'log', event: { ...event } }),
});

// Indexing runs in this process and on the threads it starts: below the editor's priority, so
// typing stays fluid while a large workspace is indexed.
const priorityKept = lowerProcessPriority();
if (priorityKept) log.debug('engine_worker_priority_kept', { reason: priorityKept });

// An editor that went away without stopping the engine (it crashed, or was killed) closes the
// channel: the engine has nobody left to serve. Exiting runs the exit handlers that free locks.
process.on('disconnect', () => process.exit(0));
// the editor stops the engine with SIGTERM (dispose, restart): leave the same way, as a signal's
// exit code (128 + 15) says
process.on('SIGTERM', () => process.exit(143));

/** Model calls sent to the host, waiting for its reply. */
const remoteCalls = new Map<
  number,
  {
    resolve: (result: Result<string | AssistantTurn>) => void;
    onDelta: ((delta: string) => void) | undefined;
  }
>();
let nextCallId = 1;

process.on('message', (raw: unknown) => {
  const type = (raw as { type?: unknown } | null)?.type;
  if (type === 'llmDelta' || type === 'llmReply') {
    const reply = LlmReply.safeParse(raw);
    if (reply.success) return receiveReply(reply.data);
    return log.warn('model_reply_rejected', {
      reason: reply.error.issues[0]?.message ?? 'malformed',
    });
  }
  const parsed = RequestEnvelope.safeParse(raw);
  if (!parsed.success) {
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id === 'number')
      respond(id, fail('invalid_input', `Malformed request: ${parsed.error.issues[0]?.message}`));
    return;
  }
  const envelope = parsed.data;
  if (envelope.type === 'cancel') return void cancellations.get(envelope.target)?.abort();
  void handle(envelope.id, envelope.method, envelope.params);
});
post({ type: 'ready' });

async function handle(id: number, method: Method, raw: unknown): Promise<void> {
  const params = METHODS[method].request.safeParse(raw);
  if (!params.success) {
    const issue = params.error.issues[0];
    return respond(
      id,
      fail(
        'invalid_input',
        `Malformed ${method} request (${issue?.path.join('.') || 'params'}: ${issue?.message ?? 'malformed'}).`,
      ),
    );
  }
  try {
    // the table pairs each method with its own handler; TypeScript cannot follow the pairing here
    const handler = HANDLERS[method] as (params: unknown, id: number) => Promise<Result<unknown>>;
    respond(id, await handler(params.data, id));
  } catch (cause) {
    respond(id, fail('io_error', describeError(cause)));
  }
}

/** The engine's values are read-only; that is all that separates them from the wire types. */
type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

type Handlers = {
  [M in Method]: (params: Params<M>, id: number) => Promise<Result<DeepReadonly<Response<M>>>>;
};

/** What the worker does for each method; each handler returns its method's response type. */
const HANDLERS: Handlers = {
  open: ({ folder }) => open(folder),
  close: ({ root }) => close(root),
  index: ({ root }, id) =>
    withEngine(root, (engine) => withProgress(id, engine, (signal) => engine.index(signal))),
  update: ({ root, paths }, id) =>
    withEngine(root, (engine) =>
      withProgress(id, engine, (signal) => engine.updateFiles(paths, signal)),
    ),
  stats: ({ root }) => withEngine(root, async (engine) => ok(engine.stats())),
  search: ({ root, query, mode }) =>
    withEngine(root, async (engine) => {
      const result = await engine.search({ query, mode });
      return result.ok
        ? ok({ spans: result.value.spans, metadata: result.value.metadata })
        : result;
    }),
  ask: (request, id) => withEngine(request.root, (engine) => ask(engine, request, id)),
  resolve: ({ root, name, action }) =>
    withEngine(root, async (engine) => engine.resolveSymbol(name, action)),
  trace: ({ root, name, depth }) =>
    withEngine(root, async (engine) => engine.traceCallers(name, depth)),
  tool: ({ root, name, input }) => withEngine(root, (engine) => engine.runTool(name, input)),
  outline: ({ root, path }) => withEngine(root, async (engine) => ok(engine.outline(path))),
  fix: ({ root, issue, diagnostic, llm, overlay }, id) =>
    withEngine(root, (engine) =>
      withCancellation(id, (signal) =>
        engine.proposeFix({
          issue,
          llm: llmFor(llm),
          overlay,
          signal,
          ...(diagnostic ? { diagnostic } : {}),
        }),
      ),
    ),
};

/** Runs a request against a folder's engine, or says the folder is not open. */
async function withEngine<T>(
  root: string,
  run: (engine: Engine) => Promise<Result<T>>,
): Promise<Result<T>> {
  const engine = engines.get(root);
  if (!engine) return fail('not_found', `No index is open for ${root}.`);
  return run(engine);
}

/** Answers a question, streaming the text and the agent's steps as events of the request. */
async function ask(engine: Engine, request: Params<'ask'>, id: number) {
  // the engine hands over the whole text so far: only the latest is worth sending, and of it
  // only what differs from the text sent before
  let sent = '';
  const text = new LatestThrottle<string>((latest) => {
    post({ type: 'answerText', id, ...textUpdate(sent, latest) });
    sent = latest;
  }, UPDATE_INTERVAL_MS);
  try {
    return await withCancellation(id, (signal) =>
      engine.ask({
        question: request.question,
        mode: request.mode,
        llm: llmFor(request.llm),
        signal,
        onText: (latest) => text.push(latest),
        onStep: (step) => {
          text.flush();
          post({ type: 'agentStep', id, step: { ...step } });
        },
        ...(request.sessionId ? { sessionId: request.sessionId } : {}),
        ...(request.attachment ? { attachment: request.attachment } : {}),
        ...(request.webSearchUrl ? { webSearchUrl: request.webSearchUrl } : {}),
      }),
    );
  } finally {
    text.flush();
  }
}

/**
 * Opens and closes of one folder run in order: two opens in flight at once (a settings change
 * during the first index) would otherwise both see no engine to replace, and one would leak.
 */
function inLifecycle<T>(root: string, step: () => Promise<T>): Promise<T> {
  const next = (lifecycles.get(root) ?? Promise.resolve()).then(step, step);
  lifecycles.set(
    root,
    next.catch(() => undefined),
  );
  return next;
}

function open(folder: FolderOptions): Promise<Result<DeepReadonly<Response<'open'>>>> {
  return inLifecycle(folder.root, () => openNow(folder));
}

/** Closes a folder's engine, after any open of it still in flight. */
function close(root: string): Promise<Result<null>> {
  return inLifecycle(root, async () => {
    engines.get(root)?.dispose();
    engines.delete(root);
    return ok(null);
  });
}

async function openNow(folder: FolderOptions): Promise<Result<DeepReadonly<Response<'open'>>>> {
  engines.get(folder.root)?.dispose();
  engines.delete(folder.root);
  const { summarizer, ...options } = folder;
  const opened = await Engine.open({
    ...options,
    summarizer: summarizer ? llmFor(summarizer) : null,
  });
  if (!opened.ok) return opened;
  const engine = opened.value;
  engines.set(folder.root, engine);
  engine.onDidChangeIndex((change) =>
    post({ type: 'changed', root: folder.root, paths: [...change.paths] }),
  );
  return ok({ stats: engine.stats(), notices: engine.notices });
}

/** Runs an indexing request, forwarding its progress and letting a `cancel` request stop it. */
async function withProgress<T>(
  id: number,
  engine: Engine,
  run: (signal: AbortSignal) => Promise<Result<T>>,
): Promise<Result<T>> {
  const updates = new LatestThrottle<IndexProgress>(
    (progress) => post({ type: 'progress', id, progress: { ...progress } }),
    UPDATE_INTERVAL_MS,
  );
  let stage: IndexProgress['stage'] | null = null;
  const subscription = engine.onProgress((progress) => {
    // a new stage is shown at once; counts within a stage at most every interval
    updates.push(progress, progress.stage !== stage);
    stage = progress.stage;
  });
  try {
    return await withCancellation(id, run);
  } finally {
    subscription.dispose();
    updates.flush();
  }
}

/** Runs a request that a `cancel` request can stop. */
async function withCancellation<T>(
  id: number,
  run: (signal: AbortSignal) => Promise<Result<T>>,
): Promise<Result<T>> {
  const controller = new AbortController();
  cancellations.set(id, controller);
  try {
    return await run(controller.signal);
  } finally {
    cancellations.delete(id);
  }
}

/** The client for the model the editor chose: HTTP backends run here, VS Code's in the host. */
function llmFor(wire: LlmWire): LlmClient | null {
  if (wire.provider === 'vscode')
    return new RemoteLlmClient(wire.model || 'default', callHost, wire.logPrompts ?? false);
  return createLlmClient({ ...wire, provider: wire.provider });
}

function callHost(
  call: RemoteCall,
  onDelta: ((delta: string) => void) | undefined,
  signal: AbortSignal | undefined,
): Promise<Result<string | AssistantTurn>> {
  const callId = nextCallId++;
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(fail('cancelled', 'The question was cancelled.'));
    remoteCalls.set(callId, { resolve, onDelta });
    signal?.addEventListener(
      'abort',
      () => {
        if (!remoteCalls.delete(callId)) return;
        post({ type: 'llmCancel', callId });
        resolve(fail('cancelled', 'The question was cancelled.'));
      },
      { once: true },
    );
    post({ type: 'llmCall', callId, call: { ...call } });
  });
}

function receiveReply(reply: LlmReply): void {
  const pending = remoteCalls.get(reply.callId);
  if (!pending) return;
  if (reply.type === 'llmDelta') return pending.onDelta?.(reply.delta);
  remoteCalls.delete(reply.callId);
  if (!reply.result.ok)
    return pending.resolve(fail(reply.result.error.code, reply.result.error.message));
  const value = ModelReply.safeParse(reply.result.value);
  pending.resolve(
    value.success
      ? ok(value.data)
      : fail('model_unavailable', `The editor's model reply did not match the protocol.`),
  );
}

function respond(id: number, result: Result<unknown>): void {
  post({
    type: 'response',
    id,
    result: result.ok
      ? { ok: true, value: result.value }
      : { ok: false, error: { ...result.error } },
  });
}

function post(message: WorkerMessage): void {
  // once the editor has gone there is nobody to tell, and the process is about to exit
  if (process.connected) process.send!(message);
}

/** The least severe level the editor wants events of, as it passed it (`--log-level=`). */
function logLevelArgument(): LogLevel {
  const given = process.argv
    .find((arg) => arg.startsWith(LOG_LEVEL_ARG))
    ?.slice(LOG_LEVEL_ARG.length);
  return LOG_LEVELS.find((level) => level === given) ?? 'info';
}
