import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { findDefinitions } from '../../engine/resolve/symbols';
import { ENGINE_FLAGS, engineOptions, logLevel, parse, UsageError } from '../args';
import { corpusFolder, readCorpora, readJsonLines, type Corpus } from '../corpora';
import { note, out } from '../output';
import { indexWithProgress, withEngine } from '../session';

export const EVAL_HELP = `code-oracle eval --callers CASES.jsonl --corpus-root DIR [--corpora corpora.json] --out RESULTS.jsonl
  Indexes each corpus once (a store of its own) and answers every "who calls X?" case, writing
  {"id", "callers": [{"path", "line"}]} per case. corpora.json is read from beside the cases file
  unless --corpora names one.`;

const CallersCase = z.looseObject({
  id: z.string(),
  corpus: z.string(),
  target: z.looseObject({ name: z.string(), path: z.string().optional(), line: z.number().int().optional() }),
  callers: z.array(z.looseObject({ path: z.string(), line: z.number().int() })).optional(),
});
type CallersCase = z.infer<typeof CallersCase>;

export async function evalCommand(args: string[]): Promise<void> {
  const { values } = parse(args, {
    ...ENGINE_FLAGS,
    callers: { type: 'string' },
    'corpus-root': { type: 'string' },
    corpora: { type: 'string' },
    out: { type: 'string' },
  });
  if (!values.callers) throw new UsageError('eval needs --callers CASES.jsonl');
  if (!values['corpus-root']) throw new UsageError('eval needs --corpus-root DIR');
  if (!values.out) throw new UsageError('eval needs --out RESULTS.jsonl');
  const cases = (await readJsonLines(values.callers)).map((row, index) => {
    const parsed = CallersCase.safeParse(row);
    if (!parsed.success) throw new UsageError(`${values.callers}:${index + 1}: ${parsed.error.issues[0]?.message}`);
    return parsed.data;
  });
  const corpora = await readCorpora(values.corpora ?? path.join(path.dirname(values.callers), 'corpora.json'));
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
  for (const entry of cases) if (!corpora.some((corpus) => corpus.id === entry.corpus)) note(`warning: case ${entry.id} names corpus "${entry.corpus}", which the corpora file lacks`);
  await fs.mkdir(path.dirname(path.resolve(values.out)), { recursive: true });
  await fs.writeFile(values.out, lines.length ? `${lines.join('\n')}\n` : '');
  out(`Wrote ${lines.length} results to ${values.out}`);
  if (scores.length) {
    const mean = (key: 'precision' | 'recall') => scores.reduce((sum, entry) => sum + entry[key], 0) / scores.length;
    out(`callers: precision ${mean('precision').toFixed(3)}, recall ${mean('recall').toFixed(3)} over ${scores.length} cases`);
  }
}

async function answerCorpus(corpus: Corpus, cases: CallersCase[], corpusRoot: string, values: Parameters<typeof engineOptions>[1]): Promise<Map<string, { path: string; line: number }[]>> {
  const root = corpusFolder(corpusRoot, corpus);
  const answers = new Map<string, { path: string; line: number }[]>();
  await withEngine({ ...engineOptions(root, { ...values, store: undefined }) }, logLevel(values['log-level'], 'error'), async (engine) => {
    const summary = await indexWithProgress(engine);
    note(`${corpus.id}: ${summary.files} files, ${summary.facts} facts (${(summary.durationMs / 1000).toFixed(1)} s)`);
    for (const entry of cases) {
      const query = entry.target.path && entry.target.line ? `${entry.target.path}:${entry.target.line}` : entry.target.name;
      const [definition] = findDefinitions(engine.graph, query);
      if (!definition) {
        note(`warning: ${entry.id}: no definition found for ${query}`);
        answers.set(entry.id, []);
        continue;
      }
      const sites = engine.graph.callers(definition.id).map((call) => ({ path: engine.graph.fact(call.callerId)!.path, line: call.site.line }));
      const unique = [...new Map(sites.map((site) => [`${site.path}:${site.line}`, site])).values()];
      answers.set(entry.id, unique);
    }
  });
  return answers;
}

function score(gold: { path: string; line: number }[], got: { path: string; line: number }[]): { precision: number; recall: number } {
  const expected = new Set(gold.map((site) => `${site.path}:${site.line}`));
  const answered = new Set(got.map((site) => `${site.path}:${site.line}`));
  const hits = [...answered].filter((site) => expected.has(site)).length;
  return { precision: answered.size ? hits / answered.size : 0, recall: expected.size ? hits / expected.size : 0 };
}
