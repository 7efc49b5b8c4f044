import { openSync, closeSync, writeSync, readFileSync, unlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { getLogger } from '../log/logger';
import { describeError, fail, ok, type Result } from '../util/result';
import type { Disposable } from '../util/event';

/**
 * One writer at a time per store: a lock file created exclusively, naming its owner. A lock left
 * by a process that no longer runs on this host is taken over with a warning.
 */
interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
}

const log = getLogger('store.lock');

export function acquireWriteLock(file: string): Result<Disposable> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      const owner: LockOwner = {
        pid: process.pid,
        host: hostname(),
        startedAt: new Date().toISOString(),
      };
      writeSync(fd, JSON.stringify(owner));
      closeSync(fd);
      return ok(heldLock(file));
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') {
        return fail('io_error', `Could not create the index lock ${file}: ${describeError(cause)}`);
      }
    }
    const owner = readOwner(file);
    if (owner && isAlive(owner)) {
      const who =
        owner.pid === process.pid ? 'this process' : `process ${owner.pid} on ${owner.host}`;
      return fail(
        'index_locked',
        `The index is being updated by ${who} since ${owner.startedAt}; try again when it finishes.`,
      );
    }
    log.warn('stale_lock_removed', { lock_file: file, owner_pid: owner?.pid ?? null });
    try {
      unlinkSync(file);
    } catch (cause) {
      log.warn('stale_lock_unremovable', { lock_file: file, error: describeError(cause) });
    }
  }
  return fail('index_locked', `Could not take the index lock ${file}.`);
}

function heldLock(file: string): Disposable {
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    try {
      unlinkSync(file);
    } catch (cause) {
      log.warn('lock_release_failed', { lock_file: file, error: describeError(cause) });
    }
  };
  process.on('exit', release);
  return { dispose: release };
}

function readOwner(file: string): LockOwner | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as LockOwner;
  } catch (cause) {
    log.warn('lock_unreadable', { lock_file: file, error: describeError(cause) });
    return null;
  }
}

function isAlive(owner: LockOwner): boolean {
  if (owner.host !== hostname()) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === 'EPERM';
  }
}
