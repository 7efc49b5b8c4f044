import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { getLogger } from '../log/logger';
import { describeError, fail, ok, type Result } from '../util/result';
import type { Disposable } from '../util/event';
import { osThreadId } from '../util/thread-priority';

/**
 * One writer at a time per store: a lock file created exclusively, naming its owner. A lock is
 * stale, and taken over with a warning, when its owner provably no longer runs: on this host, the
 * machine rebooted since (boot id), the process is gone, or its pid now belongs to a process that
 * started at another time; on another host (a shared folder), its heartbeat stopped.
 */
interface LockOwner {
  readonly pid: number;
  readonly host: string;
  readonly startedAt: string;
  /** /proc/sys/kernel/random/boot_id where available: a reboot makes every lock stale. */
  readonly bootId?: string | null;
  /** The owner's start time in clock ticks since boot (/proc/<pid>/stat), against reused pids. */
  readonly processStart?: number | null;
  /**
   * The operating system's id of the owning thread, where /proc names it: an engine running in a
   * worker thread that crashed leaves its process (and its lock) behind.
   */
  readonly threadId?: number | null;
}

/** The holder touches the lock file this often; another host trusts it for STALE_AFTER_MS. */
const HEARTBEAT_MS = 15_000;
const STALE_AFTER_MS = 5 * 60_000;
/** A lock file with no owner yet is being written; after this long it was left half-written. */
const UNREADABLE_GRACE_MS = 10_000;

const log = getLogger('store.lock');

export function acquireWriteLock(file: string): Result<Disposable> {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      try {
        writeSync(fd, JSON.stringify(ownOwner()));
      } finally {
        closeSync(fd);
      }
      return ok(heldLock(file));
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'EEXIST') {
        return fail('io_error', `Could not create the index lock ${file}: ${describeError(cause)}`);
      }
    }
    const holder = lockHolder(file);
    if (holder) return fail('index_locked', lockedMessage(file, holder));
    const owner = readOwner(file);
    log.warn('stale_lock_removed', {
      lock_file: file,
      owner_pid: owner?.pid ?? null,
      owner_host: owner?.host ?? null,
    });
    try {
      unlinkSync(file);
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'ENOENT')
        log.warn('stale_lock_unremovable', { lock_file: file, error: describeError(cause) });
    }
  }
  return fail('index_locked', `Could not take the index lock ${file}.`);
}

/**
 * The live owner of a lock, or null when there is no lock or it is stale. Readers use this to
 * decide whether someone else is writing (and they must not repair anything).
 */
export function lockHolder(file: string): LockOwner | null {
  let modified: number;
  try {
    modified = statSync(file).mtimeMs;
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw cause;
  }
  const owner = readOwner(file);
  if (!owner) {
    // created but not yet written by its owner, or left half-written by a crash
    return Date.now() - modified < UNREADABLE_GRACE_MS
      ? { pid: 0, host: 'unknown', startedAt: new Date(modified).toISOString() }
      : null;
  }
  return isAlive(owner, modified) ? owner : null;
}

function lockedMessage(file: string, owner: LockOwner): string {
  const who = owner.pid === process.pid ? 'this process' : `process ${owner.pid} on ${owner.host}`;
  return (
    `The index is being updated by ${who} since ${owner.startedAt}; try again when it finishes. ` +
    `If no Code Oracle runs there any more, delete ${file}.`
  );
}

function ownOwner(): LockOwner {
  return {
    pid: process.pid,
    host: hostname(),
    startedAt: new Date().toISOString(),
    bootId: bootId(),
    processStart: processStart(process.pid),
    threadId: ownThreadId(),
  };
}

function ownThreadId(): number | null {
  try {
    return osThreadId();
  } catch (cause) {
    // no /proc (macOS, Windows): liveness is decided by the process alone
    log.debug('lock_thread_unknown', { error: describeError(cause) });
    return null;
  }
}

function heldLock(file: string): Disposable {
  let released = false;
  const heartbeat = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(file, now, now);
    } catch (cause) {
      log.warn('lock_heartbeat_failed', { lock_file: file, error: describeError(cause) });
    }
  }, HEARTBEAT_MS);
  heartbeat.unref();
  const release = () => {
    if (released) return;
    released = true;
    clearInterval(heartbeat);
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
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockOwner> | null;
    if (typeof owner?.pid !== 'number' || typeof owner.host !== 'string') return null;
    return { startedAt: 'an unknown time', ...owner } as LockOwner;
  } catch (cause) {
    log.debug('lock_unreadable', { lock_file: file, error: describeError(cause) });
    return null;
  }
}

function isAlive(owner: LockOwner, heartbeatMs: number): boolean {
  if (owner.host !== hostname()) return Date.now() - heartbeatMs < STALE_AFTER_MS;
  const currentBoot = bootId();
  if (owner.bootId && currentBoot && owner.bootId !== currentBoot) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (owner.processStart != null) {
    const start = processStart(owner.pid);
    if (start !== null && start !== owner.processStart) return false;
  }
  // the process runs, but the thread that took the lock (a crashed engine worker) may be gone
  return owner.threadId == null || existsSync(`/proc/${owner.pid}/task/${owner.threadId}`);
}

let cachedBootId: string | null | undefined;

function bootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
    } catch {
      // not Linux: liveness falls back to the pid and, across hosts, the heartbeat
      cachedBootId = null;
    }
  }
  return cachedBootId;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
function processStart(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[19]);
    return Number.isFinite(start) ? start : null;
  } catch {
    // no /proc (macOS, Windows) or the process just ended: the pid check decides
    return null;
  }
}
