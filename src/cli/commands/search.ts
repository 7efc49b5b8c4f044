import { logHub } from '../../engine/log/logger';
import { PrettySink } from '../../engine/log/sinks';
import type { SearchResult } from '../../engine/search/pipeline';
import {
  ENGINE_FLAGS,
  logLevel,
  parse,
  questionArgument,
  resolvedEngineOptions,
  UsageError,
} from '../args';
import { describeEmbedding, json, out } from '../output';
import { ensureIndexed, unwrapOrThrow, withEngine } from '../session';

export const SEARCH_HELP = `code-oracle search DIR "question"|- [--fast|--thinking] [--json] [--debug-query] [--web URL] [--store DIR] [--model …]
  Prints the code spans that answer the question, best first, as path:start-end with why each was
  chosen. --debug-query shows the whole trace: preprocessing, technicality, every routing layer,
  each retriever's results, the correction step and the budgeted context. Indexes DIR first when
  the index is missing or stale. A question of - is read from standard input.`;

export async function searchCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {
    ...ENGINE_FLAGS,
    fast: { type: 'boolean' },
    thinking: { type: 'boolean' },
    'debug-query': { type: 'boolean' },
    web: { type: 'string' },
  });
  if (positionals.length !== 2) throw new UsageError('search needs a folder and a question');
  if (values.fast && values.thinking) throw new UsageError('choose --fast or --thinking, not both');
  const debug = values['debug-query'] === true;
  const query = await questionArgument(positionals[1]!);
  const { options, build } = await resolvedEngineOptions('query', positionals[0]!, values);
  await withEngine(
    options,
    debug ? 'error' : logLevel(values['log-level'], 'error'),
    async (engine) => {
      await ensureIndexed(engine, build);
      const trace = debug ? logHub.addSink(new PrettySink('debug')) : undefined;
      try {
        const result = unwrapOrThrow(
          await engine.search({
            query,
            mode: values.thinking ? 'thinking' : 'fast',
            webSearchUrl: values.web ?? null,
          }),
        );
        if (values.json)
          return json({
            files: result.files.map((file) => ({
              path: file.path,
              score: file.score,
              role: file.role,
              ranges: file.spans.map((span) => [span.startLine, span.endLine]),
            })),
            spans: result.spans.map(({ chunkId: _chunkId, ...span }) => span),
            metadata: result.metadata,
            embedding: engine.embedding,
          });
        if (debug) printTrace(result);
        printSpans(result);
        out(`\n${describeEmbedding(engine.embedding)}`);
      } finally {
        trace?.dispose();
      }
    },
  );
}

function printSpans(result: SearchResult): void {
  for (const notice of result.metadata.notices) out(`Note: ${notice}`);
  if (!result.spans.length) {
    out('No matching code found.');
    return;
  }
  const { metadata } = result;
  out(
    `${metadata.queryMode} question · ${metadata.crag.decision.toLowerCase()} (${metadata.crag.score.toFixed(2)})${metadata.escalated ? ' · escalated to thinking' : ''}`,
  );
  // One entry per file, its ranges best first; each range says why it was chosen.
  result.files.forEach((file, index) => {
    const ranges = file.spans.map((span) => `${span.startLine}-${span.endLine}`).join(', ');
    out(
      `${String(index + 1).padStart(2)}. ${file.path}:${ranges}${file.role ? `  (${file.role})` : ''}`,
    );
    for (const span of file.spans) out(`      ${span.startLine}-${span.endLine}  ${span.why}`);
  });
  if (metadata.flow) out(`\nFlow:\n${metadata.flow}`);
  if (metadata.findings.length)
    out(`\nFindings:\n${metadata.findings.map((finding) => `  ${finding}`).join('\n')}`);
}

function printTrace(result: SearchResult): void {
  const { trace, metadata, context } = result;
  const section = (title: string, body: unknown) =>
    out(`\n== ${title}\n${typeof body === 'string' ? body : JSON.stringify(body, null, 2)}`);
  section('preprocessor', trace.parsed);
  section('technicality', metadata.technicality);
  section('mode routing', trace.modeDecision);
  for (const retriever of trace.retrievers)
    section(
      `retriever: ${retriever.source}`,
      retriever.top
        .map((hit) => `${hit.score.toFixed(3)}  ${hit.chunkId}  ${hit.evidence}`)
        .join('\n') || '(nothing)',
    );
  section(
    'fusion (weighted RRF)',
    trace.fused
      .map((hit) => `${hit.score.toFixed(4)}  ${hit.chunkId}  ranks ${JSON.stringify(hit.ranks)}`)
      .join('\n'),
  );
  section('correction (CRAG)', metadata.crag);
  section(
    `budgeted context (${context.tokens}/${context.budget} tokens, ${context.droppedSpans} spans dropped)`,
    context.items.map((item) => item.text).join('\n\n'),
  );
  section('timings (ms)', metadata.timings);
  out('');
}
