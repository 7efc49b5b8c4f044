import { DEFAULT_MODEL_REPO } from '../../engine/embed/embedder';
import { DEFAULT_MAX_FILE_BYTES } from '../../engine/engine';
import { ENGINE_FLAGS, logLevel, parse, resolvedEngineOptions, UsageError } from '../args';
import { describeEmbedding, json, out } from '../output';
import { withEngine } from '../session';

export const STATS_HELP = `code-oracle stats [DIR] [--store DIR] [--json]
  Shows what the index of DIR (default: the current folder) holds, without updating it: its
  files, chunks and facts, which embedding model it uses and why, and the options it was built with.`;

export async function statsCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, ENGINE_FLAGS);
  if (positionals.length > 1) throw new UsageError('stats takes at most one folder');
  const { options, build } = await resolvedEngineOptions('query', positionals[0] ?? '.', values);
  await withEngine(options, logLevel(values['log-level'], 'error'), async (engine) => {
    const stats = engine.stats();
    if (values.json) return json({ ...stats, build: engine.store.manifest.build ?? build });
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
    out(describeEmbedding(stats.embedding));
    const recorded = engine.store.manifest.build;
    if (recorded)
      out(
        `Built with: --model ${recorded.model}${recorded.model === DEFAULT_MODEL_REPO ? ' (the default)' : ''}, ${
          recorded.exclude.length
            ? recorded.exclude.map((pattern) => `--exclude ${pattern}`).join(' ')
            : 'no --exclude'
        }, --max-file-size ${recorded.maxFileBytes}${recorded.maxFileBytes === DEFAULT_MAX_FILE_BYTES ? ' (the default)' : ''}`,
      );
  });
}
