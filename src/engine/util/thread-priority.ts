import { readdirSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import * as path from 'node:path';

/** Niceness of the engine's threads: below the editor's, which the scheduler then favours. */
const BACKGROUND_NICENESS = 10;

/**
 * Lowers the calling thread's priority (not the process's: the editor shares it). Linux schedules
 * threads as tasks with their own nice value, addressed by thread id, which `/proc/thread-self`
 * names; threads started from here afterwards inherit it. Elsewhere the thread keeps its priority
 * and the reason is returned for the caller to log.
 */
export function lowerThreadPriority(): string | undefined {
  if (process.platform !== 'linux') return `thread priorities are not set on ${process.platform}`;
  return reasonIfThrows(() => setPriority(osThreadId(), BACKGROUND_NICENESS));
}

/**
 * Lowers the priority of the whole calling process: a process of its own (the engine's) that the
 * editor must be favoured over. On Linux each thread has its own nice value and new threads take
 * their creator's, so the calling thread is lowered first and then every thread already running
 * (Node's and V8's own); elsewhere the process's priority covers its threads. Returns why the
 * priority was kept, if it was.
 */
export function lowerProcessPriority(): string | undefined {
  return reasonIfThrows(() => {
    if (process.platform !== 'linux') return setPriority(process.pid, BACKGROUND_NICENESS);
    setPriority(osThreadId(), BACKGROUND_NICENESS);
    for (const task of readdirSync('/proc/self/task')) lowerTask(Number(task));
  });
}

/** A thread that ended since its task was listed needs nothing. */
function lowerTask(threadId: number): void {
  try {
    setPriority(threadId, BACKGROUND_NICENESS);
  } catch (cause) {
    // Node reports it as a system error whose `info` holds the errno's name
    if ((cause as { info?: { code?: string } }).info?.code !== 'ESRCH') throw cause;
  }
}

/** The operating system's id of the calling thread (Linux: the name of `/proc/thread-self`). */
export function osThreadId(): number {
  return Number(path.basename(readlinkSync('/proc/thread-self')));
}

function reasonIfThrows(step: () => void): string | undefined {
  try {
    step();
    return undefined;
  } catch (cause) {
    return cause instanceof Error ? cause.message : String(cause);
  }
}
