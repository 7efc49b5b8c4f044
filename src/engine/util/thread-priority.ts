import { readlinkSync } from 'node:fs';
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
  try {
    setPriority(osThreadId(), BACKGROUND_NICENESS);
    return undefined;
  } catch (cause) {
    return cause instanceof Error ? cause.message : String(cause);
  }
}

/** The operating system's id of the calling thread (Linux: the name of `/proc/thread-self`). */
export function osThreadId(): number {
  return Number(path.basename(readlinkSync('/proc/thread-self')));
}
