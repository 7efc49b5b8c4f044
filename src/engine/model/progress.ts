import type { ChunkLevel, IndexStage } from './index';

/**
 * What each indexing stage is doing, in the words every front end shows (the CLI's progress bar,
 * the status bar, the progress notification, the chat), so they never describe a stage differently.
 * Lower case, to read after "Code Oracle: ".
 */
export const INDEX_STAGE_LABELS: Readonly<Record<IndexStage, string>> = {
  walk: 'finding files',
  parse: 'parsing',
  summarize: 'summarising long functions',
  facts: 'linking calls',
  embed: 'embedding',
  write: 'writing the index',
};

/** A stage's label to start a line with. */
export function stageHeading(stage: IndexStage): string {
  const label = INDEX_STAGE_LABELS[stage];
  return label.charAt(0).toUpperCase() + label.slice(1);
}

export interface IndexTotals {
  readonly files: number;
  readonly chunks: number;
  readonly facts: number;
}

/** What the indexes of every open folder hold together. */
export function indexTotals(
  stats: readonly {
    readonly files: number;
    readonly chunks: Readonly<Record<ChunkLevel, number>>;
    readonly facts: number;
  }[],
): IndexTotals {
  let [files, chunks, facts] = [0, 0, 0];
  for (const entry of stats) {
    files += entry.files;
    chunks += Object.values(entry.chunks).reduce((a, b) => a + b, 0);
    facts += entry.facts;
  }
  return { files, chunks, facts };
}
