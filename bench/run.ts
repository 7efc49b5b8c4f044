/**
 * `npm run bench`: measures indexing on the rxjs corpus against the time of merely parsing the
 * same files with web-tree-sitter in the same run, and the time to re-index one saved file of
 * about 1,000 lines; search latency, warm, on the rxjs corpus; then the scale rows (bench/scale.ts)
 * on real trees of about 1k and 10k files, beside SQLite FTS5 and ripgrep. The 100k row and the
 * Go standard library alone run when named: `npm run bench -- scale-100k go-std`. Results are
 * printed and written to bench/results/latest.json; the scale rows are drawn in scale.svg.
 * `--open-search` (bench/scale-open.ts) and `--extract-cost` (bench/extract-cost.ts) measure one
 * side of a row on its own; `--native-parse` (bench/native-parse.ts) weighs the native tree-sitter
 * binding against web-tree-sitter on a row's files. With `--cpu-prof`, each scale row's cold index
 * writes CPU profiles of the engine's threads (its parse worker's included) into
 * .cache/bench-profiles.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg } from 'node:os';
import * as path from 'node:path';
import { DEFAULT_MAX_FILE_BYTES, Engine } from '../src/engine/engine';
import { countLines } from '../src/engine/index/extract';
import { loadGrammar } from '../src/engine/lang/grammars';
import { logHub } from '../src/engine/log/logger';
import { MemorySink } from '../src/engine/log/sinks';
import { languageById } from '../src/engine/lang/registry';
import { unwrap } from '../src/engine/util/result';
import { round, waitForTokenCounts } from './child';
import { benchExtractCost } from './extract-cost';
import { benchNativeParse } from './native-parse';
import { scalePlot } from './plot';
import { benchOpenSearch, OPEN_SEARCH_CHILD, serveOpenSearchChild } from './scale-open';
import { benchSaveProfile, SAVE_PROFILE_CHILD, serveSaveProfileChild } from './save-profile';
import {
  benchColdOnly,
  benchScaleRow,
  SCALE_CHILD,
  scaleRows,
  serveScaleChild,
  type ScaleRow,
} from './scale';
import { packageRoot, readCorpora, readWorkspaceFiles } from './scale-corpus';

interface SearchResultTimes {
  corpus: string;
  queries: number;
  /** The fast path without the correction step: routing, retrieval, fusion, strategy, spans, context. */
  p50Ms: number;
  p95Ms: number;
  /** The whole fast path, correction (CRAG) included. */
  fastPathP50Ms: number;
  fastPathP95Ms: number;
}

interface IndexResult {
  corpus: string;
  files: number;
  lines: number;
  parseSeconds: number;
  coldIndexSeconds: number;
  coldOverParse: number;
  savedFileMs: number;
  /** The first search after a save (the index changed under it) next to a warm search. */
  searchAfterSaveMs: number;
  warmSearchMs: number;
  startupSeconds: number;
  savedFile: string;
  chunks: number;
  workers: number;
}

const CACHE = path.resolve('.cache');
const EVAL_DIR = path.resolve(
  process.env.CODE_ORACLE_EVAL_DIR ?? path.join('..', 'shared', 'eval'),
);
const MODEL = path.resolve(
  process.env.CODE_ORACLE_BENCH_MODEL ?? path.join('models', 'potion-base-2M'),
);
const SAVES = 7;
const SAVE_QUESTION = 'where are errors reported to the caller';

async function main(): Promise<void> {
  const only = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
  const coldProfile = process.argv.includes('--cpu-prof');
  const corpora = [
    { id: 'rxjs', root: () => evalCorpus('rxjs'), onDemand: false },
    { id: 'go-std', root: () => benchCorpus('go-std'), onDemand: true },
  ].filter((corpus) => (only.length ? only.includes(corpus.id) : !corpus.onDemand));
  const rows = scaleRows().filter((row) => (only.length ? only.includes(row.id) : !row.onDemand));
  const results: IndexResult[] = [];
  let search: SearchResultTimes | null = null;
  for (const corpus of corpora) {
    const root = corpus.root();
    process.stderr.write(`bench: ${corpus.id} (${root})\n`);
    results.push(await benchIndex(corpus.id, root));
    if (corpus.id === 'rxjs') search = await benchSearch(corpus.id, root);
  }
  const scale: ScaleRow[] = [];
  for (const row of rows) {
    process.stderr.write(`bench: ${row.id} (${row.note})\n`);
    scale.push(await benchScaleRow(row, MODEL, CACHE, coldProfile));
  }
  if (search) console.table([search]);
  if (scale.length)
    console.table(
      scale.map(({ note: _note, savedFile: _file, coldStageSeconds: _stages, ...row }) => row),
    );
  if (results.length)
    console.table(results, [
      'corpus',
      'files',
      'lines',
      'parseSeconds',
      'coldIndexSeconds',
      'coldOverParse',
      'savedFileMs',
      'searchAfterSaveMs',
      'warmSearchMs',
    ]);
  const file = path.resolve('bench', 'results', 'latest.json');
  const previous = existsSync(file)
    ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>)
    : {};
  // rows not run this time keep their last figures
  const scaleRowsKept = [
    ...((previous.scale as ScaleRow[] | undefined) ?? []).filter(
      (row) => !scale.some((fresh) => fresh.row === row.row),
    ),
    ...scale,
  ].sort((a, b) => a.files - b.files);
  writeFileSync(
    file,
    `${JSON.stringify({ ...previous, ...(results.length ? { index: results } : {}), ...(search ? { search } : {}), scale: scaleRowsKept, measuredAt: new Date().toISOString(), machine: { cores: availableParallelism(), node: process.version, loadAverage: loadavg() } }, null, 2)}\n`,
  );
  if (scaleRowsKept.length)
    writeFileSync(path.resolve('bench', 'results', 'scale.svg'), scalePlot(scaleRowsKept));
  process.stderr.write(`bench: written to ${path.relative(process.cwd(), file)}\n`);
}

async function benchIndex(id: string, root: string): Promise<IndexResult> {
  const sources = await readWorkspaceFiles(root, DEFAULT_MAX_FILE_BYTES);
  const lines = sources.reduce((sum, file) => sum + countLines(file.source), 0);

  // The floor: parsing every file once, on one thread, with the grammars already loaded.
  const grammars = new Map<string, Awaited<ReturnType<typeof loadGrammar>>>();
  for (const file of sources)
    if (!grammars.has(file.language))
      grammars.set(file.language, await loadGrammar(languageById(file.language)));
  const parseStarted = performance.now();
  for (const file of sources) grammars.get(file.language)!.parser.parse(file.source)!.delete();
  const parseSeconds = (performance.now() - parseStarted) / 1000;

  const storeDir = path.join(CACHE, 'bench-stores', id);
  rmSync(storeDir, { recursive: true, force: true });
  const startupStarted = performance.now();
  const engine = unwrap(
    await Engine.open({ root, storeDir, model: { kind: 'directory', path: MODEL } }),
  );
  try {
    await engine.warmUp();
    const startupSeconds = (performance.now() - startupStarted) / 1000;
    const stages = new MemorySink('info');
    const listening = logHub.addSink(stages);
    const indexStarted = performance.now();
    const summary = unwrap(await engine.index());
    const coldIndexSeconds = (performance.now() - indexStarted) / 1000;
    listening.dispose();
    const breakdown = Object.fromEntries(
      stages
        .named('index_stage_completed')
        .map((event) => [event.stage, round((event.duration_ms as number) / 1000, 2)]),
    );
    process.stderr.write(`bench: ${id} cold index stages (s): ${JSON.stringify(breakdown)}\n`);

    const saved = sources.reduce((best, file) =>
      Math.abs(countLines(file.source) - 1000) < Math.abs(countLines(best.source) - 1000)
        ? file
        : best,
    );
    const comment = saved.language === 'python' || saved.language === 'ruby' ? '#' : '//';
    const timings: number[] = [];
    const searchesAfterSave: number[] = [];
    const warmSearches: number[] = [];
    const timeSearch = async () => {
      const started = performance.now();
      unwrap(await engine.search({ query: SAVE_QUESTION }));
      return performance.now() - started;
    };
    const saveStages = new MemorySink('info');
    const listeningSaves = logHub.addSink(saveStages);
    for (let i = 0; i < SAVES; i++) {
      appendFileSync(path.join(root, saved.path), `\n${comment} bench edit ${i}\n`);
      const started = performance.now();
      unwrap(await engine.updateFiles([saved.path]));
      timings.push(performance.now() - started);
    }
    listeningSaves.dispose();
    // apart from the saves above, so searches do not weigh on their timings
    await timeSearch();
    for (let i = 0; i < SAVES; i++) {
      appendFileSync(path.join(root, saved.path), `\n${comment} bench search edit ${i}\n`);
      unwrap(await engine.updateFiles([saved.path]));
      searchesAfterSave.push(await timeSearch());
      warmSearches.push(await timeSearch());
    }
    const saveBreakdown: Record<string, number> = {};
    for (const event of saveStages.named('index_stage_completed'))
      saveBreakdown[event.stage as string] = round(
        (saveBreakdown[event.stage as string] ?? 0) + (event.duration_ms as number) / SAVES,
        1,
      );
    process.stderr.write(
      `bench: ${id} saved-file stages (ms, mean): ${JSON.stringify(saveBreakdown)}\n`,
    );
    writeFileSync(path.join(root, saved.path), saved.source);
    unwrap(await engine.updateFiles([saved.path]));
    timings.sort((a, b) => a - b);
    return {
      corpus: id,
      files: summary.files,
      lines,
      parseSeconds: round(parseSeconds, 2),
      coldIndexSeconds: round(coldIndexSeconds, 2),
      coldOverParse: round(coldIndexSeconds / parseSeconds, 2),
      savedFileMs: round(timings[Math.floor(timings.length / 2)]!, 1),
      searchAfterSaveMs: round(percentile(searchesAfterSave, 0.5), 1),
      warmSearchMs: round(percentile(warmSearches, 0.5), 1),
      startupSeconds: round(startupSeconds, 2),
      savedFile: `${saved.path} (${countLines(saved.source)} lines)`,
      chunks: Object.values(summary.chunks).reduce((a, b) => a + b, 0),
      workers: availableParallelism(),
    };
  } finally {
    engine.dispose();
  }
}

/** Rounds of the question set timed after one warm-up round. */
const SEARCH_ROUNDS = 3;

/**
 * Warm search latency: every dev question (of all five corpora, as text) asked of this corpus'
 * index, once to warm up, then timed over several rounds. The pipeline's own stage timings split
 * the fast path without correction from the whole fast path.
 */
async function benchSearch(id: string, root: string): Promise<SearchResultTimes> {
  const questions = readFileSync(path.join(EVAL_DIR, 'dev.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => (JSON.parse(line) as { question: string }).question);
  const engine = unwrap(
    await Engine.open({
      root,
      storeDir: path.join(CACHE, 'bench-stores', id),
      model: { kind: 'directory', path: MODEL },
    }),
  );
  try {
    unwrap(await engine.index());
    await waitForTokenCounts(engine);
    for (const question of questions) unwrap(await engine.search({ query: question }));
    const core: number[] = [];
    const whole: number[] = [];
    for (let round = 0; round < SEARCH_ROUNDS; round++) {
      for (const question of questions) {
        const started = performance.now();
        const result = unwrap(await engine.search({ query: question }));
        const elapsed = performance.now() - started;
        whole.push(elapsed);
        core.push(elapsed - (result.metadata.timings.correct ?? 0));
      }
    }
    return {
      corpus: id,
      queries: whole.length,
      p50Ms: round(percentile(core, 0.5), 1),
      p95Ms: round(percentile(core, 0.95), 1),
      fastPathP50Ms: round(percentile(whole, 0.5), 1),
      fastPathP95Ms: round(percentile(whole, 0.95), 1),
    };
  } finally {
    engine.dispose();
  }
}

function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!;
}

function evalCorpus(id: string): string {
  execFileSync(process.execPath, [path.resolve('scripts', 'corpora.mjs')], { stdio: 'inherit' });
  const corpus = (
    JSON.parse(readFileSync(path.join(EVAL_DIR, 'corpora.json'), 'utf8')).corpora as {
      id: string;
      extract_dir: string;
      index_subfolder: string;
    }[]
  ).find((c) => c.id === id)!;
  return path.join(CACHE, 'corpora', corpus.extract_dir, corpus.index_subfolder);
}

/** A pinned package of bench/corpora.json, fetched once: the folder to index. */
function benchCorpus(id: string): string {
  const spec = readCorpora().corpora.find((corpus) => corpus.id === id);
  if (!spec) throw new Error(`bench/corpora.json has no corpus ${id}`);
  return packageRoot(spec);
}

/** One row's cold index against its bare parse, as one JSON line; no results file is written. */
async function coldOnly(rowId: string): Promise<void> {
  const row = scaleRows().find((candidate) => candidate.id === rowId);
  if (!row) throw new Error(`bench/corpora.json has no scale row ${rowId}`);
  const report = await benchColdOnly(row, MODEL, CACHE, process.argv.includes('--cpu-prof'));
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

if (process.argv.includes(SCALE_CHILD)) serveScaleChild();
else if (process.argv.includes(OPEN_SEARCH_CHILD)) serveOpenSearchChild();
else if (process.argv.includes(SAVE_PROFILE_CHILD)) serveSaveProfileChild();
else if (process.argv[2] === '--extract-cost')
  benchExtractCost(process.argv[3] ?? 'scale-1k').then(
    (costs) => {
      for (const cost of costs) process.stdout.write(`${JSON.stringify(cost)}\n`);
    },
    (cause: unknown) => {
      process.stderr.write(`bench: ${cause instanceof Error ? cause.message : String(cause)}\n`);
      process.exitCode = 1;
    },
  );
else if (process.argv[2] === '--native-parse')
  benchNativeParse(process.argv[3] ?? 'scale-10k', process.argv.slice(4)).then(
    (report) => process.stdout.write(`${JSON.stringify(report, null, 2)}\n`),
    (cause: unknown) => {
      process.stderr.write(`bench: ${cause instanceof Error ? cause.message : String(cause)}\n`);
      process.exitCode = 1;
    },
  );
else if (process.argv[2] === '--cold-only')
  coldOnly(process.argv[3] ?? 'scale-1k').catch((cause: unknown) => {
    process.stderr.write(`bench: ${cause instanceof Error ? cause.message : String(cause)}\n`);
    process.exitCode = 1;
  });
else if (process.argv[2] === '--open-search')
  benchOpenSearch(process.argv[3] ?? 'scale-10k', MODEL, CACHE, process.argv.slice(4)).catch(
    (cause: unknown) => {
      process.stderr.write(`bench: ${cause instanceof Error ? cause.message : String(cause)}\n`);
      process.exitCode = 1;
    },
  );
else if (process.argv[2] === '--save-profile')
  benchSaveProfile(process.argv[3] ?? 'scale-10k', MODEL, CACHE, process.argv.slice(4)).catch(
    (cause: unknown) => {
      process.stderr.write(`bench: ${cause instanceof Error ? cause.message : String(cause)}\n`);
      process.exitCode = 1;
    },
  );
else
  main().catch((cause: unknown) => {
    process.stderr.write(
      `bench failed: ${cause instanceof Error ? cause.message : String(cause)}\n`,
    );
    process.exitCode = 1;
  });
