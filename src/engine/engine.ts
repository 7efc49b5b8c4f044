import { homedir } from 'node:os';
import { promises as fs, realpathSync } from 'node:fs';
import * as path from 'node:path';
import {
  DEFAULT_MODEL_REPO,
  type Embedder,
  type EmbeddingStatus,
  type ModelRequest,
} from './embed/embedder';
import { DEFAULT_HUB_URL } from './embed/hub';
import { bundledModelDirectory, loadModel } from './embed/load';
import { StaticModel } from './embed/static-model';
import { runFileTask, warmingTasks, type FileTask } from './index/file-task';
import { loadGrammar, loadLanguage } from './lang/grammars';
import { languageById } from './lang/registry';
import { defaultPoolSize, ParsePool } from './index/parse-pool';
import { CodeGraph } from './graph/code-graph';
import { Indexer, type IndexPlan, type IndexProgress, type IndexSummary } from './index/indexer';
import { CHUNK_LEVELS, type ChunkLevel } from './model';
import { PathFilter, walkWorkspace, type SkipReason } from './index/walk';
import { elapsedMs, getLogger } from './log/logger';
import { newTraceId, withTrace } from './log/trace';
import {
  resolveSymbol,
  traceCallers,
  type CallerTreeNode,
  type SymbolAction,
  type SymbolResult,
  callerCounts,
} from './resolve/symbols';
import { Answerer, type AskRequest } from './answer/answerer';
import type { FixProposal } from './fix/model';
import type { PatchFailure } from './fix/patch';
import { proposeFix, type FixRequest } from './fix/resolver';
import type { Answer } from './answer/model';
import { NEXT_OPENING_SAVE_QUIET_MS, NextOpeningSaver, openGraph } from './index/saved-graph';
import { Summarizer } from './index/summaries';
import type { LlmClient } from './llm/client';
import {
  CALIBRATION_VERSION,
  calibrate,
  calibrationCandidates,
  calibrationSamples,
  isCurrent,
  readCalibration,
  writeCalibration,
  type RetrieverCalibration,
} from './search/calibration';
import { Searcher, type SearchRequest, type SearchResult } from './search/pipeline';
import { savedVectorsOf, VectorScan } from './search/vectors';
import { warmUpQuestions } from './search/warm-questions';
import { IndexStore, NEAREST_WORDS_FILE } from './store/store';
import { Emitter, type Disposable, type Event } from './util/event';
import { shortHash } from './util/hash';
import { isInside, relativePath, toPosix } from './util/paths';
import { describeError, fail, ok, type Result } from './util/result';

/**
 * The engine of one workspace folder: it owns the store, the facts graph and the embedding model,
 * keeps the index current (full runs and per-file updates, one writer at a time) and answers
 * queries. The CLI, the tests, the benchmarks and the extension's worker all drive this class.
 */
export interface EngineOptions {
  readonly root: string;
  /** Where this folder's index lives; defaults to a folder under `storageRoot`. */
  readonly storeDir?: string;
  /** Where stores and downloaded models live (the extension passes its global storage). */
  readonly storageRoot?: string;
  readonly model?: ModelRequest;
  readonly hubUrl?: string;
  /** The model loaded when a hub model cannot be downloaded; default: the shipped one, null: none. */
  readonly offlineFallback?: string | null;
  readonly maxFileBytes?: number;
  /** Gitignore-style patterns to leave out (the editor's `files.exclude`). */
  readonly exclude?: readonly string[];
  readonly useGit?: boolean;
  readonly workers?: number;
  /** Chunks written to the tables per batch while parsing goes on (default 4000). */
  readonly batchChunks?: number;
  /** The model that summarises long functions while indexing; none: they are indexed as code. */
  readonly summarizer?: LlmClient | null;
}

export interface IndexStats {
  readonly root: string;
  readonly storeDir: string;
  readonly files: number;
  readonly skippedFiles: Record<string, number>;
  readonly chunks: Record<ChunkLevel, number>;
  readonly facts: number;
  readonly languages: Record<string, number>;
  readonly embedding: EmbeddingStatus;
  readonly updatedAt: string;
}

export interface OutlineEntry {
  readonly id: string;
  readonly name: string;
  readonly qualifiedName: string;
  readonly kind: string;
  readonly startLine: number;
  readonly endLine: number;
  /** Call sites resolved to this definition. */
  readonly callers: number;
  /** Places passing it as a value, and calls naming it whose receiver could not be resolved. */
  readonly references: number;
  readonly possible: number;
}

export interface IndexChange {
  /** Files whose chunks or facts changed in the last run. */
  readonly paths: readonly string[];
}

export const DEFAULT_MAX_FILE_BYTES = 1024 * 1024;
/** Characters of the folder's name kept in its store's name (the hash keeps it unique). */
const MAX_STORE_NAME = 64;
/** The retrievers are measured again once this share of the files changed (at least the minimum). */
const RECALIBRATE_SHARE = 0.05;
const RECALIBRATE_MIN_FILES = 10;
/** How long a run waits for another process's write to finish, and how often it looks. */
const LOCK_WAIT_MS = 60_000;
const LOCK_POLL_MS = 250;

const log = getLogger('engine');
/** The background warm-up after opening, apart from any run it happens to overlap. */
const warmupLog = getLogger('engine.warmup');
/** How long the engine must have idled before a warm-up step runs … */
const WARM_IDLE_MS = 1000;
/** … checked at most this often. */
const WARM_POLL_MS = 100;
/**
 * Warm-up questions of each kind (see warmUpQuestions): thirty-two took about a second of CPU at
 * 10k files, after which the first questions took 10–32 ms instead of 15–88 ms.
 */
const WARM_QUESTIONS_PER_KIND = 8;
/**
 * The pause before each of them (a question takes 10–100 ms), so that the engine takes at most
 * about a third of a core meanwhile: asked back to back, about a second of CPU, they lengthened
 * the editor's keypress-to-render more (see askWarmUpQuestions).
 */
const WARM_QUESTION_PAUSE_MS = 200;

export class Engine implements Disposable {
  private readonly progressEmitter = new Emitter<IndexProgress>();
  private readonly changeEmitter = new Emitter<IndexChange>();
  readonly onProgress: Event<IndexProgress> = this.progressEmitter.event;
  readonly onDidChangeIndex: Event<IndexChange> = this.changeEmitter.event;
  private readonly indexer: Indexer;
  private readonly pool: ParsePool;
  private readonly filter: PathFilter;
  private searcher: Searcher;
  private readonly answerer: Answerer;
  private writes: Promise<unknown> = Promise.resolve();
  private writing = false;
  private disposed = false;
  private retrieverCalibration: RetrieverCalibration | null = null;
  /** The codebase size of the last calibration that failed, so a save does not retry it. */
  private failedCalibration: RetrieverCalibration | null = null;
  /** Files indexed or removed since the retrievers were last measured. */
  private changedSinceCalibration = 0;
  private readonly nextOpeningSaver: NextOpeningSaver;

  private constructor(
    readonly root: string,
    readonly options: EngineOptions,
    readonly store: IndexStore,
    readonly graph: CodeGraph,
    readonly embedder: Embedder | null,
    readonly embedding: EmbeddingStatus,
    /** Messages for the user from opening the store (rebuilt, recovered …). */
    readonly notices: readonly string[],
    /** The store's vectors, being read since it opened. */
    vectors: VectorScan,
  ) {
    const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
    this.pool = new ParsePool(
      options.workers ?? defaultPoolSize(),
      embedder instanceof StaticModel ? embedder : null,
    );
    // An empty store means a full index is coming: start the workers while the caller gets ready.
    if (!Object.keys(store.manifest.files).length) this.pool.start();
    this.indexer = new Indexer(
      {
        root,
        maxFileBytes,
        ...(options.batchChunks ? { batchChunks: options.batchChunks } : {}),
        ...(options.summarizer
          ? { summarizer: Summarizer.forStore(options.summarizer, store.directory) }
          : {}),
      },
      store,
      graph,
      embedder,
      this.pool,
    );
    this.indexer.onProgress((progress) => this.progressEmitter.fire(progress));
    this.filter = new PathFilter(root, {
      exclude: options.exclude ?? [],
      maxFileBytes,
      ...(options.useGit !== undefined ? { useGit: options.useGit } : {}),
    });
    this.searcher = this.newSearcher(vectors);
    this.nextOpeningSaver = new NextOpeningSaver(
      store,
      graph,
      path.basename(root),
      (needed) => this.idle(needed),
      () => this.disposed,
      () => this.searcher.saveTokenCounts(),
      () => this.searcher.saveVectors(),
    );
    // another process committed, or a failed write was rolled back: what is in memory follows
    store.onReload(async () => {
      graph.update([...graph.files()], store.takeFacts());
      this.indexer.forgetDirectories();
      this.searcher = this.newSearcher();
      void this.countContextTokens();
      // the writer may have measured the retrievers again for what it committed
      this.useCalibration(await readCalibration(store.directory));
      this.changeEmitter.fire({ paths: [] });
    });
    this.changeEmitter.event((change) => this.searcher.invalidate(change.paths));
    this.answerer = new Answerer({
      root,
      graph,
      catalog: store.catalog,
      search: (request) => this.search(request),
      chunkTexts: (ids) => this.searcher.texts.get(ids),
    });
  }

  /** A searcher of the store as it is now; `vectors` a scan of its vectors already reading them. */
  private newSearcher(
    vectors = new VectorScan(this.store.tables, this.store.catalog, {
      saved: savedVectorsOf(this.store),
    }),
  ): Searcher {
    return new Searcher(
      {
        catalog: this.store.catalog,
        lexical: this.store.lexical,
        tables: this.store.tables,
        texts: this.store.texts,
        graph: this.graph,
        embedder: this.embedder,
      },
      {
        file: path.join(this.store.directory, NEAREST_WORDS_FILE),
        // as the store's other files: written only by the process holding its lock
        writable: () => this.store.texts.forWriting,
      },
      vectors,
    );
  }

  static async open(options: EngineOptions): Promise<Result<Engine>> {
    const requested = path.resolve(options.root);
    const stat = await fs.stat(requested).catch(() => null);
    if (!stat) return fail('not_found', `Folder does not exist: ${requested}`);
    if (!stat.isDirectory()) return fail('invalid_input', `Not a folder: ${requested}`);
    const root = realpathSync(requested);
    const storageRoot = options.storageRoot ?? defaultStorageRoot();
    const storeDir = options.storeDir
      ? path.resolve(options.storeDir)
      : defaultStoreDir(storageRoot, root);
    const model = options.model ?? { kind: 'hub', repo: DEFAULT_MODEL_REPO };

    const loaded = await loadModel(model, {
      cacheRoot: storageRoot,
      hubUrl: options.hubUrl ?? process.env.CODE_ORACLE_HUB_URL ?? DEFAULT_HUB_URL,
      offlineFallback:
        options.offlineFallback === undefined ? bundledModelDirectory() : options.offlineFallback,
    });
    const embedder = loaded.ok ? loaded.value.embedder : null;
    const reason = loaded.ok
      ? embedder
        ? null
        : 'no embedding model is configured'
      : loaded.error.message;
    if (!loaded.ok) log.warn('embedding_unavailable', { reason });
    const embedding: EmbeddingStatus = {
      available: !!embedder,
      modelId: embedder?.id ?? null,
      dimensions: embedder?.dimensions ?? 0,
      reason: embedder ? null : `Lexical search only: ${reason}.`,
      note: loaded.ok ? loaded.value.note : null,
    };

    // The graph comes first: the store reads the facts into it, each one's call sites packed into
    // the graph's own numbers as it is read instead of held as objects until the graph takes them.
    const rootPackage = path.basename(root);
    const graph = new CodeGraph(rootPackage);
    const opened = await IndexStore.open(storeDir, {
      root,
      embedding: embedder ? { modelId: embedder.id, dimensions: embedder.dimensions } : null,
      embeddingReason: embedding.reason,
      gatherFacts: () => graph.pending(),
    });
    if (!opened.ok) return opened;
    const { store, notices } = opened.value;
    for (const notice of notices) log.warn('index_notice', { message: notice });
    // The vectors are read while the graph is built: LanceDB decodes them on its own threads
    // while this one builds, and the first question after opening waits for them otherwise.
    const vectors = startReadingVectors(store);
    const taken = await openGraph(store, graph, rootPackage);
    const engine = new Engine(
      root,
      { ...options, storeDir },
      store,
      graph,
      embedder,
      embedding,
      notices,
      vectors,
    );
    engine.useCalibration(await readCalibration(store.directory));
    engine.warmAfterOpening();
    void engine.countContextTokens();
    if (taken) engine.nextOpeningSaver.takenFromDisk();
    // the counts this opening makes are saved too, when the calls need not be
    void engine.nextOpeningSaver.schedule(NEXT_OPENING_SAVE_QUIET_MS);
    return ok(engine);
  }

  /**
   * Readies, while the engine idles, what the first question would otherwise load (warmSearch),
   * then what a save's small update runs on this thread and would otherwise load or compile
   * during the first one: git is asked whether the folder is a work tree, the tables' indexes a
   * save filters by are read in, then each language the index holds (most files first) has its
   * grammar loaded, its query compiled and a small file of it run through the whole file task;
   * last, the index's warm-up questions are asked (askWarmUpQuestions). Each step waits until no
   * search or write has run for WARM_IDLE_MS, so the first questions after opening never wait for
   * it, and a save waits at most for the one step under way. It runs under a trace of its own; a
   * failure only leaves the first save or question slower.
   */
  private warmAfterOpening(): void {
    const indexed = Object.entries(this.store.manifest.files)
      .filter(([, entry]) => !entry.skipped)
      .map(([file, entry]) => ({ path: file, size: entry.size }));
    const tasks = warmingTasks(this.root, indexed, this.maxFileBytes);
    // an index opened empty is about to be built: see askWarmUpQuestions
    const ask = indexed.length > 0;
    this.warming = withTrace(() => this.warmWhenIdle(tasks, ask), newTraceId());
  }

  private async warmWhenIdle(tasks: readonly FileTask[], ask: boolean): Promise<void> {
    const started = performance.now();
    const embedder = this.embedder instanceof StaticModel ? this.embedder : null;
    const languages: string[] = [];
    await this.warmSearch();
    try {
      await this.idle();
      if (this.disposed) return;
      await this.filter.warm();
      // the process's first comparison by locale loads the collation tables (~12 ms): a folder's
      // summary orders its names so on a save, and the fusion its ties on a question
      'a'.localeCompare('b');
      await this.idle();
      if (this.disposed) return;
      await this.store.tables.warmIndexes();
      // never during a write: its plan may be ahead of the graph until it commits
      if (!this.writing) this.indexer.warmDirectories();
      for (const task of tasks) {
        const spec = languageById(task.language);
        await this.idle();
        if (this.disposed) return;
        await loadLanguage(spec);
        // The query's compile cannot yield: it starts only right after a check finds no write,
        // never after a file read that a save could begin during (the save would wait for it).
        await this.idle();
        if (this.disposed) return;
        await loadGrammar(spec);
        await this.idle();
        if (this.disposed) return;
        await runFileTask(task, embedder);
        languages.push(task.language);
      }
      warmupLog.info('save_path_warmed', { languages, duration_ms: elapsedMs(started) });
    } catch (cause) {
      warmupLog.warn('save_path_warm_failed', { languages, error: describeError(cause) });
    }
    // last: a save soon after opening finds its path ready before the questions are asked
    if (ask) await this.warmQuestions();
  }

  /**
   * Loads, once the engine idles, what the first question would otherwise wait for: at 10k files
   * about 3 s of a first question went to embedding the index's words for the nearest words and
   * reading the vectors. A question asked meanwhile waits only for what is left of it.
   */
  private async warmSearch(): Promise<void> {
    const started = performance.now();
    try {
      await this.idle();
      if (this.disposed) return;
      await this.searcher.warm();
      warmupLog.info('search_warmed', { duration_ms: elapsedMs(started) });
    } catch (cause) {
      // closing the engine stops a warm-up under way: nothing failed then
      if (!this.disposed) warmupLog.warn('search_warm_failed', { error: describeError(cause) });
    }
  }

  /**
   * Asks the index's own questions (warmUpQuestions), one at a time while the engine idles, so
   * that the user's first questions run on compiled code; their answers are dropped, and the
   * caches they fill give the same answers as empty ones. At the end of the warm-up after
   * opening an index that holds files, not after the first index of an empty one: while they
   * ran right after a first index, the e2e suite's keypress-to-render there rose (medians 70–93
   * ms with the pauses, 75–119 ms without, against 45–68 ms when they came after its keys; three
   * runs of each). A question or save sent meanwhile waits only for the question under way.
   */
  private async askWarmUpQuestions(): Promise<void> {
    const started = performance.now();
    const questions = warmUpQuestions(this.graph, WARM_QUESTIONS_PER_KIND);
    if (!questions.length) return;
    for (const query of questions) {
      // a pause first: a question or save sent meanwhile starts before this one, and the editor
      // has the processor between questions
      await new Promise((resolve) => setTimeout(resolve, WARM_QUESTION_PAUSE_MS).unref());
      await this.idle();
      if (this.disposed) return;
      await this.searcher.search({ query });
    }
    warmupLog.info('questions_warmed', {
      questions: questions.length,
      duration_ms: elapsedMs(started),
    });
  }

  private async warmQuestions(): Promise<void> {
    try {
      await this.askWarmUpQuestions();
    } catch (cause) {
      // closing the engine stops a warm-up under way: nothing failed then
      if (!this.disposed) warmupLog.warn('search_warm_failed', { error: describeError(cause) });
    }
  }

  /**
   * Resolves once no search or write has run for `needed()` milliseconds (WARM_IDLE_MS unless
   * asked; asked again at each check, so a caller may shorten a wait under way) or the engine was
   * closed.
   */
  private async idle(needed: () => number = () => WARM_IDLE_MS): Promise<void> {
    for (;;) {
      const quiet = performance.now() - this.lastActivity;
      if (this.disposed || (!this.writing && !this.searching && quiet >= needed())) return;
      const wait = Math.min(WARM_IDLE_MS, Math.max(WARM_POLL_MS, needed() - quiet));
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
    }
  }

  /**
   * Counts the context's tokens of the texts the index holds and has not counted yet, slice by
   * slice while no question or write runs (a question waits for at most one slice); resolves
   * once they are counted. Questions meanwhile count at question time, to the same answers.
   */
  countContextTokens(): Promise<void> {
    return this.searcher.countContextTokens(() => this.idle());
  }

  /**
   * Saves beside the index, as soon as the engine idles, what the next opening takes back instead
   * of redoing: the graph's resolved calls, unless those saved are of what the index holds now,
   * and the context's token counts made since they were saved. Resolves when they are saved (or
   * need not be). Without being asked, the engine saves them once it has idled
   * NEXT_OPENING_SAVE_QUIET_MS after opening or a change.
   */
  saveForNextOpening(): Promise<void> {
    return this.nextOpeningSaver.schedule(WARM_IDLE_MS);
  }

  private warming: Promise<void> = Promise.resolve();
  /** The writes of the measure (calibration.json), one after another. */
  private calibrationWrites: Promise<void> = Promise.resolve();
  /** Searches in progress, and when the last search or write started or ended. */
  private searching = 0;
  private lastActivity = performance.now();

  /** Settles once the warm-up after opening is done (it never fails). */
  whenWarm(): Promise<void> {
    return this.warming;
  }

  get storeDir(): string {
    return this.store.directory;
  }

  /** Starts the parse workers and waits until they are ready, so the next run does not wait. */
  warmUp(): Promise<void> {
    return this.pool.whenReady();
  }

  /** Brings the index up to date with the folder: new, changed and deleted files. */
  index(signal?: AbortSignal): Promise<Result<IndexSummary>> {
    return this.enqueue(() =>
      withTrace(async () => {
        const plan = await this.walkPlan();
        return plan.ok ? this.runPlan(plan.value, signal) : plan;
      }),
    );
  }

  /**
   * Re-indexes files that were saved, created or changed on disk (paths absolute or relative). A
   * changed .gitignore can change what is indexed anywhere below it: that makes a full pass.
   */
  updateFiles(paths: readonly string[], signal?: AbortSignal): Promise<Result<IndexSummary>> {
    return this.enqueue(() =>
      withTrace(async () => {
        if (paths.some((file) => path.basename(file) === '.gitignore')) {
          this.filter.invalidate();
          const plan = await this.walkPlan();
          return plan.ok ? this.runPlan(plan.value, signal) : plan;
        }
        return this.runPlan(await this.planFor(paths), signal);
      }),
    );
  }

  removeFiles(paths: readonly string[]): Promise<Result<IndexSummary>> {
    return this.updateFiles(paths);
  }

  renameFile(from: string, to: string): Promise<Result<IndexSummary>> {
    return this.updateFiles([from, to]);
  }

  /**
   * Finds the code that answers a question: the spans, their budgeted context for a model, and
   * how they were found. An empty question is refused; an empty index gives no spans.
   */
  async search(request: SearchRequest): Promise<Result<SearchResult>> {
    this.searching++;
    this.lastActivity = performance.now();
    try {
      return await this.searchNow(request);
    } finally {
      this.searching--;
      this.lastActivity = performance.now();
    }
  }

  private async searchNow(request: SearchRequest): Promise<Result<SearchResult>> {
    if (!request.query.trim() && !request.attachment)
      return fail('invalid_input', 'The question is empty.');
    await this.refresh();
    let failure: unknown;
    try {
      return ok(this.withStaleNotice(await this.searcher.search(request)));
    } catch (cause) {
      failure = cause;
    }
    // a reader's version may have been cleaned up by the writer's commit: read that commit
    if (await this.refresh().catch(() => false)) {
      try {
        return ok(this.withStaleNotice(await this.searcher.search(request)));
      } catch (cause) {
        failure = cause;
      }
    }
    log.error('search_failed', { error: describeError(failure) });
    return fail('io_error', `The search failed: ${describeError(failure)}`);
  }

  /**
   * Loads the commits another process (another window, the CLI) made since this engine read the
   * index. Only between this engine's own writes: during one, the memory is the writer's.
   */
  async refresh(): Promise<boolean> {
    if (this.writing) return false;
    return this.store.refresh();
  }

  /** Results read while another process writes say they come from its last commit. */
  private withStaleNotice(result: SearchResult): SearchResult {
    if (!this.store.writerElsewhere()) return result;
    const committed = this.store.manifest.generation
      ? `its last commit (${this.store.manifest.updatedAt})`
      : 'an empty index (nothing is committed yet)';
    const notice = `The index is being updated by another process: these results come from ${committed}.`;
    return {
      ...result,
      metadata: { ...result.metadata, notices: [...result.metadata.notices, notice] },
    };
  }

  /**
   * Answers a question with prose and checked citations (fast, thinking or deep), or with the
   * evidence itself when no model is given.
   */
  async ask(request: AskRequest): Promise<Result<Answer>> {
    await this.refresh();
    try {
      return await this.answerer.ask(request);
    } catch (cause) {
      log.error('ask_failed', { error: describeError(cause) });
      return fail('io_error', `The question could not be answered: ${describeError(cause)}`);
    }
  }

  /**
   * Turns an issue or a diagnostic into a checked patch (analysis, the model's search-and-replace
   * blocks, each checked to occur exactly once); nothing is written.
   */
  async proposeFix(request: FixRequest): Promise<Result<FixProposal, PatchFailure>> {
    try {
      return await proposeFix(
        { graph: this.graph, catalog: this.store.catalog, search: (search) => this.search(search) },
        this.root,
        request,
      );
    } catch (cause) {
      log.error('fix_failed', { error: describeError(cause) });
      return fail('io_error', `No patch could be proposed: ${describeError(cause)}`);
    }
  }

  /** A research tool (search_code, resolve_symbol, trace_callers, read_file, read_map) as text for a model. */
  async runTool(name: string, input: unknown): Promise<Result<string>> {
    try {
      const output = await this.answerer.tool(name, input);
      return output.isError ? fail('invalid_input', output.text) : ok(output.text);
    } catch (cause) {
      log.error('tool_failed', { tool: name, error: describeError(cause) });
      return fail('io_error', `The tool ${name} failed: ${describeError(cause)}`);
    }
  }

  resolveSymbol(name: string, action: SymbolAction): Result<SymbolResult[]> {
    return resolveSymbol(this.graph, name, action);
  }

  /** The functions, methods and classes of a file with how many call sites reach each (for code lenses). */
  outline(file: string): OutlineEntry[] {
    const relative = toPosix(file);
    return this.graph
      .factsInFile(relative)
      .filter((fact) => fact.kind !== 'module')
      .map((fact) => ({
        id: fact.id,
        name: fact.name,
        qualifiedName: fact.qualifiedName,
        kind: fact.kind,
        startLine: fact.startLine,
        endLine: fact.endLine,
        ...callerCounts(this.graph, fact.id),
      }));
  }

  traceCallers(name: string, depth: number): Result<CallerTreeNode[]> {
    return traceCallers(this.graph, name, depth);
  }

  stats(): IndexStats {
    const manifest = this.store.manifest;
    const chunks = Object.fromEntries(
      CHUNK_LEVELS.map((level) => [level, this.store.catalog.countOf(level)]),
    ) as Record<ChunkLevel, number>;
    const languages: Record<string, number> = {};
    const skippedFiles: Record<string, number> = {};
    let files = 0;
    for (const entry of Object.values(manifest.files)) {
      if (entry.skipped) skippedFiles[entry.skipped] = (skippedFiles[entry.skipped] ?? 0) + 1;
      else {
        files++;
        if (entry.language) languages[entry.language] = (languages[entry.language] ?? 0) + 1;
      }
    }
    return {
      root: this.root,
      storeDir: this.storeDir,
      files,
      skippedFiles,
      chunks,
      facts: this.graph.size,
      languages,
      embedding: this.embedding,
      updatedAt: manifest.updatedAt,
    };
  }

  /** Whether the folder has changed since the index was last brought up to date. */
  async isStale(): Promise<boolean> {
    if (!Object.keys(this.store.manifest.files).length) return true;
    // a check, not indexing: it shows no progress
    const plan = await this.walkPlan(false);
    return !plan.ok || plan.value.tasks.length > 0 || plan.value.removed.length > 0;
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.progressEmitter.dispose();
    this.changeEmitter.dispose();
    this.pool.dispose();
    this.embedder?.dispose();
    this.store.close();
  }

  private get maxFileBytes(): number {
    return this.options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES;
  }

  /** The folder walked: new and changed files to index, and files gone since the last run. */
  private async walkPlan(reportProgress = true): Promise<Result<IndexPlan>> {
    if (reportProgress) this.progressEmitter.fire({ stage: 'walk', done: 0, total: 1 });
    const walked = await walkWorkspace({
      root: this.root,
      maxFileBytes: this.maxFileBytes,
      exclude: this.options.exclude ?? [],
      ...(this.options.useGit !== undefined ? { useGit: this.options.useGit } : {}),
    });
    if (!walked.ok) return walked;
    if (reportProgress) this.progressEmitter.fire({ stage: 'walk', done: 1, total: 1 });
    const files = this.store.manifest.files;
    const seen = new Set(walked.value.candidates.map((candidate) => candidate.path));
    return ok({
      tasks: walked.value.candidates.filter((candidate) => {
        const entry = files[candidate.path];
        return !entry || entry.size !== candidate.size || entry.mtimeMs !== candidate.mtimeMs;
      }),
      removed: Object.keys(files).filter((file) => !seen.has(file)),
      skipped: new Map(),
      walkSkips: walked.value.skipped,
      filesSeen: walked.value.candidates.length,
    });
  }

  /** Named files only, judged by the walk's rules: indexed, skipped (if they were indexed) or removed. */
  private async planFor(paths: readonly string[]): Promise<IndexPlan> {
    const requested = [...new Set(paths.map((file) => this.relative(file)))].filter(
      (file) => file && isInside(this.root, path.join(this.root, file)),
    );
    const verdicts = await this.filter.checkFiles(requested);
    const tasks: IndexPlan['tasks'][number][] = [];
    const removed: string[] = [];
    const skipped = new Map<string, SkipReason>();
    for (const file of requested) {
      const known = !!this.store.manifest.files[file];
      const verdict = verdicts.get(file);
      if (!verdict) {
        if (known) removed.push(file);
      } else if ('reason' in verdict) {
        if (known) skipped.set(file, verdict.reason);
      } else
        tasks.push({
          path: file,
          language: verdict.language,
          size: verdict.size,
          mtimeMs: verdict.mtimeMs,
        });
    }
    return { tasks, removed, skipped, walkSkips: new Map(), filesSeen: tasks.length };
  }

  private relative(file: string): string {
    return path.isAbsolute(file) ? relativePath(this.root, file) : toPosix(path.normalize(file));
  }

  private async runPlan(plan: IndexPlan, signal?: AbortSignal): Promise<Result<IndexSummary>> {
    if (this.disposed) return fail('cancelled', 'The index was closed.');
    try {
      const result = await this.runWhenUnlocked(plan, signal);
      if (result.ok) {
        const paths = [
          ...plan.tasks.map((task) => task.path),
          ...plan.removed,
          ...plan.skipped.keys(),
        ];
        if (paths.length) this.changeEmitter.fire({ paths });
        this.changedSinceCalibration += result.value.indexed + result.value.removed;
        await this.recalibrate(result.value.chunks.function, result.value.files);
        this.rememberChangedFiles();
        await this.searcher.prepare();
        void this.countContextTokens();
        void this.nextOpeningSaver.schedule(NEXT_OPENING_SAVE_QUIET_MS);
      }
      return result;
    } catch (cause) {
      log.error('indexing_failed', { repo_path: this.root, error: describeError(cause) });
      return fail('io_error', `Indexing failed: ${describeError(cause)}`);
    }
  }

  /**
   * Runs a plan; while another process holds the write lock, waits for it (up to a minute) and
   * loads its commit first, instead of failing: two processes that both want to index take turns.
   */
  private async runWhenUnlocked(
    plan: IndexPlan,
    signal?: AbortSignal,
  ): Promise<Result<IndexSummary>> {
    const started = Date.now();
    for (;;) {
      const result = await this.indexer.run(plan, signal);
      const waiting =
        !result.ok &&
        result.error.code === 'index_locked' &&
        this.store.writerElsewhere() &&
        Date.now() - started < LOCK_WAIT_MS &&
        !signal?.aborted;
      if (!waiting) return result;
      await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
      await this.store.refresh();
    }
  }

  /** How far the semantic retriever is trusted here (search/calibration.ts), as stored. */
  get calibration(): RetrieverCalibration | null {
    return this.retrieverCalibration;
  }

  private useCalibration(calibration: RetrieverCalibration | null): void {
    this.retrieverCalibration =
      this.embedder && calibration?.modelId === this.embedder.id ? calibration : null;
    this.changedSinceCalibration = this.retrieverCalibration?.changedFiles ?? 0;
    this.searcher.calibrate(this.retrieverCalibration);
  }

  /**
   * Stores how many files changed since the measure, so a restart does not forget them: written
   * after the run has returned, not before it. Only a restart reads the count, and the write flushes
   * the file and its folder to disk (2-12 ms of a save at 10k files, the first after opening the
   * most). A write that fails is logged; the run it counts has committed all the same.
   */
  private rememberChangedFiles(): void {
    const calibration = this.retrieverCalibration;
    if (!calibration || calibration.changedFiles === this.changedSinceCalibration) return;
    this.retrieverCalibration = { ...calibration, changedFiles: this.changedSinceCalibration };
    this.saveCalibration(this.retrieverCalibration).catch((cause: unknown) =>
      log.warn('calibration_not_saved', { error: describeError(cause) }),
    );
  }

  /** Writes the measure once the writes of it before are done, so an older one never lands last. */
  private saveCalibration(calibration: RetrieverCalibration): Promise<void> {
    const write = this.calibrationWrites.then(() =>
      writeCalibration(this.store.directory, calibration),
    );
    // the caller hears of a failure (and logs it); the writes after it still go ahead
    this.calibrationWrites = write.catch(() => undefined);
    return write;
  }

  /**
   * Settles once what the engine writes beside the index after a run (the count of changed files
   * kept with the measure) is on disk.
   */
  whenSaved(): Promise<void> {
    return this.calibrationWrites;
  }

  /**
   * Measures how far the embedding model can be trusted on this codebase when the stored measure
   * is missing, is for another model, or is for a much smaller or larger codebase. A failure
   * leaves the default weights in place: it never fails the indexing run.
   */
  private async recalibrate(functions: number, files: number): Promise<void> {
    const embedder = this.embedder;
    // many changed files can change the measure without changing the codebase's size
    const drifted =
      this.changedSinceCalibration > Math.max(RECALIBRATE_MIN_FILES, RECALIBRATE_SHARE * files);
    if (
      !embedder ||
      (!drifted && isCurrent(this.retrieverCalibration, embedder.id, functions)) ||
      isCurrent(this.failedCalibration, embedder.id, functions)
    )
      return;
    this.changedSinceCalibration = 0;
    const started = performance.now();
    try {
      const candidates = calibrationCandidates(this.store.catalog.values(), embedder.kind);
      const texts = await this.searcher.texts.get(candidates.map((meta) => meta.id));
      const calibration = await calibrate(
        calibrationSamples(candidates, texts, embedder.kind),
        embedder,
        functions,
      );
      log.info('retrievers_calibrated', {
        model: calibration.modelId,
        functions,
        questions: calibration.questions,
        lexical_mrr: calibration.lexicalMrr,
        semantic_mrr: calibration.semanticMrr,
        semantic_share: calibration.semanticShare,
        semantic_trust: calibration.semanticTrust,
        duration_ms: Math.round(performance.now() - started),
      });
      this.useCalibration(calibration);
      await this.saveCalibration(calibration);
    } catch (cause) {
      // tried for this codebase's size: not again on every save, only once it has grown or shrunk
      this.failedCalibration = {
        version: CALIBRATION_VERSION,
        modelId: embedder.id,
        functions,
        questions: 0,
        lexicalMrr: null,
        semanticMrr: null,
        semanticShare: 0,
        semanticTrust: 1,
        changedFiles: 0,
      };
      log.warn('calibration_failed', { error: describeError(cause) });
    }
  }

  /** Write operations run one after another; reads never wait for them. */
  private enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const tracked = async () => {
      this.writing = true;
      try {
        await this.store.refresh();
        return await operation();
      } finally {
        this.writing = false;
        this.lastActivity = performance.now();
      }
    };
    const next = this.writes.then(tracked, tracked);
    this.writes = next.catch(() => undefined);
    return next;
  }
}

/**
 * A scan of `store`'s vectors, reading them from now on. A failed read is only logged: the first
 * search reads them again.
 */
function startReadingVectors(store: IndexStore): VectorScan {
  const vectors = new VectorScan(store.tables, store.catalog, { saved: savedVectorsOf(store) });
  vectors.ready().catch((cause: unknown) => {
    log.warn('vectors_not_read_early', { error: describeError(cause) });
  });
  return vectors;
}

export function defaultStorageRoot(): string {
  if (process.env.CODE_ORACLE_HOME) return path.resolve(process.env.CODE_ORACLE_HOME);
  const cache =
    process.platform === 'win32'
      ? (process.env.LOCALAPPDATA ?? path.join(homedir(), 'AppData', 'Local'))
      : process.platform === 'darwin'
        ? path.join(homedir(), 'Library', 'Caches')
        : (process.env.XDG_CACHE_HOME ?? path.join(homedir(), '.cache'));
  return path.join(cache, 'code-oracle');
}

/** One store per workspace folder, named after the folder and a hash of its real path. */
export function defaultStoreDir(storageRoot: string, root: string): string {
  // the folder's name, shortened: a 250-character folder name must not exceed a file name's limit
  const name = path
    .basename(root)
    .replace(/[^\w.-]+/g, '_')
    .slice(0, MAX_STORE_NAME);
  return path.join(storageRoot, 'stores', `${name}-${shortHash(root)}`);
}
