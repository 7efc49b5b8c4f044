import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

/** A trace id is bound per pipeline run (index, search, ask) and stamped on every event it emits. */
const traceStorage = new AsyncLocalStorage<string>();

export function newTraceId(): string {
  return randomBytes(6).toString('hex');
}

export function currentTraceId(): string | undefined {
  return traceStorage.getStore();
}

/** Runs `fn` with a trace id bound; an already bound id is kept so nested pipelines share one trace. */
export function withTrace<T>(fn: () => T, traceId?: string): T {
  const existing = traceStorage.getStore();
  if (existing && !traceId) return fn();
  return traceStorage.run(traceId ?? newTraceId(), fn);
}
