import { parentPort, workerData } from 'node:worker_threads';
import { StaticModel, type StaticModelPayload } from '../embed/static-model';
import { lowerThreadPriority } from '../util/thread-priority';
import { runFileTask, type FileOutcome, type FileTask } from './file-task';

/** Worker-thread entry: runs file tasks posted by the pool and posts back their outcomes. */
interface WorkerInit {
  readonly model: StaticModelPayload | null;
}

interface TaskMessage {
  readonly id: number;
  readonly task: FileTask;
  /** Whether to count the chunks' terms and embed them here (see runFileTask). */
  readonly finish: boolean;
}

const port = parentPort;
if (!port) throw new Error('parse-worker must run in a worker thread');

const priorityError = lowerThreadPriority();
const init = workerData as WorkerInit;
const embedder = init.model ? StaticModel.fromPayload(init.model) : Promise.resolve(null);
// Tell the pool once the model is loaded, so callers can wait for warm workers.
void embedder.then(
  () => port.postMessage({ type: 'ready', ...(priorityError ? { priorityError } : {}) }),
  (cause: unknown) =>
    port.postMessage({
      type: 'ready',
      error: cause instanceof Error ? cause.message : String(cause),
      ...(priorityError ? { priorityError } : {}),
    }),
);

port.on('message', (message: TaskMessage) => {
  void handle(message);
});

async function handle({ id, task, finish }: TaskMessage): Promise<void> {
  let outcome: FileOutcome;
  try {
    outcome = await runFileTask(task, await embedder, finish);
  } catch (cause) {
    outcome = {
      kind: 'failed',
      path: task.path,
      error: cause instanceof Error ? cause.message : String(cause),
      size: 0,
    };
  }
  // the chunks' vectors and counts are views of a buffer or two: each is moved once
  const transfer =
    outcome.kind === 'indexed'
      ? new Set([
          ...(outcome.vectors ?? []).map((vector) => vector.buffer as ArrayBuffer),
          ...(outcome.lexical ?? []).map((terms) => terms.counts.buffer as ArrayBuffer),
        ])
      : [];
  port!.postMessage({ type: 'outcome', id, outcome }, [...transfer]);
}
