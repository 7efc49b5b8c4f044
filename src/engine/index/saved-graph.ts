import * as path from 'node:path';
import { CodeGraph, RESOLVER_VERSION } from '../graph/code-graph';
import { readSavedCalls, writeSavedCalls } from '../graph/saved-calls';
import { elapsedMs, getLogger } from '../log/logger';
import { newTraceId, withTrace } from '../log/trace';
import type { IndexStore } from '../store/store';
import { SAVED_CALLS_FILE } from '../store/store';
import { describeError } from '../util/result';

/**
 * The graph of an index being opened, built with the calls resolved when it was last saved (see
 * saved-calls.ts), and the saving of them again once the index has changed, with the context's
 * token counts made since they were saved (NextOpeningSaver). Calls are saved
 * under a key naming the committed state of the facts they were resolved for (the store's
 * creation and commit generation), the resolver's version and the package the graph resolves
 * imports in; calls saved under another key are resolved afresh.
 */
const log = getLogger('graph.saved');

/** The key calls resolved for what `store` has committed are saved under. */
function savedCallsKey(store: IndexStore, rootPackage: string): string {
  const { createdAt, generation, tableVersions } = store.manifest;
  return JSON.stringify({
    createdAt,
    generation,
    facts: tableVersions?.facts ?? null,
    resolver: RESOLVER_VERSION,
    rootPackage,
  });
}

function savedCallsFile(store: IndexStore): string {
  return path.join(store.directory, SAVED_CALLS_FILE);
}

/**
 * Builds `graph` (new, for the package `rootPackage`) from `store`'s facts: their saved calls
 * taken where they fit (true), resolved otherwise (false).
 */
export async function openGraph(
  store: IndexStore,
  graph: CodeGraph,
  rootPackage: string,
): Promise<boolean> {
  const started = performance.now();
  const read = await readSavedCalls(savedCallsFile(store), savedCallsKey(store, rootPackage));
  if (!read.ok) log.warn('resolved_calls_not_read', { error: read.error.message });
  const taken = graph.open(store.takeFacts(), read.ok ? read.value : null);
  log.info(taken ? 'resolved_calls_taken' : 'calls_resolved', {
    facts: graph.size,
    duration_ms: elapsedMs(started),
  });
  return taken;
}

/**
 * How long the engine must have idled after opening or a change before it saves the calls and the
 * token counts unasked: each save writes whole files (the calls 11 MB at 10k files, ~50 MB at
 * 100k), and a save of a source file every few seconds would otherwise write them each time.
 */
export const NEXT_OPENING_SAVE_QUIET_MS = 30_000;

/**
 * Saves what the next opening takes back instead of redoing, once the engine has idled long
 * enough after the index changed (and after an opening that resolved the calls): the graph's
 * resolved calls, when the index changed since they were saved, the context's token counts
 * made since they were saved (a counting pass saves them itself only once they are many, and a
 * day of saves makes few at a time), and the search's vectors of the chunks, when the index
 * changed since they were saved. Only the process holding the store's lock writes; one save
 * runs at a time, and a change during one brings another after it.
 */
export class NextOpeningSaver {
  /** The key of the calls on disk, as far as this process knows. */
  private savedKey: string | null = null;
  private running: Promise<void> | null = null;
  /** Whether the save running still waits for the engine to idle (it has taken nothing yet). */
  private waiting = false;
  /** The quiet the waiting save waits for: the shortest asked of it. */
  private quietMs = Infinity;
  /** The save after the one running, for a change made once it had taken the calls. */
  private next: Promise<void> | null = null;
  private nextQuietMs = Infinity;

  constructor(
    private readonly store: IndexStore,
    private readonly graph: CodeGraph,
    private readonly rootPackage: string,
    /** Resolves once no search or write has run for `needed()` ms, or the engine closed. */
    private readonly idle: (needed: () => number) => Promise<void>,
    private readonly closed: () => boolean,
    /** Saves the token counts made since they were last saved (see StoredTokenCounts). */
    private readonly saveTokenCounts: () => Promise<void>,
    /** Saves the search's vectors, unless those on disk are of the commit (see VectorScan.save). */
    private readonly saveVectors: () => Promise<void>,
  ) {}

  /**
   * Saves the calls (if the index changed since they were saved) and the token counts once no
   * search or write has run for `quietMs`; resolves once they are saved (or need not be). A save
   * still waiting takes the change too, and waits no longer than the shortest quiet asked of it.
   */
  schedule(quietMs: number): Promise<void> {
    if (this.running && this.waiting) {
      this.quietMs = Math.min(this.quietMs, quietMs);
      return this.running;
    }
    if (this.running) {
      this.nextQuietMs = Math.min(this.nextQuietMs, quietMs);
      this.next ??= this.running.then(() => {
        const quiet = this.nextQuietMs;
        this.next = null;
        this.nextQuietMs = Infinity;
        return this.schedule(quiet);
      });
      return this.next;
    }
    this.quietMs = quietMs;
    this.waiting = true;
    // a pipeline of its own, whichever run asked for it
    this.running = withTrace(() => this.saveWhenIdle(), newTraceId()).finally(
      () => (this.running = null),
    );
    return this.running;
  }

  private async saveWhenIdle(): Promise<void> {
    await this.idle(() => this.quietMs);
    this.waiting = false;
    // another process writes the store: this one never changes its files
    if (this.closed() || !this.store.texts.forWriting) return;
    await this.saveCalls();
    if (!this.closed()) await this.saveTokenCounts();
    if (!this.closed()) await this.saveSearchVectors();
  }

  private async saveSearchVectors(): Promise<void> {
    try {
      await this.saveVectors();
    } catch (cause) {
      // the next opening reads the vectors from the table: slower, not wrong
      log.warn('vectors_not_saved', { error: describeError(cause) });
    }
  }

  private async saveCalls(): Promise<void> {
    const key = savedCallsKey(this.store, this.rootPackage);
    if (key === this.savedKey) return;
    const started = performance.now();
    try {
      // taken at once, with no wait between: the idle engine's graph is what the store committed
      const calls = this.graph.resolvedCalls();
      await writeSavedCalls(savedCallsFile(this.store), key, calls);
      this.savedKey = key;
      log.info('resolved_calls_saved', {
        facts: calls.hashes.length,
        calls: calls.outgoing.length / 2,
        duration_ms: elapsedMs(started),
      });
    } catch (cause) {
      // the next opening resolves the calls afresh: slower, not wrong
      log.warn('resolved_calls_not_saved', { error: describeError(cause) });
    }
  }

  /** Records that the calls on disk are those of what the store has now committed. */
  takenFromDisk(): void {
    this.savedKey = savedCallsKey(this.store, this.rootPackage);
  }
}
