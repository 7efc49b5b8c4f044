/**
 * `node dist/bench.js --save-profile scale-10k [--store <dir>] [--saves 5] [--pause ms]
 * [--cpu-prof]`: where a save's time goes on a kept store. The row's kept store (built by
 * `--open-search`, or the one `--store` names) is copied to a scratch folder, so every run starts
 * from the same state, and opened on a private copy of the row's tree: hard links, except the
 * saved file, which gets a copy of its own, so the edits never reach the shared corpus or another
 * row linked to it. A child opens the engine, asks a question (loading what search keeps in
 * memory), waits until search has its vectors (as they are after the scale row's questions),
 * pauses as a user's editing does (3 s, as in the scale rows; `--pause` changes it), then saves the
 * ~1,000-line file `--saves` times, each with a new function, until a search finds it. Each
 * save's run stages (index_stage_completed), the store's commit steps, the search after it and
 * whether the engine's warm-up after opening had finished (`warm_before`) are printed, median and
 * first; each save's window on the profile's clock goes to stderr.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { countLines } from '../src/engine/index/extract';
import { walkWorkspace } from '../src/engine/index/walk';
import { Engine } from '../src/engine/engine';
import { PathFilter } from '../src/engine/index/walk';
import { logHub } from '../src/engine/log/logger';
import { Searcher } from '../src/engine/search/pipeline';
import { LexicalIndex } from '../src/engine/store/lexical';
import { IndexStore } from '../src/engine/store/store';
import { Tables } from '../src/engine/store/tables';
import { TextsFile } from '../src/engine/store/texts';
import { MemorySink } from '../src/engine/log/sinks';
import { unwrap } from '../src/engine/util/result';
import { flagValue, openEngine, round, runChild, serveChild } from './child';
import { corporaRow, keptStoreDir, rowRoot } from './scale-corpus';
import { newFunction } from './scale';

interface SaveProfileRequest {
  readonly phase: 'saves';
  readonly root: string;
  readonly storeDir: string;
  readonly model: string;
  readonly savedFile: string;
  readonly saves: number;
  readonly pauseMs: number;
}

/** One save: milliseconds per step, in the order they ran. */
type SaveSteps = Record<string, number>;

/** The pause before the first save, as a user's editing gives one (as in the scale rows). */
const EDIT_PAUSE_MS = 3000;
const FIRST_QUESTION = 'where are errors reported to the caller';
/** How long the profile waits for search to have its vectors (a 100k read takes seconds). */
const VECTORS_WAIT_MS = 600_000;

export async function benchSaveProfile(
  rowId: string,
  model: string,
  cache: string,
  flags: readonly string[],
): Promise<void> {
  const row = corporaRow(rowId);
  const sharedRoot = rowRoot(row);
  const keptStore = path.resolve(flagValue(flags, '--store') ?? keptStoreDir(cache, row.id));
  if (!existsSync(path.join(keptStore, 'manifest.json')))
    throw new Error(`no kept store in ${keptStore}: build it with --open-search ${row.id}`);
  const saves = Number(flagValue(flags, '--saves') ?? 5);
  const savedFile = flagValue(flags, '--file') ?? (await thousandLineFile(sharedRoot));

  const scratch = path.join(cache, 'save-profile', row.id);
  const root = path.join(scratch, 'root');
  const copied = path.join(scratch, 'root-copied');
  if (!existsSync(copied)) {
    rmSync(root, { recursive: true, force: true });
    mkdirSync(scratch, { recursive: true });
    execFileSync('cp', ['-al', sharedRoot, root]);
    writeFileSync(copied, sharedRoot);
  }
  // the saved file gets an inode of its own: writing it must not write the shared corpus
  const own = path.join(root, savedFile);
  const original = readFileSync(path.join(sharedRoot, savedFile));
  rmSync(own);
  writeFileSync(own, original);
  const storeDir = path.join(scratch, 'store');
  rmSync(storeDir, { recursive: true, force: true });
  execFileSync('cp', ['-a', keptStore, storeDir]);
  const manifest = JSON.parse(readFileSync(path.join(storeDir, 'manifest.json'), 'utf8')) as {
    root: string;
  };
  manifest.root = root;
  writeFileSync(path.join(storeDir, 'manifest.json'), JSON.stringify(manifest));
  // the copy's pages are still to be written: the first save's fsync would pay for all of them
  execFileSync('sync');

  process.stderr.write(`bench: ${row.id}: ${saves} saves of ${savedFile}\n`);
  const execArgv = flags.includes('--cpu-prof')
    ? ['--cpu-prof', `--cpu-prof-dir=${path.join(cache, 'bench-profiles')}`]
    : [];
  const pauseMs = Number(flagValue(flags, '--pause') ?? EDIT_PAUSE_MS);
  const request: SaveProfileRequest = {
    phase: 'saves',
    root,
    storeDir,
    model,
    savedFile,
    saves,
    pauseMs,
  };
  const steps = await runChild<SaveSteps[]>(SAVE_PROFILE_CHILD, request, execArgv);
  const names = [...new Set(steps.flatMap((save) => Object.keys(save)))];
  console.table(
    names.map((step) => {
      const times = steps.map((save) => save[step] ?? 0);
      return { step, first: round(times[0]!, 1), median: round(median(times), 1) };
    }),
  );
}

/** The file of the row closest to 1,000 lines, as the scale rows pick it. */
async function thousandLineFile(root: string): Promise<string> {
  const walked = unwrap(await walkWorkspace({ root, maxFileBytes: 1024 * 1024 }));
  let best = { path: '', distance: Infinity };
  for (const candidate of walked.candidates) {
    const lines = countLines(readFileSync(path.join(root, candidate.path), 'utf8'));
    const distance = Math.abs(lines - 1000);
    if (distance < best.distance) best = { path: candidate.path, distance };
  }
  return best.path;
}

/** The flag that makes the bench script a save-profile child. */
export const SAVE_PROFILE_CHILD = '--save-profile-child';

export function serveSaveProfileChild(): void {
  serveChild(profileSaves);
}

async function profileSaves(request: SaveProfileRequest): Promise<SaveSteps[]> {
  const timed = timeMethods();
  const vectorsReady = vectorsSettled();
  const engine = await openEngine(request);
  try {
    unwrap(await engine.search({ query: FIRST_QUESTION }));
    // The scale row saves after 120 questions, by which time the first question's whole read of
    // the vectors (seconds at 950k chunks) is done; a save during it pays for that read as well.
    await vectorsReady;
    await new Promise((resolve) => setTimeout(resolve, request.pauseMs));
    const file = path.join(request.root, request.savedFile);
    const original = readFileSync(file, 'utf8');
    const out: SaveSteps[] = [];
    for (let i = 0; i < request.saves; i++) {
      const name = `benchsaved${i}marker`;
      writeFileSync(file, `${original}\n${newFunction(path.extname(file), name)}\n`);
      timed.clear();
      const events = new MemorySink('debug');
      const listening = logHub.addSink(events);
      const warmed = await warmedYet(engine);
      const started = performance.now();
      // on the clock a --cpu-prof's samples are stamped with, to cut the save out of the profile
      const window = process.hrtime.bigint() / 1000n;
      unwrap(await engine.updateFiles([request.savedFile]));
      const updated = performance.now();
      const found = unwrap(await engine.search({ query: name }));
      const searched = performance.now();
      process.stderr.write(
        `bench: save ${i} window ${window}-${process.hrtime.bigint() / 1000n} us\n`,
      );
      listening.dispose();
      if (!found.spans.some((span) => span.path === request.savedFile))
        throw new Error(`a search for ${name} did not find ${request.savedFile} after its save`);
      out.push({
        ...durations(events),
        ...Object.fromEntries([...timed].map(([name, ms]) => [`call ${name}`, ms])),
        update_files: updated - started,
        search_after: searched - updated,
        save_to_searchable: searched - started,
        warm_before: warmed ? 1 : 0,
      });
    }
    writeFileSync(file, original);
    return out;
  } finally {
    engine.dispose();
  }
}

/** Whether the engine's warm-up after opening has finished (a settled promise's callbacks run first). */
async function warmedYet(engine: Engine): Promise<boolean> {
  let done = false;
  void engine.whenWarm().then(() => (done = true));
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

/**
 * Settles once search has its vectors: read into memory (`vectors_loaded`) or left in the table
 * (`vectors_searched_in_table`), as the first question decides.
 */
function vectorsSettled(): Promise<void> {
  return new Promise((resolve, reject) => {
    // a store without vectors, or a read that failed, logs neither event: fail, never hang
    const giveUp = setTimeout(() => {
      listening.dispose();
      reject(new Error(`search logged neither vectors event in ${VECTORS_WAIT_MS / 1000} s`));
    }, VECTORS_WAIT_MS);
    giveUp.unref();
    const listening = logHub.addSink({
      minLevel: 'info',
      write: (event) => {
        if (event.event !== 'vectors_loaded' && event.event !== 'vectors_searched_in_table') return;
        clearTimeout(giveUp);
        listening.dispose();
        resolve();
      },
    });
  });
}

/** Steps the engine logged while a save ran: the run's stages, and any step timing itself. */
function durations(events: MemorySink): SaveSteps {
  const steps: SaveSteps = {};
  for (const event of events.events) {
    if (event.event === 'index_stage_completed')
      steps[`stage ${event.stage as string}`] = event.duration_ms as number;
    else if (typeof event.duration_ms === 'number' && event.event !== 'indexing_completed')
      steps[event.event] = event.duration_ms;
    if (event.phases_ms && typeof event.phases_ms === 'object')
      for (const [phase, ms] of Object.entries(event.phases_ms as Record<string, number>))
        steps[`${event.event}.${phase}`] = ms;
  }
  return steps;
}

/**
 * The steps of a save that log no time of their own (the store's and the tables' writes, the
 * engine's work after a run): their methods wrapped to add up their wall time, per save.
 */
function timeMethods(): Map<string, number> {
  const totals = new Map<string, number>();
  const wrap = (owner: object, label: string, names: readonly string[]) => {
    const target = owner as Record<string, unknown>;
    for (const name of names) {
      const original = target[name] as (...args: unknown[]) => unknown;
      target[name] = function (this: unknown, ...args: unknown[]) {
        const started = performance.now();
        const add = () => {
          const key = `${label}.${name}`;
          totals.set(key, (totals.get(key) ?? 0) + performance.now() - started);
        };
        const result = original.apply(this, args);
        if (result instanceof Promise) return result.finally(add);
        add();
        return result;
      };
    }
  };
  wrap(IndexStore.prototype, 'store', [
    'prepareWrite',
    'beginWrite',
    'apply',
    'persistLexical',
    'indexTables',
    'commit',
    'maintain',
    'filesWithChunks',
  ]);
  wrap(Tables.prototype, 'tables', [
    'replace',
    'addChunks',
    'addFacts',
    'setParentDirectory',
    'counts',
    'versions',
    'ensureIndexes',
    'needsOptimize',
    'versionCount',
    'restore',
  ]);
  wrap(TextsFile.prototype, 'texts', ['write', 'sync']);
  wrap(LexicalIndex.prototype, 'lexical', ['add', 'removePaths']);
  wrap(LexicalIndex, 'lexical', ['appendDelta']);
  wrap(PathFilter.prototype, 'filter', ['checkFiles']);
  wrap(Searcher.prototype, 'searcher', ['prepare', 'invalidate']);
  wrap(Engine.prototype, 'engine', ['planFor', 'recalibrate', 'rememberChangedFiles', 'refresh']);
  return totals;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}
