import { parentPort, workerData } from 'node:worker_threads';
import { Engine } from '../engine';
import { logHub, type LogLevel } from '../log/logger';
import { describeError, fail, ok, type Result } from '../util/result';
import { Request, type FolderOptions, type WorkerMessage } from './protocol';

/**
 * The engine's thread in the editor: one Engine per workspace folder, driven by validated
 * requests. Parsing, embedding and writing happen here (and in its parse workers), so the
 * extension host's event loop stays free however large the workspace.
 */
const port = parentPort;
if (!port) throw new Error('engine-worker must run in a worker thread');

const engines = new Map<string, Engine>();
const cancellations = new Map<number, AbortController>();
const { logLevel } = (workerData ?? {}) as { logLevel?: LogLevel };

logHub.addSink({ minLevel: logLevel ?? 'info', write: (event) => post({ type: 'log', event: { ...event } }) });

port.on('message', (raw: unknown) => {
  const parsed = Request.safeParse(raw);
  if (!parsed.success) {
    const id = (raw as { id?: unknown } | null)?.id;
    if (typeof id === 'number') respond(id, fail('invalid_input', `Malformed request: ${parsed.error.issues[0]?.message}`));
    return;
  }
  void handle(parsed.data);
});
post({ type: 'ready' });

async function handle(request: Request): Promise<void> {
  if (request.type === 'cancel') {
    cancellations.get(request.target)?.abort();
    return respond(request.id, ok(null));
  }
  try {
    respond(request.id, await dispatch(request));
  } catch (cause) {
    respond(request.id, fail('io_error', describeError(cause)));
  }
}

async function dispatch(request: Exclude<Request, { type: 'cancel' }>): Promise<Result<unknown>> {
  if (request.type === 'open') return open(request.folder);
  const engine = engines.get(request.root);
  if (!engine) return fail('not_found', `No index is open for ${request.root}.`);
  switch (request.type) {
    case 'index':
      return withProgress(request.id, engine, (signal) => engine.index(signal));
    case 'update':
      return withProgress(request.id, engine, (signal) => engine.updateFiles(request.paths, signal));
    case 'stats':
      return ok(engine.stats());
    case 'search': {
      const result = await engine.search({ query: request.query, mode: request.mode });
      return result.ok ? ok({ spans: result.value.spans, metadata: result.value.metadata }) : result;
    }
    case 'resolve':
      return engine.resolveSymbol(request.name, request.action);
    case 'trace':
      return engine.traceCallers(request.name, request.depth);
    case 'close':
      engine.dispose();
      engines.delete(request.root);
      return ok(null);
  }
}

async function open(folder: FolderOptions): Promise<Result<unknown>> {
  engines.get(folder.root)?.dispose();
  const opened = await Engine.open(folder);
  if (!opened.ok) return opened;
  const engine = opened.value;
  engines.set(folder.root, engine);
  engine.onDidChangeIndex((change) => post({ type: 'changed', root: folder.root, paths: [...change.paths] }));
  return ok({ stats: engine.stats(), notices: engine.notices });
}

/** Runs an indexing request, forwarding its progress and letting a `cancel` request stop it. */
async function withProgress<T>(id: number, engine: Engine, run: (signal: AbortSignal) => Promise<Result<T>>): Promise<Result<T>> {
  const controller = new AbortController();
  cancellations.set(id, controller);
  const subscription = engine.onProgress((progress) => post({ type: 'progress', id, progress: { ...progress } }));
  try {
    return await run(controller.signal);
  } finally {
    subscription.dispose();
    cancellations.delete(id);
  }
}

function respond(id: number, result: Result<unknown>): void {
  post({ type: 'response', id, result: result.ok ? { ok: true, value: result.value } : { ok: false, error: { ...result.error } } });
}

function post(message: WorkerMessage): void {
  port!.postMessage(message);
}
