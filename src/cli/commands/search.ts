import { ENGINE_FLAGS, engineOptions, logLevel, parse, positiveInteger, UsageError } from '../args';
import { json, out } from '../output';
import { ensureIndexed, unwrapOrThrow, withEngine } from '../session';

export const SEARCH_HELP = `code-oracle search DIR "question" [--limit N] [--json] [--store DIR] [--model …]
  Prints the code spans that answer the question, best first, as path:start-end with why each was chosen.
  Indexes DIR first when the index is missing or stale.`;

export async function searchCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, { ...ENGINE_FLAGS, limit: { type: 'string' } });
  if (positionals.length !== 2) throw new UsageError('search needs a folder and a question');
  const limit = values.limit ? positiveInteger(values.limit, '--limit') : 10;
  await withEngine(engineOptions(positionals[0]!, values), logLevel(values['log-level'], 'error'), async (engine) => {
    await ensureIndexed(engine);
    const spans = unwrapOrThrow(await engine.search(positionals[1]!, limit));
    if (values.json) return json(spans.map(({ chunkId: _chunkId, ...span }) => span));
    if (!spans.length) out('No matching code found.');
    spans.forEach((span, index) => out(`${String(index + 1).padStart(2)}. ${span.path}:${span.startLine}-${span.endLine}  ${span.why}`));
  });
}
