import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import * as path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { StaticModel, type StaticModelPayload } from '../embed/static-model';
import { runFileTask, type FileOutcome, type FileTask } from './file-task';

/** Worker-thread entry: runs file tasks posted by the pool and posts back their outcomes. */
interface WorkerInit {
  readonly model: StaticModelPayload | null;
}

interface TaskMessage {
  readonly id: number;
  readonly task: FileTask;
}

const port = parentPort;
if (!port) throw new Error('parse-worker must run in a worker thread');

/** Niceness of a parse thread: below the editor's threads, which the scheduler then favours. */
const WORKER_NICENESS = 10;

/**
 * Lowers this thread's priority (not the process's: the editor shares it). Linux schedules
 * threads as tasks with their own nice value, addressed by thread id, which `/proc/thread-self`
 * names. Elsewhere the thread keeps its priority; the reason is returned for the pool to log.
 */
function lowerOwnPriority(): string | undefined {
  if (process.platform !== 'linux') return `thread priorities are not set on ${process.platform}`;
  try {
    const threadId = Number(path.basename(readlinkSync('/proc/thread-self')));
    setPriority(threadId, WORKER_NICENESS);
    return undefined;
  } catch (cause) {
    return cause instanceof Error ? cause.message : String(cause);
  }
}

const priorityError = lowerOwnPriority();
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

async function handle({ id, task }: TaskMessage): Promise<void> {
  let outcome: FileOutcome;
  try {
    outcome = await runFileTask(task, await embedder);
  } catch (cause) {
    outcome = {
      kind: 'failed',
      path: task.path,
      error: cause instanceof Error ? cause.message : String(cause),
      size: 0,
    };
  }
  const transfer =
    outcome.kind === 'indexed' && outcome.vectors
      ? outcome.vectors.map((vector) => vector.buffer as ArrayBuffer)
      : [];
  port!.postMessage({ type: 'outcome', id, outcome }, transfer);
}
