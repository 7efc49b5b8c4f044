import { embeddingText, type Embedder } from '../embed/embedder';
import type { PendingFacts } from '../graph/call-table';
import type { CodeGraph } from '../graph/code-graph';
import { elapsedMs, getLogger } from '../log/logger';
import { directoryLexicalKey, type IndexStore } from '../store/store';
import type { LexicalDocument } from '../store/lexical';
import type { FileEntry } from '../store/manifest';
import { Emitter, type Event } from '../util/event';
import { describeError, fail, ok, type Result } from '../util/result';
import { ancestors } from '../util/paths';
import {
  buildDirectoryChunk,
  byVisitOrder,
  directoryChunkId,
  DirectoryPlan,
  planDirectoryUnits,
  type DirectoryUnit,
} from './directories';
import {
  chunkTerms,
  lexicalTerms,
  unpackTerms,
  type FileOutcome,
  type FileTask,
  type LexicalTerms,
} from './file-task';
import {
  CHUNK_LEVELS,
  type Chunk,
  type ChunkLevel,
  type CodeFact,
  type IndexStage,
  type LanguageId,
} from '../model';
import { chunkId } from './chunks';
import type { ParsePool } from './parse-pool';
import type { Summarizer } from './summaries';
import type { SkipReason } from './walk';

/**
 * The ingestion pipeline over an open store: parse the files that changed (in worker threads),
 * write their chunks in batches as they arrive, then update the facts graph and the directory
 * chunks where affected, embed, and commit the manifest. Any set of changes, from one
 * saved file to a branch switch touching thousands, is one run.
 */

export interface IndexProgress {
  readonly stage: IndexStage;
  readonly done: number;
  readonly total: number;
  readonly path?: string;
}

export interface IndexPlan {
  /** Files to (re)read: new, or changed since the manifest's size and timestamp. */
  readonly tasks: readonly { path: string; language: LanguageId; size: number; mtimeMs: number }[];
  /** Files the index holds that are gone or no longer indexable. */
  readonly removed: readonly string[];
  /** Files newly skipped by name or size (their old rows must go), with the reason. */
  readonly skipped: ReadonlyMap<string, SkipReason>;
  /** Skips counted by the walk (ignored folders, extensions …), for the summary. */
  readonly walkSkips: ReadonlyMap<SkipReason, number>;
  readonly filesSeen: number;
}

export interface IndexSummary {
  readonly files: number;
  readonly indexed: number;
  readonly unchanged: number;
  readonly removed: number;
  readonly failed: number;
  readonly skipped: Record<string, number>;
  readonly chunks: Record<ChunkLevel, number>;
  readonly chunksWritten: number;
  readonly facts: number;
  readonly parseErrors: number;
  readonly flaggedForSummary: number;
  readonly durationMs: number;
}

export interface IndexerOptions {
  readonly root: string;
  readonly maxFileBytes: number;
  /** Chunks buffered before a write to the tables. */
  readonly batchChunks?: number;
  /** Summarises long functions when a model is configured. */
  readonly summarizer?: Summarizer;
}

/** Below this many files a run parses inline: starting workers would cost more than it saves. */
const INLINE_LIMIT = 24;
const DEFAULT_BATCH_CHUNKS = 4000;
/** Runs touching more files than this end with a new lexical snapshot instead of a delta line. */
const SNAPSHOT_THRESHOLD = 200;
const EMBED_BATCH = 64;

const log = getLogger('index.indexer');

export class Indexer {
  private readonly progressEmitter = new Emitter<IndexProgress>();
  readonly onProgress: Event<IndexProgress> = this.progressEmitter.event;
  /**
   * The directory units of the committed files, kept from run to run so that a save plans only
   * the folders it touched; planned again from the graph after a reload or a failed run.
   */
  private plan: DirectoryPlan | null = null;
  /** Where the store disagreed with the plan when it was made: the next run puts it right. */
  private repairs: DirectoryRepairs | null = null;

  constructor(
    private readonly options: IndexerOptions,
    private readonly store: IndexStore,
    private readonly graph: CodeGraph,
    private readonly embedder: Embedder | null,
    private readonly pool: ParsePool,
  ) {}

  /** Forgets the directory plan: the graph was loaded again (another process's commit, a rollback). */
  forgetDirectories(): void {
    this.plan = null;
    this.repairs = null;
  }

  /**
   * Plans the directory units of the committed files, if no run has yet: called while the engine
   * idles after opening, so that the first save does not plan every file.
   */
  warmDirectories(): void {
    this.plan ??= this.planFromGraph();
  }

  /**
   * The directory plan of the committed files, and once after it was made from the graph, what
   * the store holds that disagrees with it (handed to one run only).
   */
  takeDirectoryPlan(): { plan: DirectoryPlan; repairs: DirectoryRepairs | null } {
    this.plan ??= this.planFromGraph();
    const repairs = this.repairs;
    this.repairs = null;
    return { plan: this.plan, repairs };
  }

  private planFromGraph(): DirectoryPlan {
    const plan = new DirectoryPlan(this.graph.files());
    this.repairs = directoryRepairs(plan, this.store);
    return plan;
  }

  report(progress: IndexProgress): void {
    this.progressEmitter.fire(progress);
  }

  async run(plan: IndexPlan, signal?: AbortSignal): Promise<Result<IndexSummary>> {
    const lock = this.store.lock();
    if (!lock.ok) return lock;
    const started = performance.now();
    log.info('indexing_started', {
      repo_path: this.options.root,
      files_to_read: plan.tasks.length,
      files_removed: plan.removed.length,
    });
    let committed = false;
    try {
      for (const notice of await this.store.prepareWrite())
        log.warn('index_notice', { message: notice });
      const touched = [
        ...plan.tasks.map((task) => task.path),
        ...plan.removed,
        ...plan.skipped.keys(),
      ];
      if (touched.length) await this.store.beginWrite(touched);
      const run = new Run(this, plan, signal);
      const result = await run.execute();
      if (!result.ok) return result;
      committed = true;
      const summary = { ...result.value, durationMs: elapsedMs(started) };
      log.info('indexing_completed', {
        repo_path: this.options.root,
        total_chunks: summary.chunks,
        files: summary.files,
        files_indexed: summary.indexed,
        files_unchanged: summary.unchanged,
        files_removed: summary.removed,
        skipped: summary.skipped,
        facts: summary.facts,
        parse_errors: summary.parseErrors,
        total_llm_calls: this.options.summarizer?.calls ?? 0,
        total_embedding_batches: run.embeddingBatches,
        files_finished_by_workers: run.finishedByWorkers,
        vocabulary_size: this.store.lexical.vocabularySize,
        duration_ms: summary.durationMs,
      });
      return ok(summary);
    } finally {
      // a run that failed or was cancelled leaves the memory ahead of the disk: back to the commit
      try {
        if (!committed) {
          this.forgetDirectories();
          await this.store.prepareWrite();
        }
      } finally {
        lock.value.dispose();
      }
    }
  }

  /** Used by a run: the pieces it works with. */
  get parts() {
    return {
      options: this.options,
      store: this.store,
      graph: this.graph,
      embedder: this.embedder,
      pool: this.pool,
    };
  }
}

/** What a run remembers of each file's outcome: not its chunks, facts or vectors, which are written. */
type OutcomeRecord =
  | { readonly kind: 'indexed' | 'unchanged' | 'failed'; readonly path: string }
  | { readonly kind: 'skipped'; readonly path: string; readonly reason: SkipReason };

/** One execution of a plan. */
class Run {
  embeddingBatches = 0;
  /** Files whose terms a parse worker counted (and vectors it embedded) instead of this thread. */
  finishedByWorkers = 0;
  private readonly outcomes: OutcomeRecord[] = [];
  private readonly entries = new Map<string, FileEntry | null>();
  /** Every fact of the run, for the graph once parsing is done: held as the graph holds facts. */
  private readonly newFacts: PendingFacts;
  /** Written documents, for the delta line of a small run; a run large enough for a snapshot drops them. */
  private writtenLexical: LexicalDocument[] | null = [];
  private readonly rewrittenPaths = new Set<string>();
  private pendingChunks: Chunk[] = [];
  private pendingVectors = new Map<string, Float32Array>();
  private pendingLexical: LexicalDocument[] = [];
  private pendingFacts: CodeFact[] = [];
  /** Writes of full batches, one after another, while parsing goes on. */
  private flushes: Promise<void> = Promise.resolve();
  /**
   * Directory unit of each file as planned before parsing, stamped on file chunks written while
   * parsing goes on; planned at the first such write (a small run writes only once, at the end).
   */
  private plannedUnitOf: Map<string, string> | null = null;
  /** The directory units as committed, taken before the graph changes (see rebuildDirectories). */
  private readonly directories: { plan: DirectoryPlan; repairs: DirectoryRepairs | null };
  private chunksWritten = 0;
  private parseErrors = 0;
  private flagged = 0;

  constructor(
    private readonly indexer: Indexer,
    private readonly plan: IndexPlan,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.directories = indexer.takeDirectoryPlan();
    this.newFacts = indexer.parts.graph.pending();
  }

  async execute(): Promise<Result<Omit<IndexSummary, 'durationMs'>>> {
    const { store, graph } = this.indexer.parts;
    const parsed = await this.timed('parse', () => this.parseAll());
    if (!parsed.ok) return parsed;

    for (const file of this.plan.removed) this.entries.set(file, null);
    for (const [file, reason] of this.plan.skipped) {
      this.entries.set(file, null);
      this.logSkip(file, reason);
    }
    const noLongerChunked = this.outcomes
      .filter((outcome) => outcome.kind === 'skipped' || outcome.kind === 'failed')
      .map((outcome) => outcome.path);
    const removedPaths = [...this.plan.removed, ...this.plan.skipped.keys(), ...noLongerChunked];
    // the last, partial batch waits for the directory chunks, to be written with them at once
    await this.timed('write_chunks', async () => {
      await store.removeFiles(removedPaths);
      removedPaths.forEach((file) => this.rewrittenPaths.add(file));
      await this.flushes;
    });

    this.indexer.report({ stage: 'facts', done: 0, total: 1 });
    const graphChange = await this.timed('facts_graph', async () =>
      graph.update(this.rewrittenPaths, this.newFacts.take()),
    );
    const directories = await this.timed('directories', () =>
      this.rebuildDirectories(graphChange.changedTargets),
    );
    this.indexer.report({ stage: 'facts', done: 1, total: 1 });

    const embedded = await this.timed('embed_directories', () =>
      this.embedMissing(directories.chunks),
    );
    if (!embedded.ok) return embedded;

    this.indexer.report({ stage: 'write', done: 0, total: 1 });
    await this.timed('write_facts', async () => {
      await this.write(this.takePending(), directories.unitOf, {
        removedIds: directories.removedIds,
        chunks: directories.chunks,
        vectors: embedded.value,
        lexical: directories.lexical,
      });
    });
    // every row of the run is in the tables: their indexes build in LanceDB's threads while this
    // thread writes the lexical snapshot, and the commit names them
    const indexing = this.indexTables();
    const large = this.snapshotDue();
    try {
      await this.timed('write_lexical', () =>
        store.persistLexical(
          [...this.rewrittenPaths, ...directories.lexicalRemoved],
          large ? [] : [...(this.writtenLexical ?? []), ...directories.lexical],
          large,
        ),
      );
    } finally {
      // a failed run rolls the tables back: not while an index is still being made on them
      await indexing;
    }
    await this.timed('commit', () => store.commit(this.entries));
    await this.timed('maintain', () => store.maintain());
    this.indexer.report({ stage: 'write', done: 1, total: 1 });

    return ok(this.summary(this.plan.removed.length));
  }

  /**
   * The tables' indexes, made before the commit so that it names them. A failure is logged and
   * left to the store's maintenance after the commit, which tries again: the run's rows are
   * committed either way.
   */
  private indexTables(): Promise<void> {
    const { store } = this.indexer.parts;
    return this.timed('index_tables', () => store.indexTables()).catch((cause: unknown) => {
      log.warn('table_indexes_deferred', { error: describeError(cause) });
    });
  }

  /** Runs one stage of the run and logs how long it took. */
  private async timed<T>(stage: string, work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      log.info('index_stage_completed', { stage, duration_ms: elapsedMs(started) });
    }
  }

  /** Reads and parses every planned file, flushing chunks to the store as batches fill. */
  private async parseAll(): Promise<Result<void>> {
    const { options, store, pool } = this.indexer.parts;
    const tasks = this.plan.tasks;
    const inline = tasks.length <= INLINE_LIMIT;
    let done = 0;
    {
      const runs = tasks.map(async (planned) => {
        const task: FileTask = {
          root: options.root,
          path: planned.path,
          language: planned.language,
          maxFileBytes: options.maxFileBytes,
          previousHash: store.manifest.files[planned.path]?.hash ?? null,
        };
        if (this.signal?.aborted) return;
        log.info('file_parse_started', { file_path: planned.path, language: planned.language });
        const outcome = await pool.run(task, inline);
        if (this.signal?.aborted) return;
        await this.accept(outcome, planned);
        this.indexer.report({
          stage: 'parse',
          done: ++done,
          total: tasks.length,
          path: planned.path,
        });
      });
      await Promise.all(runs);
    }
    // the rest of the run, where its memory peaks, needs no worker
    if (!inline) await pool.release();
    if (this.signal?.aborted)
      return fail(
        'cancelled',
        'Indexing was cancelled; the index will finish the remaining files next time.',
      );
    return ok(undefined);
  }

  private async accept(
    outcome: FileOutcome,
    planned: { size: number; mtimeMs: number },
  ): Promise<void> {
    this.outcomes.push(
      outcome.kind === 'skipped'
        ? { kind: 'skipped', path: outcome.path, reason: outcome.reason }
        : { kind: outcome.kind, path: outcome.path },
    );
    const entry = (fields: Partial<FileEntry>): FileEntry => ({
      hash: null,
      size: planned.size,
      mtimeMs: planned.mtimeMs,
      language: null,
      skipped: null,
      chunks: 0,
      ...fields,
    });
    switch (outcome.kind) {
      case 'unchanged': {
        const previous = this.indexer.parts.store.manifest.files[outcome.path]!;
        this.entries.set(outcome.path, {
          ...previous,
          size: planned.size,
          mtimeMs: planned.mtimeMs,
        });
        return;
      }
      case 'skipped':
        this.logSkip(outcome.path, outcome.reason, outcome.detail);
        this.entries.set(
          outcome.path,
          entry({ hash: outcome.hash ?? null, skipped: outcome.reason }),
        );
        this.rewrittenPaths.add(outcome.path);
        return;
      case 'failed':
        log.error('indexing_file_failed', {
          file_path: outcome.path,
          phase: 'chunking',
          error: outcome.error,
        });
        this.entries.set(outcome.path, entry({ skipped: 'failed' }));
        this.rewrittenPaths.add(outcome.path);
        return;
      case 'indexed': {
        if (outcome.lexical) this.finishedByWorkers++;
        // before anything is buffered: a batch taken meanwhile must hold whole files
        const vectors = await this.vectorsOf(outcome);
        this.logParsed(outcome);
        this.entries.set(
          outcome.path,
          entry({ hash: outcome.hash, language: outcome.language, chunks: outcome.chunks.length }),
        );
        this.rewrittenPaths.add(outcome.path);
        // one at a time: a generated file can hold more definitions than a call takes arguments
        for (const fact of outcome.facts) {
          this.newFacts.add(fact);
          this.pendingFacts.push(fact);
        }
        for (const chunk of outcome.chunks) this.pendingChunks.push(chunk);
        outcome.chunks.forEach((chunk, i) => {
          const vector = vectors?.[i];
          if (vector) this.pendingVectors.set(chunk.id, vector);
        });
        for (const document of lexicalDocumentsOf(outcome)) this.pendingLexical.push(document);
        if (
          this.pendingChunks.length >=
          (this.indexer.parts.options.batchChunks ?? DEFAULT_BATCH_CHUNKS)
        )
          await this.flush();
        return;
      }
    }
  }

  /**
   * The chunks' vectors: as the worker embedded them, or embedded here when it left that to this
   * thread (a static model only; a transformer embeds whole batches as they are written).
   */
  private async vectorsOf(
    outcome: Extract<FileOutcome, { kind: 'indexed' }>,
  ): Promise<readonly Float32Array[] | null> {
    const { embedder } = this.indexer.parts;
    if (outcome.vectors || embedder?.kind !== 'static') return outcome.vectors;
    return embedder.embed(outcome.chunks.map(embeddingText));
  }

  /** Queues the buffered chunks for writing. */
  private flush(): Promise<void> {
    const batch = this.takePending();
    this.plannedUnitOf ??= unitOfFiles(this.expectedFiles());
    const planned = this.plannedUnitOf;
    const unitOf = (file: string) => planned.get(file) ?? null;
    this.flushes = this.flushes.then(() => this.write(batch, unitOf));
    return this.flushes;
  }

  /** The buffered chunks, facts and vectors, handed over at once and never shared. */
  private takePending(): PendingBatch {
    const batch = {
      chunks: this.pendingChunks,
      vectors: this.pendingVectors,
      lexical: this.pendingLexical,
      facts: this.pendingFacts,
    };
    this.pendingChunks = [];
    this.pendingVectors = new Map();
    this.pendingLexical = [];
    this.pendingFacts = [];
    return batch;
  }

  /**
   * Writes one batch, with the directory chunks when it is the last: the files' old rows go
   * first, so rewriting a file is idempotent. File chunks point at the directory unit `unitOf`
   * names.
   */
  private async write(
    batch: PendingBatch,
    unitOf: (file: string) => string | null,
    directories?: DirectoryWrite,
  ): Promise<void> {
    const { store, embedder } = this.indexer.parts;
    if (!batch.chunks.length && !directories) return;
    const { chunks, vectors: summaryVectors, lexical } = await this.summarize(batch);
    const paths = [...new Set(chunks.map((chunk) => chunk.filePath!))];
    let vectors: Map<string, Float32Array> | null = summaryVectors;
    if (embedder?.kind === 'transformer' && chunks.length) {
      vectors = await this.embed(chunks);
      this.embeddingBatches += Math.ceil(chunks.length / EMBED_BATCH);
    } else if (embedder && chunks.length) {
      this.embeddingBatches++;
      log.info('embedding_batch', {
        batch_number: this.embeddingBatches,
        batch_size: chunks.length,
        model: embedder.id,
        level: 'all',
      });
    }
    const linked = chunks.map((chunk) =>
      chunk.level === 'file' ? { ...chunk, parentDirectoryId: unitOf(chunk.filePath!) } : chunk,
    );
    if (directories && embedder) {
      vectors ??= new Map();
      for (const [id, vector] of directories.vectors ?? []) vectors.set(id, vector);
    }
    await store.apply({
      files: paths,
      chunkIds: directories
        ? [...directories.removedIds, ...directories.chunks.map((chunk) => chunk.id)]
        : [],
      chunks: directories ? [...linked, ...directories.chunks] : linked,
      vectors: embedder ? vectors : null,
      lexical: directories ? [...lexical, ...directories.lexical] : lexical,
      facts: batch.facts,
    });
    if (this.snapshotDue()) this.writtenLexical = null;
    else if (this.writtenLexical)
      for (const document of lexical) this.writtenLexical.push(document);
    this.chunksWritten += chunks.length;
  }

  /** Runs rewriting many files end with a lexical snapshot; the set only grows, so once due, due. */
  private snapshotDue(): boolean {
    return this.rewrittenPaths.size > SNAPSHOT_THRESHOLD;
  }

  /**
   * Long functions summarised (when a model is configured): their vectors embed the summary, and
   * their lexical terms hold the summary's words as well as the code's.
   */
  private async summarize(batch: PendingBatch) {
    const { summarizer } = this.indexer.parts.options;
    const { embedder } = this.indexer.parts;
    if (
      !summarizer ||
      !batch.chunks.some((chunk) => chunk.originalLineCount !== null && !chunk.isSummarized)
    )
      return batch;
    this.indexer.report({
      stage: 'summarize',
      done: 0,
      total: batch.chunks.filter((chunk) => chunk.originalLineCount !== null).length,
    });
    const chunks = await summarizer.summarize(batch.chunks, this.signal);
    const summarized = chunks.filter(
      (chunk, i) => chunk.isSummarized && !batch.chunks[i]!.isSummarized,
    );
    if (!summarized.length) return batch;
    const vectors = new Map(batch.vectors);
    if (embedder && embedder.kind !== 'transformer') {
      const embedded = await embedder.embed(summarized.map(embeddingText));
      summarized.forEach((chunk, i) => vectors.set(chunk.id, embedded[i]!));
    }
    const replaced = new Map(
      summarized.map((chunk) => {
        const terms = lexicalTerms({ ...chunk, content: `${chunk.content}\n${chunk.fullContent}` });
        return [chunk.id, lexicalDocument(chunk.id, chunk.filePath!, 'function', terms)] as const;
      }),
    );
    const lexical = batch.lexical.map((document) => replaced.get(document.chunkId) ?? document);
    return { chunks, vectors, lexical };
  }

  /** The files the index will hold after this run, as far as the plan knows before reading them. */
  private expectedFiles(): string[] {
    const { store } = this.indexer.parts;
    const gone = new Set([...this.plan.removed, ...this.plan.skipped.keys()]);
    const files = new Set(
      Object.entries(store.manifest.files)
        .filter(([file, entry]) => !entry.skipped && !gone.has(file))
        .map(([file]) => file),
    );
    for (const task of this.plan.tasks) files.add(task.path);
    return [...files];
  }

  /**
   * The directory chunks this run changes: the plan takes the files that came or went, and the
   * units whose text or place may differ are built again — those covering or above a rewritten
   * file, those that appeared or now sit under another unit, and those defining what the run's
   * calls now reach more or less often (their most used names). A unit whose chunk comes out as
   * stored is left as it is. Where the store disagreed with the plan when it was made (see
   * directoryRepairs), this run puts it right.
   */
  private async rebuildDirectories(changedTargets: ReadonlySet<string>): Promise<{
    chunks: Chunk[];
    removedIds: string[];
    lexical: LexicalDocument[];
    lexicalRemoved: string[];
    unitOf: (file: string) => string | null;
  }> {
    const { store, graph } = this.indexer.parts;
    const { plan, repairs } = this.directories;
    const entering: string[] = [];
    const leaving: string[] = [];
    for (const file of this.rewrittenPaths) {
      const held = graph.factsInFile(file).length > 0;
      if (held && !plan.has(file)) entering.push(file);
      else if (!held && plan.has(file)) leaving.push(file);
    }
    const change = plan.update(entering, leaving);
    const candidates = new Map<string, DirectoryUnit>();
    const consider = (directory: string | null) => {
      const unit = directory === null ? undefined : plan.unit(directory);
      if (unit) candidates.set(unit.directory, unit);
    };
    for (const unit of [...change.added, ...change.reparented]) consider(unit.directory);
    for (const file of this.rewrittenPaths) {
      consider(plan.unitOf(file));
      ancestors(file).forEach(consider);
    }
    for (const id of changedTargets) {
      const fact = graph.fact(id);
      if (fact && fact.parent === null && fact.kind !== 'module') consider(plan.unitOf(fact.path));
    }
    const removed = new Set(
      change.removed.filter((unit) => !plan.unit(unit.directory)).map((unit) => unit.directory),
    );
    for (const directory of repairs?.missing ?? []) consider(directory);
    for (const directory of repairs?.stray ?? []) if (!plan.unit(directory)) removed.add(directory);
    const chunks = [...candidates.values()]
      .sort(byVisitOrder)
      .map((unit) =>
        buildDirectoryChunk(unit, graph, this.unitChunkId(plan.enclosingUnit(unit.directory))),
      )
      .filter((chunk) => !this.storedAlready(chunk));
    const removedIds = [...removed].map(directoryChunkId).filter((id) => store.catalog.has(id));
    const lexical = chunks.map((chunk) => {
      const terms = lexicalTerms(chunk);
      return lexicalDocument(chunk.id, directoryLexicalKey(chunk.id), 'directory', terms);
    });
    const unitOf = (file: string) => this.unitChunkId(plan.unitOf(file));
    // the files whose unit may have changed: all of them when batches were written with the
    // units planned before parsing
    const moved = this.plannedUnitOf
      ? store.filesWithChunks()
      : new Set([
          ...[...change.removed, ...change.added].flatMap((unit) => unit.files),
          ...(repairs?.misplaced ?? []),
        ]);
    const relinked = await this.relinkFileChunks(moved, unitOf);
    log.info('directories_updated', {
      units_considered: candidates.size,
      units_written: chunks.length,
      units_removed: removedIds.length,
      file_chunks_relinked: relinked,
    });
    return {
      chunks,
      removedIds,
      lexical,
      lexicalRemoved: [...removedIds, ...chunks.map((chunk) => chunk.id)].map(directoryLexicalKey),
      unitOf,
    };
  }

  private unitChunkId(directory: string | null): string | null {
    return directory === null ? null : directoryChunkId(directory);
  }

  /** Whether the store holds this directory chunk as it is: same text, place and language. */
  private storedAlready(chunk: Chunk): boolean {
    const { store } = this.indexer.parts;
    const meta = store.catalog.get(chunk.id);
    if (
      !meta ||
      meta.parentDirectoryId !== chunk.parentDirectoryId ||
      meta.language !== chunk.language ||
      meta.directoryPath !== chunk.directoryPath
    )
      return false;
    const stored = store.texts.read(chunk.id);
    return stored.ok && stored.value === chunk.content;
  }

  /**
   * File chunks (of `files`) whose directory unit differs from the one they carry are pointed at
   * the right one (those of files still waiting in the last batch are written with the right one).
   * Returns how many were.
   */
  private async relinkFileChunks(
    files: Iterable<string>,
    unitOf: (file: string) => string | null,
  ): Promise<number> {
    const { store } = this.indexer.parts;
    const waiting = new Set(this.pendingChunks.map((chunk) => chunk.filePath));
    const moves = new Map<string | null, string[]>();
    for (const file of files) {
      const meta = store.catalog.get(chunkId(file, null, null, 'file'));
      if (!meta || waiting.has(file)) continue;
      const wanted = unitOf(file);
      if (meta.parentDirectoryId === wanted) continue;
      const ids = moves.get(wanted) ?? [];
      ids.push(meta.id);
      moves.set(wanted, ids);
    }
    let relinked = 0;
    for (const [parent, ids] of moves) {
      await store.tables.setParentDirectory(ids, parent);
      for (const id of ids)
        store.catalog.set(id, { ...store.catalog.get(id)!, parentDirectoryId: parent });
      relinked += ids.length;
    }
    return relinked;
  }

  /** Vectors for chunks that have none yet (directory chunks; everything with a transformer model). */
  private async embedMissing(
    chunks: readonly Chunk[],
  ): Promise<Result<Map<string, Float32Array> | null>> {
    const { embedder } = this.indexer.parts;
    this.indexer.report({ stage: 'embed', done: 0, total: chunks.length });
    if (!embedder) {
      this.indexer.report({ stage: 'embed', done: chunks.length, total: chunks.length });
      return ok(null);
    }
    const vectors = await this.embed(chunks);
    this.indexer.report({ stage: 'embed', done: chunks.length, total: chunks.length });
    return ok(vectors);
  }

  private async embed(chunks: readonly Chunk[]): Promise<Map<string, Float32Array>> {
    const { embedder } = this.indexer.parts;
    const vectors = new Map<string, Float32Array>();
    if (!embedder) return vectors;
    for (let i = 0; i < chunks.length; i += EMBED_BATCH) {
      const batch = chunks.slice(i, i + EMBED_BATCH);
      const started = performance.now();
      const embedded = await embedder.embed(batch.map(embeddingText));
      batch.forEach((chunk, j) => vectors.set(chunk.id, embedded[j]!));
      if (embedder.kind === 'transformer') {
        log.info('embedding_batch', {
          batch_number: ++this.embeddingBatches,
          batch_size: batch.length,
          model: embedder.id,
          latency_ms: elapsedMs(started),
        });
        this.indexer.report({ stage: 'embed', done: i + batch.length, total: chunks.length });
      }
    }
    return vectors;
  }

  private logParsed(outcome: Extract<FileOutcome, { kind: 'indexed' }>): void {
    const produced: Record<ChunkLevel, number> = { directory: 0, file: 0, class: 0, function: 0 };
    for (const chunk of outcome.chunks) produced[chunk.level]++;
    for (const anomaly of outcome.anomalies) {
      if (anomaly.kind === 'missing') {
        log.warn('tree_sitter_missing_node', {
          file_path: outcome.path,
          byte_offset: anomaly.byteOffset,
          line: anomaly.line,
          expected_type: anomaly.nodeType,
          surrounding_text: anomaly.context,
        });
      } else {
        log.warn('tree_sitter_error_node', {
          file_path: outcome.path,
          byte_offset: anomaly.byteOffset,
          line: anomaly.line,
          node_type: anomaly.nodeType,
          surrounding_text: anomaly.context,
        });
      }
    }
    for (const flagged of outcome.flagged) {
      log.info('function_flagged_for_summarization', {
        file_path: outcome.path,
        function_name: flagged.functionName,
        line_count: flagged.lineCount,
      });
    }
    this.parseErrors += outcome.anomalies.length;
    this.flagged += outcome.flagged.length;
    log.info('file_parse_completed', {
      file_path: outcome.path,
      language: outcome.language,
      chunks_produced: produced,
      error_node_count: outcome.anomalies.length,
      duration_ms: Math.round(outcome.parseMs * 100) / 100,
    });
  }

  private logSkip(file: string, reason: SkipReason, detail?: string): void {
    if (reason === 'unreadable')
      log.warn('file_unreadable', { file_path: file, error: detail ?? null });
    else log.debug('file_skipped', { file_path: file, reason });
  }

  private summary(removed: number): Omit<IndexSummary, 'durationMs'> {
    const { store, graph } = this.indexer.parts;
    const skipped: Record<string, number> = Object.fromEntries(this.plan.walkSkips);
    for (const reason of this.plan.skipped.values()) skipped[reason] = (skipped[reason] ?? 0) + 1;
    for (const outcome of this.outcomes)
      if (outcome.kind === 'skipped') skipped[outcome.reason] = (skipped[outcome.reason] ?? 0) + 1;
    // the lexical segment holds one document per chunk, counted per level as it changes
    const chunks = Object.fromEntries(
      CHUNK_LEVELS.map((level) => [level, store.lexical.levelStats(level).documents]),
    ) as Record<ChunkLevel, number>;
    const count = (kind: OutcomeRecord['kind']) =>
      this.outcomes.filter((outcome) => outcome.kind === kind).length;
    return {
      // each indexed file has one file chunk (the store checks this when it opens)
      files: chunks.file,
      indexed: count('indexed'),
      unchanged: this.plan.filesSeen - count('indexed') - count('skipped') - count('failed'),
      removed,
      failed: count('failed'),
      skipped,
      chunks,
      chunksWritten: this.chunksWritten,
      facts: graph.size,
      parseErrors: this.parseErrors,
      flaggedForSummary: this.flagged,
    };
  }
}

/** What a store holds that a directory plan made from the graph disagrees with. */
interface DirectoryRepairs {
  /** Units with no chunk. */
  readonly missing: readonly string[];
  /** Folders with a directory chunk and no unit. */
  readonly stray: readonly string[];
  /** Files whose file chunk points at another unit than the one covering them. */
  readonly misplaced: readonly string[];
}

/** Checks every directory chunk and file chunk of the store against `plan`. */
function directoryRepairs(plan: DirectoryPlan, store: IndexStore): DirectoryRepairs {
  const missing = plan
    .units()
    .map((unit) => unit.directory)
    .filter((directory) => !store.catalog.has(directoryChunkId(directory)));
  const stray: string[] = [];
  for (const id of store.directoryChunkIds()) {
    const directory = store.catalog.get(id)?.directoryPath;
    if (directory !== undefined && !plan.unit(directory)) stray.push(directory);
  }
  const misplaced: string[] = [];
  for (const file of store.filesWithChunks()) {
    const meta = store.catalog.get(chunkId(file, null, null, 'file'));
    const unit = plan.unitOf(file);
    if (meta && meta.parentDirectoryId !== (unit === null ? null : directoryChunkId(unit)))
      misplaced.push(file);
  }
  return { missing, stray, misplaced };
}

interface PendingBatch {
  readonly chunks: Chunk[];
  readonly vectors: Map<string, Float32Array>;
  readonly lexical: LexicalDocument[];
  readonly facts: CodeFact[];
}

/** The directory chunks a run rebuilt (and those it dropped), written with its last batch. */
interface DirectoryWrite {
  readonly removedIds: readonly string[];
  readonly chunks: readonly Chunk[];
  readonly vectors: ReadonlyMap<string, Float32Array> | null;
  readonly lexical: readonly LexicalDocument[];
}

/**
 * One lexical entry per chunk, in chunk order: unpacked from what the worker counted, or counted
 * here when it left that to this thread.
 */
export function lexicalDocumentsOf(
  outcome: Extract<FileOutcome, { kind: 'indexed' }>,
): LexicalDocument[] {
  if (outcome.lexical)
    return outcome.lexical.map((terms, i) =>
      lexicalDocument(terms.chunkId, outcome.path, outcome.chunks[i]?.level ?? 'function', terms),
    );
  return outcome.chunks.map((chunk) => {
    const { counts, nameTerms } = chunkTerms(chunk);
    return { chunkId: chunk.id, path: outcome.path, level: chunk.level, terms: counts, nameTerms };
  });
}

function lexicalDocument(
  chunkId: string,
  key: string,
  level: ChunkLevel,
  terms: LexicalTerms,
): LexicalDocument {
  return { chunkId, path: key, level, terms: unpackTerms(terms), nameTerms: terms.nameTerms };
}

function unitOfFiles(files: Iterable<string>): Map<string, string> {
  return unitMap(planDirectoryUnits(files));
}

/** Each file's directory chunk id. */
function unitMap(units: readonly DirectoryUnit[]): Map<string, string> {
  const unitOf = new Map<string, string>();
  for (const unit of units)
    for (const file of unit.files) unitOf.set(file, directoryChunkId(unit.directory));
  return unitOf;
}
