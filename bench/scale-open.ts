/**
 * `node dist/bench.js --open-search scale-10k [--store DIR] [--fts5] [--cpu-prof] [--heap-prof] [--heap-snapshot]`:
 * the query side of a scale row alone, for working on search speed and memory without paying a
 * cold index each time. The row's store is built once (cold, in a child) into .cache/bench-stores/<row>-kept
 * and kept; every run then opens it in a fresh child and times opening, the first question and the
 * rest of the row's questions (after waiting for the engine's background token count, which
 * starts once it idles after the first question, and saying how long that took, and for its
 * warm-up after opening), and reports the
 * child's memory once the engine is open (before
 * the first question) and after searching (RSS, heap, memory outside the heap) and its peak RSS. The
 * store is rebuilt when it is missing or was built with another store format or extraction version
 * (such a store would open empty and rebuild inside the timed run).
 * With --fts5, SQLite FTS5 over the same files is timed in the same run; --cpu-prof and
 * --heap-prof write the child's profiles into .cache/bench-profiles, and --heap-snapshot a heap
 * snapshot taken after the last question (V8 collects garbage first). `--results FILE` writes
 * what each question returned (files, spans, the context's items), one JSON line per question,
 * so that two builds' answers can be compared line by line. `--store DIR` opens that kept store
 * instead of the row's own (another worktree's, say), and never builds or rebuilds it.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { writeHeapSnapshot } from 'node:v8';
import { PARSER_VERSION } from '../src/engine/model';
import { SCHEMA_VERSION } from '../src/engine/store/manifest';
import type { SearchResult } from '../src/engine/search/pipeline';
import { unwrap } from '../src/engine/util/result';
import {
  flagValue,
  mb,
  openAndAskFirst,
  openEngine,
  round,
  runChild,
  serveChild,
  waitForIdleSaves,
  waitForWarmUp,
  waitForTokenCounts,
} from './child';
import { available, fts5Times, summarise } from './scale-baselines';
import { corporaRow, keptStoreDir, readWorkspaceFiles, rowRoot } from './scale-corpus';
import { sampleQueries, type BenchQuery } from './scale-queries';

interface OpenSearchRequest {
  readonly phase: 'build' | 'search';
  readonly root: string;
  readonly storeDir: string;
  readonly model: string;
  readonly queries: readonly BenchQuery[];
  /** Where to write each question's answer, when asked. */
  readonly resultsFile?: string;
  /** Where to write a heap snapshot after the last question, when asked. */
  readonly heapSnapshot?: string;
}

interface OpenSearchReport {
  readonly openSeconds: number;
  readonly firstQueryMs: number;
  readonly searchTimes: number[];
  /** RSS, heap and memory outside it once the engine is open, before the first question. */
  readonly afterOpen: MemoryMb;
  readonly rssMb: number;
  readonly peakRssMb: number;
  readonly heapUsedMb: number;
  /** Memory outside V8's heap after the last question (ArrayBuffers' contents among it). */
  readonly externalMb: number;
  readonly arrayBuffersMb: number;
  /** RSS and heap after the last question once garbage is collected: steadier than the above. */
  readonly rssAfterGcMb: number;
  readonly heapAfterGcMb: number;
  /** Each pipeline stage's time per question (search metadata timings), for the stage table. */
  readonly stageTimes: Record<string, number[]>;
  /** CPU time of the whole process (LanceDB's threads included) per question: less noisy under load. */
  readonly cpuMsPerQuery: number;
}

interface MemoryMb {
  readonly rssMb: number;
  readonly heapUsedMb: number;
  readonly heapTotalMb: number;
  readonly externalMb: number;
  readonly arrayBuffersMb: number;
}

const QUESTIONS_PER_KIND = 40;

export async function benchOpenSearch(
  rowId: string,
  model: string,
  cache: string,
  flags: readonly string[],
): Promise<void> {
  const row = corporaRow(rowId);
  const root = rowRoot(row);
  const files = await readWorkspaceFiles(root);
  const queries = sampleQueries(files, QUESTIONS_PER_KIND);
  const given = flagValue(flags, '--store');
  if (flags.includes('--store') && !given) throw new Error('--store needs a kept store directory');
  const storeDir = given ? path.resolve(given) : keptStoreDir(cache, row.id);
  const resultsAt = flags.indexOf('--results');
  const resultsFile = resultsAt >= 0 ? flags[resultsAt + 1] : undefined;
  if (resultsAt >= 0 && !resultsFile) throw new Error('--results needs a file to write');
  const request = { root, storeDir, model, queries };
  if (!keptStoreCurrent(storeDir)) {
    if (given)
      throw new Error(`${storeDir} is not a current kept store: build it with --open-search`);
    process.stderr.write(`bench: ${row.id}: building the kept store in ${storeDir}\n`);
    rmSync(storeDir, { recursive: true, force: true });
    await runChild(OPEN_SEARCH_CHILD, { phase: 'build', ...request });
  }
  const profiles = path.join(cache, 'bench-profiles');
  mkdirSync(profiles, { recursive: true });
  const profiling = [
    ...(flags.includes('--cpu-prof') ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []),
    ...(flags.includes('--heap-prof') ? ['--heap-prof', `--heap-prof-dir=${profiles}`] : []),
  ];
  const report = await runChild<OpenSearchReport>(
    OPEN_SEARCH_CHILD,
    {
      phase: 'search',
      ...request,
      ...(resultsFile ? { resultsFile: path.resolve(resultsFile) } : {}),
      ...(flags.includes('--heap-snapshot')
        ? { heapSnapshot: path.join(profiles, `${row.id}-${Date.now()}.heapsnapshot`) }
        : {}),
    },
    // the child collects garbage after its last question, to report what stays
    ['--expose-gc', ...profiling],
  );
  const search = summarise(report.searchTimes);
  const fts5 =
    flags.includes('--fts5') && available('sqlite3')
      ? fts5Times(files, queries, path.join(cache, 'bench-fts5', `${row.id}-open`))
      : null;
  console.table([
    {
      row: row.id,
      files: files.length,
      openSeconds: report.openSeconds,
      firstQueryMs: report.firstQueryMs,
      queries: report.searchTimes.length,
      searchP50Ms: search.p50Ms,
      searchP95Ms: search.p95Ms,
      searchMaxMs: Math.round(Math.max(...report.searchTimes)),
      cpuMsPerQuery: report.cpuMsPerQuery,
      fts5P50Ms: fts5?.p50Ms ?? null,
      fts5P95Ms: fts5?.p95Ms ?? null,
      rssMb: report.rssMb,
      peakRssMb: report.peakRssMb,
      heapUsedMb: report.heapUsedMb,
      externalMb: report.externalMb,
      arrayBuffersMb: report.arrayBuffersMb,
      rssAfterGcMb: report.rssAfterGcMb,
      heapAfterGcMb: report.heapAfterGcMb,
    },
  ]);
  console.table([{ afterOpen: 'memory after the open (MB)', ...report.afterOpen }]);
  console.table(
    Object.entries(report.stageTimes).map(([stage, times]) => ({ stage, ...summarise(times) })),
  );
  if (profiling.length || flags.includes('--heap-snapshot'))
    process.stderr.write(`bench: profiles in ${profiles}\n`);
}

/**
 * The store and extraction versions the kept store was built with. A store of an older format
 * opens empty and rebuilds inside the timed run, so it is built again first instead.
 */
function storeFormat(): string {
  return `store ${SCHEMA_VERSION}; ${PARSER_VERSION}`;
}

function keptStoreCurrent(storeDir: string): boolean {
  const marker = path.join(storeDir, 'built');
  return existsSync(marker) && readFileSync(marker, 'utf8') === storeFormat();
}

/** The flag that makes the bench script an open-and-search child. */
export const OPEN_SEARCH_CHILD = '--open-search-child';

/** The child's side: builds the kept store, or opens it and searches. */
export function serveOpenSearchChild(): void {
  serveChild((request: OpenSearchRequest) =>
    request.phase === 'build' ? buildStore(request) : openAndSearch(request),
  );
}

async function buildStore(request: OpenSearchRequest): Promise<{ built: true }> {
  const engine = await openEngine(request);
  try {
    unwrap(await engine.index());
    // as a user's engine does once it idles after the first index: the openings take them
    await waitForIdleSaves(engine);
  } finally {
    engine.dispose();
  }
  // written last: a build that failed half-way is redone on the next run
  writeFileSync(path.join(request.storeDir, 'built'), storeFormat());
  return { built: true };
}

async function openAndSearch(request: OpenSearchRequest): Promise<OpenSearchReport> {
  const [first, ...rest] = request.queries;
  const { engine, openSeconds, firstQueryMs, memoryAfterOpen } = await openAndAskFirst(
    request,
    first!.text,
  );
  try {
    await waitForTokenCounts(engine);
    await waitForWarmUp(engine);
    const searchTimes: number[] = [];
    const stageTimes: Record<string, number[]> = {};
    const answers: string[] = [];
    const cpuBefore = process.cpuUsage();
    for (const query of rest) {
      const started = performance.now();
      const result = unwrap(await engine.search({ query: query.text }));
      searchTimes.push(performance.now() - started);
      for (const [stage, ms] of Object.entries(result.metadata.timings))
        (stageTimes[stage] ??= []).push(ms);
      if (request.resultsFile) answers.push(answerLine(query.text, result));
    }
    const cpu = process.cpuUsage(cpuBefore);
    if (request.resultsFile) writeFileSync(request.resultsFile, answers.join(''));
    const memory = process.memoryUsage();
    (globalThis as { gc?: () => void }).gc?.();
    const collected = process.memoryUsage();
    if (request.heapSnapshot) writeHeapSnapshot(request.heapSnapshot);
    return {
      openSeconds,
      firstQueryMs,
      searchTimes,
      afterOpen: {
        rssMb: mb(memoryAfterOpen.rss),
        heapUsedMb: mb(memoryAfterOpen.heapUsed),
        heapTotalMb: mb(memoryAfterOpen.heapTotal),
        externalMb: mb(memoryAfterOpen.external),
        arrayBuffersMb: mb(memoryAfterOpen.arrayBuffers),
      },
      rssMb: mb(memory.rss),
      peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
      heapUsedMb: mb(memory.heapUsed),
      externalMb: mb(memory.external),
      arrayBuffersMb: mb(memory.arrayBuffers),
      rssAfterGcMb: mb(collected.rss),
      heapAfterGcMb: mb(collected.heapUsed),
      stageTimes,
      cpuMsPerQuery: round((cpu.user + cpu.system) / 1000 / rest.length, 1),
    };
  } finally {
    engine.dispose();
  }
}

/** What a question returned, as one JSON line: everything but the timings, which differ run to run. */
function answerLine(question: string, result: SearchResult): string {
  const { timings: _timings, ...metadata } = result.metadata;
  const { files, context, trace } = result;
  return `${JSON.stringify({ question, files, context, metadata, trace })}\n`;
}
