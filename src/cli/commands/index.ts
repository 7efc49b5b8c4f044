import { ENGINE_FLAGS, engineOptions, logLevel, parse, UsageError } from '../args';
import { json, note, printSummary } from '../output';
import { indexWithProgress, withEngine } from '../session';

export const INDEX_HELP = `code-oracle index DIR [--store DIR] [--model DIR|none|owner/repo] [--max-file-size BYTES]
                   [--exclude GLOB]... [--no-git] [--workers N] [--json] [--log-level LEVEL]
  Builds or updates the index of DIR: only files that changed since the last run are parsed.`;

export async function indexCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, ENGINE_FLAGS);
  if (positionals.length !== 1) throw new UsageError('index needs exactly one folder');
  await withEngine(
    engineOptions(positionals[0]!, values),
    logLevel(values['log-level'], 'error'),
    async (engine) => {
      const summary = await indexWithProgress(engine);
      if (values.json) json({ ...summary, embedding: engine.embedding, store: engine.storeDir });
      else printSummary(summary, engine.embedding, engine.storeDir);
      if (!engine.embedding.available && values.json) note(`note: ${engine.embedding.reason}`);
    },
  );
}
