/**
 * A full garbage collection on demand. V8 collects when allocation asks it to, so an engine that
 * has just read a store and is about to wait for its first question keeps the garbage of those
 * reads (at 10k files about 180 MB of a 470 MB heap) until allocation resumes. Collecting then
 * lets V8 hand the emptied pages back. The collector is a function only in a process started with
 * `--expose-gc`, as the engine's process is (host/engine-process.ts); elsewhere (tests, the CLI)
 * nothing is collected.
 */
export type Collector = () => void;

export interface Collection {
  readonly durationMs: number;
  readonly heapBeforeBytes: number;
  readonly heapAfterBytes: number;
}

/** The collector `--expose-gc` puts on the global object, when it is there. */
export function exposedCollector(): Collector | null {
  const candidate = (globalThis as { gc?: unknown }).gc;
  return typeof candidate === 'function' ? (candidate as Collector) : null;
}

/** Collects with `collector`, timing it and weighing the heap before and after; null without one. */
export function collectGarbage(
  collector: Collector | null = exposedCollector(),
): Collection | null {
  if (!collector) return null;
  const heapBeforeBytes = process.memoryUsage().heapUsed;
  const started = performance.now();
  collector();
  return {
    durationMs: performance.now() - started,
    heapBeforeBytes,
    heapAfterBytes: process.memoryUsage().heapUsed,
  };
}
