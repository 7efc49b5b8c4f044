import { Engine, type EngineOptions } from '../engine/engine';
import type { IndexSummary } from '../engine/index/indexer';
import { logHub, type LogLevel } from '../engine/log/logger';
import { JsonLineSink } from '../engine/log/sinks';
import { EngineFailure, type Result } from '../engine/util/result';
import type { BuildRecord } from '../engine/store/manifest';
import type { LlmClient } from '../engine/llm/client';
import { createLlmClient, llmSettingsFromEnv, providerNamed } from '../engine/llm/factory';
import { UsageError } from './args';
import { note, ProgressBar } from './output';

/** The languages the parsers read, as the user knows them. */
const SUPPORTED_LANGUAGES = 'Python, JavaScript, TypeScript, Go, Java, Rust, C#, C++, Ruby, PHP';

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

/**
 * Indexes with a progress bar on a terminal (one line per stage otherwise), then records the
 * options the index was built with.
 */
export async function indexWithProgress(
  engine: Engine,
  build?: BuildRecord,
): Promise<IndexSummary> {
  const bar = new ProgressBar();
  const subscription = engine.onProgress((progress) => bar.update(progress));
  try {
    const summary = unwrapOrThrow(await engine.index());
    if (build) await engine.store.recordBuild(build);
    return summary;
  } finally {
    subscription.dispose();
    bar.done();
  }
}

/**
 * Queries index the folder first when the store is missing or the folder changed since, and
 * refuse an index with no files, which would otherwise look like a question nothing matches.
 */
export async function ensureIndexed(engine: Engine, build?: BuildRecord): Promise<void> {
  if (engine.store.writerElsewhere()) {
    note('note: another process is updating the index; answering from its last commit.');
    return;
  }
  if (await engine.isStale()) {
    note(`Indexing ${engine.root} …`);
    let summary: IndexSummary;
    try {
      summary = await indexWithProgress(engine, build);
    } catch (cause) {
      // another process took the lock between the check and the run: its commits will do
      if (!(cause instanceof EngineFailure) || cause.error.code !== 'index_locked') throw cause;
      note('note: another process is updating the index; answering from its last commit.');
      return;
    }
    note(
      `Indexed ${summary.files} files (${summary.indexed} parsed) in ${(summary.durationMs / 1000).toFixed(1)} s.`,
    );
    if (!engine.embedding.available) note(`note: ${engine.embedding.reason}`);
  } else if (build && !engine.store.manifest.build) await engine.store.recordBuild(build);
  if (engine.stats().files === 0)
    throw new EmptyIndex(emptyIndexMessage(engine.root, build?.exclude ?? []));
}

export class EmptyIndex extends Error {}

export function emptyIndexMessage(root: string, exclude: readonly string[]): string {
  const filters = [...(exclude.length ? ['--exclude'] : []), '--max-file-size', '.gitignore'].join(
    ', ',
  );
  return `the index of ${root} is empty: the folder has no source files in a supported language (${SUPPORTED_LANGUAGES}), or ${filters} left them all out`;
}

/** The model flags a command takes; the environment fills in what they leave out. */
export interface ModelFlags {
  readonly provider?: string | undefined;
  readonly 'llm-model'?: string | undefined;
  readonly 'base-url'?: string | undefined;
}

/** The language model the flags and the environment name, or null when none is configured. */
export function llmFromFlags(values: ModelFlags): LlmClient | null {
  const provider = values.provider === undefined ? undefined : providerNamed(values.provider);
  if (values.provider !== undefined && !provider)
    throw new UsageError(
      `--provider must be anthropic, ollama, openai or none, got "${values.provider}"`,
    );
  const settings = unwrapOrThrow(
    llmSettingsFromEnv(process.env, {
      ...(provider ? { provider } : {}),
      ...(values['llm-model'] ? { model: values['llm-model'] } : {}),
      ...(values['base-url'] ? { baseUrl: values['base-url'] } : {}),
    }),
  );
  return createLlmClient(settings);
}

export function unwrapOrThrow<T>(result: Result<T>): T {
  if (!result.ok) throw new EngineFailure(result.error);
  return result.value;
}
