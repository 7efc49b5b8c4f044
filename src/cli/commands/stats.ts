import { ENGINE_FLAGS, engineOptions, logLevel, parse, UsageError } from '../args';
import { json, out } from '../output';
import { withEngine } from '../session';

export const STATS_HELP = `code-oracle stats [DIR] [--store DIR] [--json]
  Shows what the index of DIR (default: the current folder) holds, without updating it.`;

export async function statsCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, ENGINE_FLAGS);
  if (positionals.length > 1) throw new UsageError('stats takes at most one folder');
  await withEngine(
    engineOptions(positionals[0] ?? '.', values),
    logLevel(values['log-level'], 'error'),
    async (engine) => {
      const stats = engine.stats();
      if (values.json) return json(stats);
      out(`Folder: ${stats.root}`);
      out(`Store: ${stats.storeDir} (updated ${stats.updatedAt})`);
      out(
        `Files: ${stats.files} (${
          Object.entries(stats.languages)
            .map(([language, count]) => `${language} ${count}`)
            .join(', ') || 'none'
        })`,
      );
      out(
        `Chunks: directory ${stats.chunks.directory}, file ${stats.chunks.file}, class ${stats.chunks.class}, function ${stats.chunks.function}`,
      );
      out(`Facts: ${stats.facts}`);
      const skipped = Object.entries(stats.skippedFiles);
      if (skipped.length)
        out(
          `Files without chunks: ${skipped.map(([reason, count]) => `${reason} ${count}`).join(', ')}`,
        );
      out(
        stats.embedding.available
          ? `Embeddings: ${stats.embedding.modelId} (${stats.embedding.dimensions} dimensions)`
          : `Embeddings: none. ${stats.embedding.reason}`,
      );
    },
  );
}
