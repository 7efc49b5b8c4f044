import { ENGINE_FLAGS, logLevel, parse, resolvedEngineOptions, UsageError } from '../args';
import { json, note, printSummary } from '../output';
import { emptyIndexMessage, indexWithProgress, withEngine } from '../session';

export const INDEX_HELP = `code-oracle index DIR [--store DIR] [--model DIR|none|owner/repo] [--max-file-size BYTES]
                   [--exclude GLOB]... [--no-git] [--workers N] [--json] [--log-level LEVEL]
  Builds or updates the index of DIR: only files that changed since the last run are parsed.
  The index remembers --model, --exclude and --max-file-size: later commands use them, and
  giving different ones here rebuilds the index with them.`;

export async function indexCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, ENGINE_FLAGS);
  if (positionals.length !== 1) throw new UsageError('index needs exactly one folder');
  const { options, build } = await resolvedEngineOptions('index', positionals[0]!, values);
  await withEngine(options, logLevel(values['log-level'], 'error'), async (engine) => {
    const summary = await indexWithProgress(engine, build);
    if (values.json) json({ ...summary, embedding: engine.embedding, store: engine.storeDir });
    else printSummary(summary, engine.embedding, engine.storeDir);
    if (!engine.embedding.available && values.json) note(`note: ${engine.embedding.reason}`);
    if (summary.files === 0) note(`note: ${emptyIndexMessage(engine.root, build.exclude)}.`);
  });
}
