import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { findDefinitions } from '../../engine/resolve/symbols';
import { fileRole } from '../../engine/search/files';
import type { SearchResult, TracedChunk } from '../../engine/search/pipeline';
import { isStageName, STAGES, type StageName } from '../../engine/search/stages';
import { ENGINE_FLAGS, engineOptions, logLevel, parse, positiveInteger, UsageError } from '../args';
import { WindowBaseline } from '../baseline';
import { mean, scoreQuestion, type Metrics } from '../scoring';
import { corpusFolder, readCorpora, readJsonLines, type Corpus } from '../corpora';
import { note, out } from '../output';
import { indexWithProgress, withEngine } from '../session';

export const EVAL_HELP = `code-oracle eval (--questions Q.jsonl | --callers CASES.jsonl) --corpus-root DIR [--corpora corpora.json]
                  --out RESULTS.jsonl [--fast|--thinking] [--baseline] [--budget-lines N]
                  [--ablate STAGE[,STAGE]] [--trace]
  Indexes each corpus once (a store of its own) and answers every question, writing
  {"id", "results": [{"path", "startLine", "endLine"}], "files": [{"path", "ranges"}]} (spans
  best first across files, at most 50; files best first with their ranges), or every
  "who calls X?" case as {"id", "callers": [{"path", "line"}]}. Paths are relative to the corpus'
  folder to index. corpora.json is read from beside the questions unless --corpora names one.
  Questions with gold lines are scored (recall within the line budget, hit, MRR and nDCG at 10),
  and --baseline scores BM25 over 40-line windows beside them. --ablate switches stages of the
  ranking stack off: ${STAGES.map((stage) => stage.name).join(', ')}. --trace adds to each
  result where its chunks were found: "trace": {"lists": [{"source", "chunks"}], "ranked"}, each
  chunk as [path, startLine, endLine, level] (every retriever's list, then the order the spans
  were shaped from), for telling where a missed answer was lost.`;

const Question = z.looseObject({
  id: z.string(),
  corpus: z.string(),
  question: z.string(),
  category: z.string().optional(),
  gold: z.array(z.looseObject({ path: z.string(), line: z.number().int() })).optional(),
});
type Question = z.infer<typeof Question>;
const MAX_RESULTS = 50;

const CallersCase = z.looseObject({
  id: z.string(),
  corpus: z.string(),
  target: z.looseObject({
    name: z.string(),
    path: z.string().optional(),
    line: z.number().int().optional(),
  }),
  callers: z.array(z.looseObject({ path: z.string(), line: z.number().int() })).optional(),
});
type CallersCase = z.infer<typeof CallersCase>;

const EVAL_FLAGS = {
  ...ENGINE_FLAGS,
  callers: { type: 'string' },
  questions: { type: 'string' },
  'corpus-root': { type: 'string' },
  corpora: { type: 'string' },
  out: { type: 'string' },
  fast: { type: 'boolean' },
  thinking: { type: 'boolean' },
  baseline: { type: 'boolean' },
  'budget-lines': { type: 'string' },
  ablate: { type: 'string' },
  trace: { type: 'boolean' },
} as const;
/** How deep --trace follows each list: beyond every retriever's list length. */
const TRACE_DEPTH = 1000;

/** A chunk of the trace as --trace writes it. */
function where(chunk: TracedChunk): [string | null, number, number, string] {
  return [chunk.path, chunk.startLine, chunk.endLine, chunk.level];
}

/**
 * The trace's lists and ranked order, each chunk by where it is, and the role each listed file's
 * path gives it (whether or not the question asked about that role).
 */
function located({ trace, files }: SearchResult) {
  return {
    lists: trace.retrievers.map((list) => ({ source: list.source, chunks: list.top.map(where) })),
    ranked: trace.ranked.map(where),
    roles: Object.fromEntries(
      files.slice(0, MAX_RESULTS).flatMap((file) => {
        const role = fileRole(file.path);
        return role ? [[file.path, role]] : [];
      }),
    ),
  };
}

/** The stages named by --ablate, refused when one is unknown. */
function ablated(value: string | undefined): StageName[] {
  const names = (value ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !isStageName(name));
  if (unknown.length)
    throw new UsageError(
      `--ablate: unknown stage ${unknown.join(', ')} (stages: ${STAGES.map((stage) => stage.name).join(', ')})`,
    );
  return names as StageName[];
}

export async function evalCommand(args: string[]): Promise<void> {
  const { values } = parse(args, EVAL_FLAGS);
  if (values.questions && values.callers)
    throw new UsageError('give --questions or --callers, not both');
  // flags shared with the other commands that would mean nothing here: refused, not ignored
  if (values.store)
    throw new UsageError(
      'eval keeps one store per corpus (under CODE_ORACLE_HOME): --store does not apply',
    );
  if (values.json) throw new UsageError('eval writes JSON Lines to --out: --json does not apply');
  if (values.fast && values.thinking) throw new UsageError('give --fast or --thinking, not both');
  if (values.questions) return evalQuestions(values);
  if (!values.callers)
    throw new UsageError('eval needs --questions Q.jsonl or --callers CASES.jsonl');
  if (!values['corpus-root']) throw new UsageError('eval needs --corpus-root DIR');
  if (!values.out) throw new UsageError('eval needs --out RESULTS.jsonl');
  const cases = (await readJsonLines(values.callers)).map((row, index) => {
    const parsed = CallersCase.safeParse(row);
    if (!parsed.success)
      throw new UsageError(`${values.callers}:${index + 1}: ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  });
  const corpora = await readCorpora(
    values.corpora ?? path.join(path.dirname(values.callers), 'corpora.json'),
  );
  const lines: string[] = [];
  const scores: { precision: number; recall: number }[] = [];
  for (const corpus of corpora) {
    const ofCorpus = cases.filter((entry) => entry.corpus === corpus.id);
    if (!ofCorpus.length) continue;
    const answers = await answerCorpus(corpus, ofCorpus, values['corpus-root'], values);
    for (const entry of ofCorpus) {
      const callers = answers.get(entry.id) ?? [];
      lines.push(JSON.stringify({ id: entry.id, callers }));
      if (entry.callers) scores.push(score(entry.callers, callers));
    }
  }
  for (const entry of cases)
    if (!corpora.some((corpus) => corpus.id === entry.corpus))
      note(
        `warning: case ${entry.id} names corpus "${entry.corpus}", which the corpora file lacks`,
      );
  await fs.mkdir(path.dirname(path.resolve(values.out)), { recursive: true });
  await fs.writeFile(values.out, lines.length ? `${lines.join('\n')}\n` : '');
  out(`Wrote ${lines.length} results to ${values.out}`);
  if (scores.length) {
    const mean = (key: 'precision' | 'recall') =>
      scores.reduce((sum, entry) => sum + entry[key], 0) / scores.length;
    out(
      `callers: precision ${mean('precision').toFixed(3)}, recall ${mean('recall').toFixed(3)} over ${scores.length} cases`,
    );
  }
}

async function evalQuestions(
  values: ReturnType<typeof parse<typeof EVAL_FLAGS>>['values'],
): Promise<void> {
  if (!values['corpus-root']) throw new UsageError('eval needs --corpus-root DIR');
  if (!values.out) throw new UsageError('eval needs --out RESULTS.jsonl');
  const file = values.questions!;
  const ablate = ablated(values.ablate);
  const budget = values['budget-lines']
    ? positiveInteger(values['budget-lines'], '--budget-lines')
    : 600;
  const questions = (await readJsonLines(file)).map((row, index) => {
    const parsed = Question.safeParse(row);
    if (!parsed.success)
      throw new UsageError(`${file}:${index + 1}: ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  });
  const corpora = await readCorpora(
    values.corpora ?? path.join(path.dirname(file), 'corpora.json'),
  );
  const lines: string[] = [];
  const scored: { question: Question; ours: Metrics; baseline: Metrics | null }[] = [];
  for (const corpus of corpora) {
    const ofCorpus = questions.filter((question) => question.corpus === corpus.id);
    if (!ofCorpus.length) continue;
    const root = corpusFolder(values['corpus-root'], corpus);
    const baseline = values.baseline ? await WindowBaseline.build(root) : null;
    await withEngine(
      engineOptions(root, values),
      logLevel(values['log-level'], 'error'),
      async (engine) => {
        const summary = await indexWithProgress(engine);
        note(
          `${corpus.id}: ${summary.files} files indexed (${(summary.durationMs / 1000).toFixed(1)} s)`,
        );
        for (const question of ofCorpus) {
          const result = await engine.search({
            query: question.question,
            mode: values.thinking ? 'thinking' : 'fast',
            ablate,
            ...(values.trace ? { traceDepth: TRACE_DEPTH } : {}),
          });
          const spans = result.ok
            ? result.value.spans
                .slice(0, MAX_RESULTS)
                .map(({ path: spanPath, startLine, endLine }) => ({
                  path: spanPath,
                  startLine,
                  endLine,
                }))
            : [];
          const files = result.ok
            ? result.value.files.slice(0, MAX_RESULTS).map((found) => ({
                path: found.path,
                ranges: found.spans.map((span) => [span.startLine, span.endLine]),
              }))
            : [];
          if (!result.ok) note(`warning: ${question.id}: ${result.error.message}`);
          const trace = values.trace && result.ok ? { trace: located(result.value) } : {};
          lines.push(JSON.stringify({ id: question.id, results: spans, files, ...trace }));
          if (question.gold)
            scored.push({
              question,
              ours: scoreQuestion(question.gold, spans, budget),
              baseline: baseline
                ? scoreQuestion(question.gold, baseline.search(question.question), budget)
                : null,
            });
        }
      },
    );
  }
  await fs.mkdir(path.dirname(path.resolve(values.out)), { recursive: true });
  await fs.writeFile(values.out, lines.length ? `${lines.join('\n')}\n` : '');
  out(`Wrote ${lines.length} results to ${values.out}`);
  if (scored.length) printScores(scored, budget);
}

function printScores(
  scored: { question: Question; ours: Metrics; baseline: Metrics | null }[],
  budget: number,
): void {
  const grouped = new Map<string, typeof scored>();
  for (const row of scored) {
    for (const key of [`cat:${row.question.category ?? 'none'}`, `corpus:${row.question.corpus}`])
      grouped.set(key, [...(grouped.get(key) ?? []), row]);
  }
  const groups = new Map([
    ['overall', scored],
    ...[...grouped].sort(([a], [b]) => a.localeCompare(b)),
  ]);
  const withBaseline = scored.some((row) => row.baseline);
  out(
    `\nrecall@${budget} lines, hit@10, MRR@10, nDCG@10${withBaseline ? ' (baseline: BM25 over 40-line windows)' : ''}`,
  );
  out(
    `${'group'.padEnd(22)}${'n'.padStart(4)}${'recall'.padStart(9)}${'hit'.padStart(7)}${'mrr'.padStart(7)}${'ndcg'.padStart(7)}${withBaseline ? `${'| base recall'.padStart(15)}${'mrr'.padStart(7)}` : ''}`,
  );
  for (const [name, rows] of groups) {
    const ours = mean(rows.map((row) => row.ours));
    const base = withBaseline ? mean(rows.map((row) => row.baseline!)) : null;
    out(
      `${name.padEnd(22)}${String(rows.length).padStart(4)}${ours.recall.toFixed(3).padStart(9)}${ours.hit.toFixed(2).padStart(7)}${ours.mrr.toFixed(3).padStart(7)}${ours.ndcg.toFixed(3).padStart(7)}${base ? `${base.recall.toFixed(3).padStart(15)}${base.mrr.toFixed(3).padStart(7)}` : ''}`,
    );
  }
}

async function answerCorpus(
  corpus: Corpus,
  cases: CallersCase[],
  corpusRoot: string,
  values: Parameters<typeof engineOptions>[1],
): Promise<Map<string, { path: string; line: number }[]>> {
  const root = corpusFolder(corpusRoot, corpus);
  const answers = new Map<string, { path: string; line: number }[]>();
  await withEngine(
    engineOptions(root, values),
    logLevel(values['log-level'], 'error'),
    async (engine) => {
      const summary = await indexWithProgress(engine);
      note(
        `${corpus.id}: ${summary.files} files, ${summary.facts} facts (${(summary.durationMs / 1000).toFixed(1)} s)`,
      );
      for (const entry of cases) {
        const query =
          entry.target.path && entry.target.line
            ? `${entry.target.path}:${entry.target.line}`
            : entry.target.name;
        const [definition] = findDefinitions(engine.graph, query);
        if (!definition) {
          note(`warning: ${entry.id}: no definition found for ${query}`);
          answers.set(entry.id, []);
          continue;
        }
        const sites = engine.graph
          .callers(definition.id)
          .map((call) => ({ path: engine.graph.fact(call.callerId)!.path, line: call.site.line }));
        const unique = [
          ...new Map(sites.map((site) => [`${site.path}:${site.line}`, site])).values(),
        ];
        answers.set(entry.id, unique);
      }
    },
  );
  return answers;
}

function score(
  gold: { path: string; line: number }[],
  got: { path: string; line: number }[],
): { precision: number; recall: number } {
  const expected = new Set(gold.map((site) => `${site.path}:${site.line}`));
  const answered = new Set(got.map((site) => `${site.path}:${site.line}`));
  const hits = [...answered].filter((site) => expected.has(site)).length;
  return {
    precision: answered.size ? hits / answered.size : 0,
    recall: expected.size ? hits / expected.size : 0,
  };
}
