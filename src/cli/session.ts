import { Engine, type EngineOptions } from '../engine/engine';
import type { IndexSummary } from '../engine/index/indexer';
import { logHub, type LogLevel } from '../engine/log/logger';
import { JsonLineSink } from '../engine/log/sinks';
import { EngineFailure, type Result } from '../engine/util/result';
import { note, ProgressBar } from './output';

/**
 * Opens an engine for one command: structured events go to stderr as JSON lines at the chosen
 * level, notices from the store are shown, and the engine is closed however the command ends.
 */
export async function withEngine<T>(
  options: EngineOptions,
  level: LogLevel,
  run: (engine: Engine) => Promise<T>,
): Promise<T> {
  const sink = logHub.addSink(new JsonLineSink(level));
  try {
    const engine = unwrapOrThrow(await Engine.open(options));
    try {
      for (const notice of engine.notices) note(`note: ${notice}`);
      return await run(engine);
    } finally {
      engine.dispose();
    }
  } finally {
    sink.dispose();
  }
}

/** Indexes with a progress bar on a terminal. */
export async function indexWithProgress(engine: Engine): Promise<IndexSummary> {
  const bar = new ProgressBar();
  const subscription = engine.onProgress((progress) => bar.update(progress));
  try {
    return unwrapOrThrow(await engine.index());
  } finally {
    subscription.dispose();
    bar.done();
  }
}

/** Queries index the folder first when the store is missing or the folder changed since. */
export async function ensureIndexed(engine: Engine): Promise<void> {
  if (!(await engine.isStale())) return;
  note(`Indexing ${engine.root} …`);
  const summary = await indexWithProgress(engine);
  note(
    `Indexed ${summary.files} files (${summary.indexed} parsed) in ${(summary.durationMs / 1000).toFixed(1)} s.`,
  );
  if (!engine.embedding.available) note(`note: ${engine.embedding.reason}`);
}

export function unwrapOrThrow<T>(result: Result<T>): T {
  if (!result.ok) throw new EngineFailure(result.error);
  return result.value;
}
