import type { IndexProgress, IndexSummary } from '../engine/index/indexer';
import type { EmbeddingStatus } from '../engine/embed/embedder';
import { stageHeading } from '../engine/model/progress';

/** Everything the CLI prints goes through here: results to stdout, progress and notes to stderr. */
export function out(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

export function json(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

const BAR_WIDTH = 24;

/**
 * A one-line progress bar on an interactive terminal; when stderr is piped or logged, one line
 * per stage as it starts, so a long first index shows where it is.
 */
export class ProgressBar {
  private lastDraw = 0;
  private active = false;
  private stage: IndexProgress['stage'] | null = null;

  constructor(private readonly interactive = process.stderr.isTTY === true) {}

  update(progress: IndexProgress): void {
    if (!this.interactive) {
      if (progress.stage !== this.stage) {
        const files = progress.stage === 'parse' ? ` (${progress.total} files)` : '';
        process.stderr.write(`${stageHeading(progress.stage)}${files} …\n`);
      }
      this.stage = progress.stage;
      return;
    }
    const now = Date.now();
    const finished = progress.done >= progress.total;
    if (!finished && now - this.lastDraw < 80) return;
    this.lastDraw = now;
    const ratio = progress.total ? Math.min(1, progress.done / progress.total) : 0;
    const filled = Math.round(ratio * BAR_WIDTH);
    const bar = `${'█'.repeat(filled)}${'░'.repeat(BAR_WIDTH - filled)}`;
    const counts =
      progress.stage === 'parse'
        ? ` ${progress.done}/${progress.total} files`
        : progress.total > 1
          ? ` ${progress.done}/${progress.total}`
          : '';
    const line = `${stageHeading(progress.stage).padEnd(15)} [${bar}] ${Math.round(ratio * 100)}%${counts}`;
    process.stderr.write(`\r\x1b[2K${line}`);
    this.active = true;
  }

  done(): void {
    if (this.active) process.stderr.write('\r\x1b[2K');
    this.active = false;
  }
}

export function printSummary(
  summary: IndexSummary,
  embedding: EmbeddingStatus,
  storeDir: string,
): void {
  const seconds = (summary.durationMs / 1000).toFixed(1);
  out(
    `Indexed ${summary.files} files in ${seconds} s (${summary.indexed} parsed, ${summary.unchanged} unchanged, ${summary.removed} removed${summary.failed ? `, ${summary.failed} failed` : ''})`,
  );
  out(
    `Chunks: directory ${summary.chunks.directory}, file ${summary.chunks.file}, class ${summary.chunks.class}, function ${summary.chunks.function}`,
  );
  out(
    `Facts: ${summary.facts} · parse errors: ${summary.parseErrors} · long functions flagged for summary: ${summary.flaggedForSummary}`,
  );
  const skips = Object.entries(summary.skipped).filter(([, count]) => count > 0);
  out(
    `Skipped: ${skips.length ? skips.map(([reason, count]) => `${reason} ${count}`).join(', ') : 'none'}`,
  );
  out(describeEmbedding(embedding));
  out(`Store: ${storeDir}`);
}

/** What the embeddings are and, when the model is not the one asked for, why. */
export function describeEmbedding(embedding: EmbeddingStatus): string {
  if (!embedding.available) return `Embeddings: none. ${embedding.reason}`;
  const model = `Embeddings: ${embedding.modelId} (${embedding.dimensions} dimensions)`;
  return embedding.note ? `${model}: ${embedding.note}.` : model;
}
