import { createHash } from 'node:crypto';
import { createReadStream, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { elapsedMs, getLogger } from '../log/logger';
import { PARSER_VERSION, type Chunk, type CodeFact } from '../model';
import { writeFileAtomic } from '../util/atomic-file';
import type { Disposable } from '../util/event';
import { describeError, fail, ok, type Result } from '../util/result';
import { spareSlots } from '../util/spare';
import { ChunkCatalog } from './catalog';
import { Strings } from './columns';
import { LexicalIndex, type LexicalDocument } from './lexical';
import { acquireWriteLock, lockHolder } from './lock';
import {
  emptyManifest,
  readManifest,
  truncateFilesLog,
  SCHEMA_VERSION,
  writeManifest,
  type BuildRecord,
  type FileChanges,
  type FileEntry,
  type Manifest,
  type ManifestRead,
} from './manifest';
import { Tables, type ChunkMeta, type FactGatherer } from './tables';
import { COUNTS_SUFFIX, TextsFile, type StoredText } from './texts';

/**
 * One workspace folder's index on disk, and its in-memory mirrors (chunk catalog, lexical
 * segment).
 *
 * Layout: manifest.json (the commit point), index.lock, pending.json (the journal of a write in
 * progress), lance/ (chunks and facts tables), lexical-<generation>.bin (an immutable snapshot)
 * and lexical-<generation>.delta (changes since, appended), texts-<generation>.bin (the chunks'
 * texts, appended, read by offset) and texts-<generation>.bin.counts (their token counts, which
 * the search saves beside them), nearest-words.bin (the search's rows of the index's words),
 * calls.bin (the graph's resolved calls, for the facts of one commit), vectors.bin (the search's
 * rows of the chunks' vectors, for the chunks of one commit).
 *
 * Only the holder of the lock changes anything on disk, repairs included. The manifest names
 * what is committed: the LanceDB version of each table, the lexical snapshot generation and how
 * many bytes of its delta log count, and the counts all of them must show. A reader (a process
 * opening the store while another writes) checks out exactly that, and never repairs or wipes.
 * A writer rolls an interrupted write back to the committed state (table versions restored,
 * delta truncated); only a store it cannot read is rebuilt, with a notice saying why.
 */
export interface StoreEmbedding {
  readonly modelId: string;
  readonly dimensions: number;
}

/**
 * One write of a run: every row of `files` and the chunks `chunkIds` go, then the new chunks
 * (with their vectors and lexical documents) and facts come in. Rows the store does not hold are
 * not deleted, so a first index writes no deletions and each write adds one version per table.
 */
export interface StoreChange {
  readonly files: readonly string[];
  readonly chunkIds: readonly string[];
  readonly chunks: readonly Chunk[];
  readonly vectors: ReadonlyMap<string, Float32Array> | null;
  readonly lexical: readonly LexicalDocument[];
  readonly facts: readonly CodeFact[];
}

export interface StoreOpenOptions {
  readonly root: string;
  readonly embedding: StoreEmbedding | null;
  readonly embeddingReason: string | null;
  /**
   * Where each load's facts are gathered for the graph to take (`takeFacts`); a plain list when
   * absent. The engine's graph gives its own, which packs the facts' call sites as they are read.
   */
  readonly gatherFacts?: () => FactGatherer;
}

/** A writer may repair and rebuild; a reader only loads what is committed. */
type Role = 'writer' | 'reader';

/**
 * Past this many versions of a table, old ones are cleaned up and fragments compacted. A save
 * writes two versions per table and a first index one per batch, so this comes with about as many
 * saves as the small fragments that also trigger it (see Tables.needsOptimize).
 */
const MAX_TABLE_VERSIONS = 120;
/** Growth of the tables' folder since the last compaction, as a share, past which they are compacted. */
const GROWTH_SHARE = 0.25;
/** Deleted chunk rows, as a share of the live ones, past which the tables are compacted. */
const DELETED_SHARE = 0.25;
/** The delta log is folded into a new snapshot when it outgrows this share of the snapshot … */
const DELTA_SHARE = 0.5;
/** … but a small index keeps appending until the log reaches this size. */
const MIN_DELTA_BYTES = 256 * 1024;
/** Files a store may hold besides its own; anything else means the folder is not a store. */
const STORE_ENTRY =
  /^(manifest\.json|pending\.json|index\.lock|lance|lexical-\d+\.(bin|delta)|texts-\d+\.bin(\.counts)?|files-\d+\.(json|delta)|nearest-words\.bin|calls\.bin|vectors\.bin|.*\.tmp-.*)$/;
/** Where the search keeps the nearest words' rows: one file for every generation (see SavedWordRows). */
export const NEAREST_WORDS_FILE = 'nearest-words.bin';
/** Where the graph keeps its resolved calls, with the key of the facts they hold for (see SavedCalls). */
export const SAVED_CALLS_FILE = 'calls.bin';
/** Where the search keeps the chunks' vectors, with the key of the commit they hold for (see SavedVectors). */
export const SAVED_VECTORS_FILE = 'vectors.bin';
/** The store's files that a newer generation replaces. */
const GENERATION_FILE =
  /^(lexical-\d+\.(bin|delta)|texts-\d+\.bin(\.counts)?|files-\d+\.(json|delta))$/;
const FOREIGN_OK = new Set(['models', 'calibration.json', 'summaries', 'summaries.json']);

const log = getLogger('store');
/** Where a reader with nothing committed to read keeps its empty tables: nothing is written. */
const IN_MEMORY = 'memory://';

/** What a reader or writer loaded: the committed manifest and the data it names. */
interface Loaded {
  readonly manifest: Manifest;
  readonly tables: Tables;
  readonly lexical: LexicalIndex;
  readonly texts: TextsFile;
  readonly catalog: ChunkCatalog;
  /** Every fact, read while checking the store: the engine's graph is built from them. */
  readonly facts: readonly CodeFact[];
}

export class IndexStore {
  readonly catalog = new ChunkCatalog();
  /**
   * The catalog's chunk ids by file, so a write touches only the files it changes. Arrays: a Set
   * per file held about 38 MB at 100k files (92k files, 951k chunks), arrays about 11 MB.
   */
  private readonly chunksOfFile = new Map<string, string[]>();
  private readonly directoryChunks = new Set<string>();
  /** Chunk rows deleted since this store last compacted its tables (their bytes are still on disk). */
  private deletedRows = 0;
  /** The size of each file of the tables seen so far (see folderBytes). */
  private readonly tableFileSizes = new Map<string, number>();
  private readonly reloadHandlers: (() => Promise<void>)[] = [];
  /** Set by `beginWrite`, cleared by `commit`: the memory holds changes the disk does not. */
  private dirty = false;
  /** Bytes of the current delta log, committed or appended by this writer since. */
  private deltaBytes: number;
  /** The manifest file's identity when loaded, to notice another process's commit cheaply. */
  private manifestStamp: string | null;

  private constructor(
    readonly directory: string,
    private readonly options: StoreOpenOptions,
    private manifestState: Manifest,
    private tablesState: Tables,
    private lexicalState: LexicalIndex,
    private textsState: TextsFile,
    catalog: ChunkCatalog,
    private loadedFacts: readonly CodeFact[],
    stamp: string | null,
  ) {
    this.catalog.takeOver(catalog);
    this.indexCatalog();
    this.deltaBytes = manifestState.lexicalDeltaBytes;
    this.manifestStamp = stamp;
  }

  get manifest(): Readonly<Manifest> {
    return this.manifestState;
  }

  get tables(): Tables {
    return this.tablesState;
  }

  get lexical(): LexicalIndex {
    return this.lexicalState;
  }

  /** The chunks' texts, read by offset (see TextsFile). */
  get texts(): TextsFile {
    return this.textsState;
  }

  static async open(
    directory: string,
    options: StoreOpenOptions,
  ): Promise<Result<{ store: IndexStore; notices: string[] }>> {
    const foreign = await foreignContent(directory);
    if (foreign)
      return fail(
        'invalid_input',
        `${directory} is not an index folder (it holds ${foreign}); choose an empty or new folder for the index.`,
      );
    // a stamp that cannot be taken only means the manifest is read again under the lock
    const stamp = await fileStamp(manifestPath(directory)).catch((cause: unknown) => {
      log.warn('manifest_stamp_failed', { directory, error: describeError(cause) });
      return null;
    });
    const read = await readManifest(manifestPath(directory));
    if (read.kind === 'ok' && path.resolve(read.manifest.root) !== path.resolve(options.root))
      return fail(
        'invalid_input',
        `The index folder ${directory} holds the index of ${read.manifest.root}, not ${options.root}; choose another folder for the index (it was left as it is).`,
      );
    try {
      await fs.mkdir(directory, { recursive: true });
    } catch (cause) {
      return fail(
        'io_error',
        `Could not create the index folder ${directory}: ${describeError(cause)}`,
      );
    }
    const lock = lockHolder(lockPath(directory)) ? null : acquireWriteLock(lockPath(directory));
    if (!lock?.ok) return ok(await IndexStore.openAsReader(directory, options));
    try {
      return ok(await IndexStore.openAsWriter(directory, options, { stamp, read }));
    } catch (cause) {
      return fail(
        'index_corrupt',
        `The index in ${directory} could not be rebuilt: ${describeError(cause)}`,
      );
    } finally {
      lock.value.dispose();
    }
  }

  /**
   * Under the lock: loads the committed state, rolling back what an interrupted write left.
   * `earlier` is the manifest as read before the lock was taken: used again when no commit has
   * replaced the file since (at 100k files a read costs about a second).
   */
  private static async openAsWriter(
    directory: string,
    options: StoreOpenOptions,
    earlier?: { stamp: string | null; read: ManifestRead },
  ): Promise<{ store: IndexStore; notices: string[] }> {
    const notices: string[] = [];
    const stamp = await fileStamp(manifestPath(directory));
    const read =
      earlier && stamp !== null && earlier.stamp === stamp
        ? earlier.read
        : await readManifest(manifestPath(directory));
    let reason: string | null = null;
    if (read.kind === 'missing' && (await hasStoreFiles(directory)))
      reason = 'An index build that never finished was cleared';
    if (read.kind === 'corrupt')
      reason = `The index in ${directory} could not be read (${read.reason}) and is being rebuilt`;
    if (read.kind === 'ok') {
      const incompatible = incompatibility(read.manifest, options);
      if (incompatible) reason = `${incompatible}: rebuilding the index`;
      else {
        try {
          const loaded = await loadCommitted(directory, read.manifest, 'writer', notices, options);
          return { store: await IndexStore.writer(directory, options, loaded, stamp), notices };
        } catch (cause) {
          reason = `The index in ${directory} was damaged (${describeError(cause)}) and is being rebuilt`;
          log.warn('index_store_corrupt', { directory, error: describeError(cause) });
        }
      }
    }
    if (reason) {
      notices.push(`${reason}.`);
      log.warn('index_store_rebuilt', { directory, reason });
      await wipe(directory);
    }
    const loaded = await startEmpty(options, directory);
    return { store: await IndexStore.writer(directory, options, loaded, null), notices };
  }

  /**
   * A writer's store over `loaded`: its lexical index spills into the store's folder during long
   * writes (see LexicalIndex.spillInto), and it knows what its upkeep reads.
   */
  private static async writer(
    directory: string,
    options: StoreOpenOptions,
    loaded: Loaded,
    stamp: string | null,
  ): Promise<IndexStore> {
    const store = IndexStore.from(directory, options, loaded, stamp);
    store.lexical.spillInto(directory);
    await store.learnUpkeep();
    return store;
  }

  /**
   * What a write's upkeep (maintain) reads of the tables, learned while the writer opens rather
   * than by its first save (about 40 ms of it at 10k files): the tables' oldest versions and the
   * size of each of their files.
   */
  private async learnUpkeep(): Promise<void> {
    await this.tables.learnOldestVersions();
    await folderBytes(path.join(this.directory, 'lance'), this.tableFileSizes);
  }

  /**
   * While another process writes: the committed state as it is, or nothing with a notice when it
   * cannot be read. A commit (or cleanup) between reading the manifest and the data is retried.
   */
  private static async openAsReader(
    directory: string,
    options: StoreOpenOptions,
  ): Promise<{ store: IndexStore; notices: string[] }> {
    const notices: string[] = [];
    let problem = 'no index has been committed yet';
    for (let attempt = 0; attempt < 3; attempt++) {
      const stamp = await fileStamp(manifestPath(directory));
      const read = await readManifest(manifestPath(directory));
      if (read.kind !== 'ok') {
        if (read.kind === 'corrupt') problem = `it could not be read (${read.reason})`;
        break;
      }
      const incompatible = incompatibility(read.manifest, options);
      if (incompatible) {
        problem = incompatible.toLowerCase();
        break;
      }
      try {
        const loaded = await loadCommitted(directory, read.manifest, 'reader', notices, options);
        return { store: IndexStore.from(directory, options, loaded, stamp), notices };
      } catch (cause) {
        problem = `it is damaged (${describeError(cause)})`;
        if ((await fileStamp(manifestPath(directory))) === stamp) break;
      }
    }
    notices.push(
      `The index in ${directory} is being updated by another process and ${problem}: answering from an empty index until that process commits.`,
    );
    log.warn('index_store_unreadable', { directory, problem });
    const loaded = await startEmpty(options, null);
    return { store: IndexStore.from(directory, options, loaded, null), notices };
  }

  private static from(
    directory: string,
    options: StoreOpenOptions,
    loaded: Loaded,
    stamp: string | null,
  ): IndexStore {
    return new IndexStore(
      directory,
      options,
      loaded.manifest,
      loaded.tables,
      loaded.lexical,
      loaded.texts,
      loaded.catalog,
      loaded.facts,
      stamp,
    );
  }

  /** The facts read when the store was (re)loaded, handed over once to build the graph from. */
  takeFacts(): readonly CodeFact[] {
    const facts = this.loadedFacts;
    this.loadedFacts = [];
    return facts;
  }

  /** Called after the store reloaded another process's commit (or rolled back a failed write). */
  onReload(handler: () => Promise<void>): void {
    this.reloadHandlers.push(handler);
  }

  /** Whether another live process holds the write lock now. */
  writerElsewhere(): boolean {
    const holder = lockHolder(lockPath(this.directory));
    return !!holder && holder.pid !== process.pid;
  }

  /**
   * Loads a newer commit by another process, if there is one (a cheap stat otherwise). Never
   * writes: what it loads is exactly what the manifest names.
   */
  async refresh(): Promise<boolean> {
    if (this.dirty) return false;
    const stamp = await fileStamp(manifestPath(this.directory));
    if (stamp === this.manifestStamp || stamp === null) return false;
    const read = await readManifest(manifestPath(this.directory));
    if (read.kind !== 'ok' || read.manifest.generation === this.manifestState.generation) {
      this.manifestStamp = stamp;
      return false;
    }
    if (incompatibility(read.manifest, this.options)) return false;
    try {
      const loaded = await loadCommitted(this.directory, read.manifest, 'reader', [], this.options);
      await this.replace(loaded, stamp);
      log.info('index_store_reloaded', {
        directory: this.directory,
        generation: read.manifest.generation,
      });
      return true;
    } catch (cause) {
      log.warn('index_store_reload_failed', {
        directory: this.directory,
        error: describeError(cause),
      });
      return false;
    }
  }

  lock(): Result<Disposable> {
    return acquireWriteLock(lockPath(this.directory));
  }

  /**
   * Called by the lock holder before a write: the memory is brought to the committed state on
   * disk (another process's commit loaded, a failed write of this one or a killed one of another
   * rolled back). A store that cannot be read then is rebuilt from empty, with a notice.
   */
  async prepareWrite(): Promise<string[]> {
    const stamp = await fileStamp(manifestPath(this.directory));
    // a store opened as a reader (the lock was taken then) reloads as a writer: its texts file
    // was opened read-only
    const writable = this.textsState.forWriting;
    // the manifest this store loaded or wrote last is still there: no need to read it again
    if (
      writable &&
      !this.dirty &&
      stamp !== null &&
      stamp === this.manifestStamp &&
      this.manifestState.tableVersions &&
      this.tables.location !== IN_MEMORY
    ) {
      const notices: string[] = [];
      await rollBack(this.directory, this.manifestState, this.tables, notices);
      return notices;
    }
    const read = await readManifest(manifestPath(this.directory));
    const current =
      writable &&
      !this.dirty &&
      stamp === this.manifestStamp &&
      read.kind === 'ok' &&
      read.manifest.generation === this.manifestState.generation;
    if (current && read.kind === 'ok' && this.tables.location !== IN_MEMORY) {
      const notices: string[] = [];
      if (this.manifestState.tableVersions)
        await rollBack(this.directory, read.manifest, this.tables, notices);
      return notices;
    }
    const untouched =
      writable &&
      read.kind === 'missing' &&
      !this.dirty &&
      !this.manifestState.tableVersions &&
      this.tables.location !== IN_MEMORY &&
      !this.catalog.size &&
      (await this.tables.counts()).chunks === 0;
    if (untouched) return [];
    const reopened = await IndexStore.openAsWriter(this.directory, this.options);
    const store = reopened.store;
    await this.replace(
      {
        manifest: store.manifestState,
        tables: store.tablesState,
        lexical: store.lexicalState,
        texts: store.textsState,
        catalog: store.catalog,
        facts: store.takeFacts(),
      },
      store.manifestStamp,
    );
    return reopened.notices;
  }

  /**
   * Marks files about to be rewritten in a small journal beside the manifest, so whoever takes
   * the lock next knows a write was cut short (the rollback itself needs only the manifest).
   */
  async beginWrite(paths: readonly string[]): Promise<void> {
    this.dirty = true;
    await writeFileAtomic(
      pendingJournalPath(this.directory),
      JSON.stringify({ generation: this.manifestState.generation, files: [...new Set(paths)] }),
    );
  }

  /** Drops every chunk, fact and lexical entry of these files (directory chunks are by id). */
  async removeFiles(paths: readonly string[]): Promise<void> {
    await this.apply({
      files: paths,
      chunkIds: [],
      chunks: [],
      vectors: null,
      lexical: [],
      facts: [],
    });
  }

  async addChunks(
    chunks: readonly Chunk[],
    vectors: ReadonlyMap<string, Float32Array> | null,
    lexical: readonly LexicalDocument[],
  ): Promise<void> {
    await this.apply({ files: [], chunkIds: [], chunks, vectors, lexical, facts: [] });
  }

  /** Applies one change to the tables and the memory (see StoreChange). */
  async apply(change: StoreChange): Promise<void> {
    if (
      !change.files.length &&
      !change.chunkIds.length &&
      !change.chunks.length &&
      !change.facts.length
    )
      return;
    this.dirty = true;
    const removedIds = [
      ...change.files.flatMap((file) => [...(this.chunksOfFile.get(file) ?? [])]),
      ...change.chunkIds,
    ];
    await this.tables.replace({
      files: change.files.filter((file) => this.chunksOfFile.has(file)),
      chunkIds: change.chunkIds.filter((id) => this.catalog.has(id)),
      chunks: change.chunks,
      vectors: change.vectors,
      facts: change.facts,
    });
    this.textsState.write(removedIds, change.chunks.map(storedText));
    this.lexical.removePaths([...change.files, ...change.chunkIds.map(directoryLexicalKey)]);
    const before = this.catalog.size;
    for (const file of change.files) {
      for (const id of this.chunksOfFile.get(file) ?? []) this.catalog.delete(id);
      this.chunksOfFile.delete(file);
    }
    for (const id of change.chunkIds) this.untrack(id);
    this.deletedRows += before - this.catalog.size;
    this.lexical.add(change.lexical);
    for (const chunk of change.chunks) {
      const meta = metaOf(chunk);
      const known = this.catalog.has(meta.id);
      this.catalog.set(meta.id, meta);
      this.track(meta.id, meta.filePath, known);
    }
  }

  async replaceDirectoryChunks(
    removedIds: readonly string[],
    chunks: readonly Chunk[],
    vectors: ReadonlyMap<string, Float32Array> | null,
    lexical: readonly LexicalDocument[],
  ): Promise<void> {
    await this.apply({
      files: [],
      chunkIds: [...removedIds, ...chunks.map((chunk) => chunk.id)],
      chunks,
      vectors,
      lexical,
      facts: [],
    });
  }

  async addFacts(facts: readonly CodeFact[]): Promise<void> {
    await this.apply({ files: [], chunkIds: [], chunks: [], vectors: null, lexical: [], facts });
  }

  /** The files the store holds chunks of. */
  filesWithChunks(): IterableIterator<string> {
    return this.chunksOfFile.keys();
  }

  /** The ids of the directory chunks (those of no file). */
  directoryChunkIds(): IterableIterator<string> {
    return this.directoryChunks.values();
  }

  private indexCatalog(): void {
    this.chunksOfFile.clear();
    this.directoryChunks.clear();
    // the catalog holds each id once, so none can be filed already
    this.catalog.forEachPlace((id, filePath) => this.track(id, filePath, false));
  }

  /**
   * Files the chunk `id` under its file (or among the directory chunks), once: `mayBeFiled` says
   * whether it may be filed there already (the catalog held it before), and only then is the
   * file's list searched for it, so filing a file's chunks stays linear in their number.
   */
  private track(id: string, filePath: string | null, mayBeFiled: boolean): void {
    if (!filePath) {
      this.directoryChunks.add(id);
      return;
    }
    const ids = this.chunksOfFile.get(filePath);
    if (!ids) this.chunksOfFile.set(filePath, [id]);
    else if (!mayBeFiled || !ids.includes(id)) ids.push(id);
  }

  private untrack(id: string): void {
    const file = this.catalog.filePathOf(id);
    this.catalog.delete(id);
    this.directoryChunks.delete(id);
    const ids = file ? this.chunksOfFile.get(file) : undefined;
    const at = ids ? ids.indexOf(id) : -1;
    if (at >= 0) ids!.splice(at, 1);
    if (ids && !ids.length) this.chunksOfFile.delete(file!);
  }

  /**
   * Persists the lexical changes of this batch: a delta line, or a new snapshot generation when
   * asked for (large runs) or when the delta has outgrown its share of the snapshot or removed
   * chunks pile up. The manifest commits either; a crash keeps the old.
   */
  async persistLexical(
    removedPaths: readonly string[],
    added: readonly LexicalDocument[],
    snapshot: boolean,
  ): Promise<void> {
    const snapshotBytes = await fileSize(
      lexicalSnapshotPath(this.directory, this.manifestState.lexicalGeneration),
    );
    const compact =
      snapshot ||
      this.lexical.tombstoneCount > this.lexical.size / 4 ||
      this.deltaBytes > Math.max(MIN_DELTA_BYTES, snapshotBytes * DELTA_SHARE);
    if (compact) {
      const generation = this.manifestState.lexicalGeneration + 1;
      await this.lexical.writeSnapshot(lexicalSnapshotPath(this.directory, generation));
      this.pendingGeneration = generation;
      this.deltaBytes = 0;
      log.info('vocabulary_persisted', {
        vocabulary_size: this.lexical.vocabularySize,
        file_path: lexicalSnapshotPath(this.directory, generation),
      });
    } else if (removedPaths.length || added.length) {
      this.deltaBytes = await LexicalIndex.appendDelta(
        lexicalDeltaPath(this.directory, this.manifestState.lexicalGeneration),
        removedPaths,
        added,
        this.deltaBytes,
      );
    }
  }

  /** The snapshot generation this write started, committed with the manifest. */
  private pendingGeneration: number | null = null;

  /**
   * The commit point: the files' new entries, the table versions, the lexical generation and
   * delta length, and the counts they all show (checked against each other first).
   */
  async commit(
    entries: ReadonlyMap<string, FileEntry | null>,
    embedding?: { embedding: StoreEmbedding | null; reason: string | null },
  ): Promise<void> {
    const counts = await this.tables.counts();
    if (counts.chunks !== this.catalog.size || this.lexical.size !== this.catalog.size)
      throw new Error(
        `the write left ${counts.chunks} chunk rows, ${this.catalog.size} in memory and ${this.lexical.size} lexical entries`,
      );
    // in place, the commit appending only these entries: until it is done the store is dirty, and
    // the next write reads the committed entries back
    const files = this.manifestState.files;
    for (const [file, entry] of entries) {
      if (entry) files[file] = entry;
      else delete files[file];
    }
    const lexicalGeneration = this.pendingGeneration ?? this.manifestState.lexicalGeneration;
    const textsGeneration = this.persistTexts();
    await this.writeCommit(
      {
        ...this.manifestState,
        files,
        generation: this.manifestState.generation + 1,
        tableVersions: await this.tables.versions(),
        lexicalGeneration,
        lexicalSnapshotHash:
          this.pendingGeneration === null
            ? this.manifestState.lexicalSnapshotHash
            : await hashFile(lexicalSnapshotPath(this.directory, lexicalGeneration)),
        dataHashes: await hashDataFiles(this.directory, this.manifestState.dataHashes),
        lexicalDeltaBytes: this.deltaBytes,
        textsGeneration,
        textsBytes: this.textsState.bytes,
        counts: { ...counts, lexical: this.lexical.size },
        ...(embedding ? { embedding: embedding.embedding, embeddingReason: embedding.reason } : {}),
      },
      entries,
    );
    this.pendingGeneration = null;
    this.dirty = false;
    await fs.rm(pendingJournalPath(this.directory), { force: true });
    await this.removeStrayLexicalFiles();
  }

  /**
   * Readies the texts file for a commit: rewritten into the next generation once superseded
   * texts pile up, and flushed to disk. Returns the generation the commit names.
   */
  private persistTexts(): number {
    let generation = this.manifestState.textsGeneration;
    if (this.textsState.wasteful()) {
      generation++;
      this.textsState.rewriteTo(textsPath(this.directory, generation));
      log.info('texts_rewritten', { chunks: this.textsState.size, bytes: this.textsState.bytes });
    }
    this.textsState.sync();
    return generation;
  }

  /**
   * Records the options the index was built with (see BuildRecord): under the lock, on a
   * committed store only, without a new generation (the content is the same).
   */
  async recordBuild(build: BuildRecord): Promise<void> {
    if (!this.manifestState.tableVersions) return;
    const lock = this.lock();
    if (!lock.ok) {
      log.warn('build_record_skipped', { directory: this.directory, reason: lock.error.message });
      return;
    }
    try {
      await this.writeCommit({ ...this.manifestState, build });
    } finally {
      lock.value.dispose();
    }
  }

  /**
   * By the lock holder once a write's rows are all in the tables, before its commit: large tables
   * get their indexes, new table versions the commit then names. The work runs in LanceDB's own
   * threads, so the caller's thread is free meanwhile (for the lexical snapshot).
   */
  async indexTables(): Promise<void> {
    if (await this.tables.ensureIndexes())
      log.info('table_indexes_created', { directory: this.directory });
  }

  /**
   * After a commit, by the lock holder: large tables get the indexes indexTables did not make (it
   * failed, or was not asked); once writes have piled up versions or small fragments, the tables
   * are compacted, the compacted versions committed, and older versions and files no version
   * names are removed. Readers that still hold an older version reload the new commit when a
   * read fails.
   */
  async maintain(): Promise<void> {
    if (await this.tables.ensureIndexes()) {
      // the indexes are new table versions: uncommitted, the next write would roll them back
      // (reporting a write cut short) and create them again
      await this.writeCommit({
        ...this.manifestState,
        generation: this.manifestState.generation + 1,
        tableVersions: await this.tables.versions(),
        dataHashes: await hashDataFiles(this.directory, this.manifestState.dataHashes),
      });
      log.info('table_indexes_created', { directory: this.directory });
    }
    const versions = await this.tables.versionCount();
    const bytes = await folderBytes(path.join(this.directory, 'lance'), this.tableFileSizes);
    const baseline = this.manifestState.compactedBytes;
    // Writes since the last compaction (superseded rows, versions, small fragments) have grown
    // the tables by a share of their size, or a large change deleted much: compacting now
    // costs in proportion to what was written since. A first index deleted nothing.
    const grown = baseline !== undefined && bytes > baseline * (1 + GROWTH_SHARE);
    const deletedMuch = this.deletedRows > this.catalog.size * DELETED_SHARE;
    if (
      versions <= MAX_TABLE_VERSIONS &&
      !grown &&
      !deletedMuch &&
      !(await this.tables.needsOptimize())
    ) {
      // a first index (or a store from before this was recorded): its size is the baseline
      if (baseline === undefined)
        await this.writeCommit({ ...this.manifestState, compactedBytes: bytes });
      return;
    }
    const started = performance.now();
    await this.tables.compact();
    this.deletedRows = 0;
    await this.writeCommit({
      ...this.manifestState,
      generation: this.manifestState.generation + 1,
      tableVersions: await this.tables.versions(),
      dataHashes: await hashDataFiles(this.directory, this.manifestState.dataHashes),
    });
    await this.tables.cleanup(this.manifestState.tableVersions!);
    // the optimize behind the cleanup may have added versions (same rows): they are committed
    await this.writeCommit({
      ...this.manifestState,
      generation: this.manifestState.generation + 1,
      tableVersions: await this.tables.versions(),
      dataHashes: await hashDataFiles(this.directory, this.manifestState.dataHashes),
      compactedBytes: await folderBytes(path.join(this.directory, 'lance'), this.tableFileSizes),
    });
    log.info('table_versions_cleaned', {
      directory: this.directory,
      versions_before: versions,
      duration_ms: elapsedMs(started),
    });
  }

  close(): void {
    this.tables.close();
    this.textsState.close();
    this.lexicalState.close();
  }

  private async writeCommit(manifest: Manifest, changes?: FileChanges): Promise<void> {
    this.manifestState = await writeManifest(manifestPath(this.directory), manifest, changes);
    this.manifestStamp = await fileStamp(manifestPath(this.directory));
  }

  /** Swaps in another loaded state, keeping the catalog others hold a reference to. */
  private async replace(loaded: Loaded, stamp: string | null): Promise<void> {
    const old = this.tablesState;
    const oldTexts = this.textsState;
    const oldLexical = this.lexicalState;
    this.manifestState = loaded.manifest;
    this.tablesState = loaded.tables;
    this.lexicalState = loaded.lexical;
    this.textsState = loaded.texts;
    this.catalog.takeOver(loaded.catalog);
    this.indexCatalog();
    this.deletedRows = 0;
    this.loadedFacts = loaded.facts;
    this.deltaBytes = loaded.manifest.lexicalDeltaBytes;
    this.pendingGeneration = null;
    this.manifestStamp = stamp;
    this.dirty = false;
    if (old !== loaded.tables) old.close();
    if (oldTexts !== loaded.texts) oldTexts.close();
    if (oldLexical !== loaded.lexical) oldLexical.close();
    for (const handler of this.reloadHandlers) await handler();
  }

  private async removeStrayLexicalFiles(): Promise<void> {
    const generation = this.manifestState.lexicalGeneration;
    const keep = new Set([
      path.basename(lexicalSnapshotPath(this.directory, generation)),
      path.basename(lexicalDeltaPath(this.directory, generation)),
      path.basename(textsPath(this.directory, this.manifestState.textsGeneration)),
      path.basename(textsPath(this.directory, this.manifestState.textsGeneration)) + COUNTS_SUFFIX,
      `files-${this.manifestState.filesLog.generation}.json`,
      `files-${this.manifestState.filesLog.generation}.delta`,
    ]);
    for (const name of await fs.readdir(this.directory)) {
      if (GENERATION_FILE.test(name) && !keep.has(name))
        await fs.rm(path.join(this.directory, name), { force: true });
    }
  }
}

/** The options a store's index was built with, without opening it; null when none are recorded. */
export async function readBuildRecord(directory: string): Promise<BuildRecord | null> {
  const read = await readManifest(manifestPath(directory));
  return read.kind === 'ok' ? (read.manifest.build ?? null) : null;
}

/**
 * The committed state named by `manifest`. A writer first rolls back what a write cut short
 * left after it; a reader checks out the committed versions and reads only the committed part
 * of the delta log. Either way, the counts must match the manifest's.
 */
async function loadCommitted(
  directory: string,
  manifest: Manifest,
  role: Role,
  notices: string[],
  options: StoreOpenOptions,
): Promise<Loaded> {
  const started = performance.now();
  const phases = new PhaseTimes();
  const committed = manifest.tableVersions;
  if (!committed) throw new Error('the manifest names no table versions');
  const tables = await Tables.open(
    path.join(directory, 'lance'),
    manifest.embedding?.dimensions ?? null,
    false,
  );
  phases.mark('tables');
  let lexical: LexicalIndex | null = null;
  try {
    if (role === 'writer') await rollBack(directory, manifest, tables, notices);
    else await tables.checkout(committed);
    phases.mark(role === 'writer' ? 'roll_back' : 'check_out');
    await verifyDataFiles(directory, manifest.dataHashes);
    phases.mark('table_files_verified');
    // chunk ids, paths and names repeat across the lexical index, the catalog and the facts: one
    // copy of each
    const strings = new Strings();
    lexical = await readLexical(directory, manifest, strings);
    phases.mark('lexical');
    const counts = await tables.counts();
    const catalog = new ChunkCatalog();
    // room for the saves to come, so the first ones do not grow the columns
    catalog.reserve(counts.chunks + spareSlots(counts.chunks));
    const readCatalog = async () => {
      for await (const batch of tables.chunkMetadata(strings))
        for (const meta of batch) catalog.set(meta.id, meta);
    };
    // the two tables are read side by side: LanceDB decodes one table's next batch on its own
    // threads while this one takes in the other's. Both reads end before anything else happens,
    // even when one fails: closing the tables during a read fails in LanceDB. Reading every fact
    // proves the facts table readable, and the graph needs them anyway.
    const [catalogRead, factsRead] = await Promise.allSettled([
      readCatalog(),
      tables.allFacts(strings, options.gatherFacts?.()),
    ]);
    if (catalogRead.status === 'rejected') throw catalogRead.reason;
    if (factsRead.status === 'rejected') throw factsRead.reason;
    const facts = factsRead.value;
    phases.mark('chunk_metadata_and_facts');
    checkCounts(manifest, { ...counts, facts: facts.length }, catalog, lexical);
    const texts = TextsFile.load(
      textsPath(directory, manifest.textsGeneration),
      manifest.textsBytes,
      catalog,
      role === 'writer',
    );
    phases.mark('texts');
    if (role === 'writer')
      await removeStrayFiles(directory, manifest).catch((cause: unknown) => {
        texts.close();
        throw cause;
      });
    log.info('index_store_opened', {
      directory,
      role,
      files: Object.keys(manifest.files).length,
      chunks: catalog.size,
      duration_ms: elapsedMs(started),
      phases_ms: phases.durations,
    });
    return { manifest, tables, lexical, texts, catalog, facts };
  } catch (cause) {
    tables.close();
    lexical?.close();
    throw cause;
  }
}

/**
 * Puts the disk back to the committed state: table versions written after it are undone (their
 * content, deletions included, no longer visible) and the delta log cut to its committed length.
 */
async function rollBack(
  directory: string,
  manifest: Manifest,
  tables: Tables,
  notices: string[],
): Promise<void> {
  const journal = await readPendingJournal(directory);
  const restored = await tables.restore(manifest.tableVersions!);
  const delta = lexicalDeltaPath(directory, manifest.lexicalGeneration);
  const size = await fileSize(delta);
  if (size < manifest.lexicalDeltaBytes)
    throw new Error(
      `the lexical delta log holds ${size} bytes, ${manifest.lexicalDeltaBytes} were committed`,
    );
  let truncated = size > manifest.lexicalDeltaBytes;
  if (truncated) await fs.truncate(delta, manifest.lexicalDeltaBytes);
  // a texts file shorter than committed is left for loading to find damaged
  const texts = textsPath(directory, manifest.textsGeneration);
  const textsCut = (await fileSize(texts)) > manifest.textsBytes;
  if (textsCut) await fs.truncate(texts, manifest.textsBytes);
  if (await truncateFilesLog(directory, manifest)) truncated = true;
  if (restored || truncated || textsCut || journal) {
    const files = journal === 'damaged' ? null : (journal?.length ?? null);
    log.warn('index_recovered_interrupted_write', {
      files,
      tables_restored: restored,
      lexical_truncated: truncated,
      texts_truncated: textsCut,
    });
    notices.push(
      `An index update that was cut short was rolled back to the last commit${files ? ` (${files} files are indexed again)` : ''}.`,
    );
  }
  await fs.rm(pendingJournalPath(directory), { force: true });
}

async function readLexical(
  directory: string,
  manifest: Manifest,
  strings: Strings,
): Promise<LexicalIndex> {
  const snapshot = lexicalSnapshotPath(directory, manifest.lexicalGeneration);
  if (manifest.lexicalGeneration > 0 && (await hashFile(snapshot)) !== manifest.lexicalSnapshotHash)
    throw new Error('the lexical snapshot does not match its committed checksum');
  const lexical =
    manifest.lexicalGeneration > 0
      ? await LexicalIndex.readSnapshot(snapshot, strings)
      : new LexicalIndex();
  await lexical
    .replayDelta(
      lexicalDeltaPath(directory, manifest.lexicalGeneration),
      manifest.lexicalDeltaBytes,
    )
    .catch((cause: unknown) => {
      lexical.close();
      throw cause;
    });
  return lexical;
}

/**
 * The parts of a store must agree with the manifest and with each other: its row counts, one
 * file chunk per indexed file and a lexical entry per chunk. A store that does not is damaged.
 */
function checkCounts(
  manifest: Manifest,
  counts: { chunks: number; facts: number },
  catalog: ChunkCatalog,
  lexical: LexicalIndex,
): void {
  const expected = manifest.counts;
  if (counts.chunks !== expected.chunks)
    throw new Error(
      `the chunks table holds ${counts.chunks} rows, ${expected.chunks} were committed`,
    );
  if (counts.facts !== expected.facts)
    throw new Error(`the facts table holds ${counts.facts} rows, ${expected.facts} were committed`);
  if (lexical.size !== expected.lexical)
    throw new Error(
      `the lexical index holds ${lexical.size} chunks, ${expected.lexical} were committed`,
    );
  if (catalog.size !== counts.chunks)
    throw new Error(`the chunks table lists ${catalog.size} of its ${counts.chunks} rows`);
  const indexed = Object.values(manifest.files).filter((entry) => !entry.skipped).length;
  const fileChunks = catalog.countOf('file');
  if (fileChunks !== indexed)
    throw new Error(`the chunks table holds ${fileChunks} files, the manifest ${indexed}`);
}

/** A new store's state; `directory` null for a reader's, which is never written. */
async function startEmpty(options: StoreOpenOptions, directory: string | null): Promise<Loaded> {
  return {
    manifest: {
      ...emptyManifest(options.root, PARSER_VERSION),
      embedding: options.embedding,
      embeddingReason: options.embeddingReason,
    },
    tables: await Tables.open(
      directory ? path.join(directory, 'lance') : IN_MEMORY,
      options.embedding?.dimensions ?? null,
      true,
    ),
    lexical: new LexicalIndex(),
    texts: directory ? TextsFile.create(textsPath(directory, 0)) : TextsFile.empty(),
    catalog: new ChunkCatalog(),
    facts: [],
  };
}

/** Directory chunks live in the lexical segment under a key of their own, not a file path. */
export function directoryLexicalKey(chunkId: string): string {
  return `dir:${chunkId}`;
}

function incompatibility(manifest: Manifest, options: StoreOpenOptions): string | null {
  if (manifest.schemaVersion !== SCHEMA_VERSION)
    return `The index format changed (version ${manifest.schemaVersion} → ${SCHEMA_VERSION})`;
  if (manifest.parserVersion !== PARSER_VERSION)
    return 'The parser changed since this index was built';
  const before = manifest.embedding
    ? `${manifest.embedding.modelId} (${manifest.embedding.dimensions}d)`
    : 'none';
  const now = options.embedding
    ? `${options.embedding.modelId} (${options.embedding.dimensions}d)`
    : 'none';
  if (before !== now) return `The embedding model changed (${before} → ${now})`;
  return null;
}

function storedText(chunk: Chunk): StoredText {
  // the search reads a summarised function's raw body
  return { id: chunk.id, text: chunk.fullContent ?? chunk.content };
}

function metaOf(chunk: Chunk): ChunkMeta {
  const { content: _content, fullContent: _fullContent, ...meta } = chunk;
  return meta;
}

const Journal = z.object({ generation: z.number(), files: z.array(z.string()) });

/**
 * The files a write had begun on when it was cut short: null when none was, 'damaged' when the
 * journal itself was torn (harmless: the rollback goes by the manifest alone).
 */
async function readPendingJournal(directory: string): Promise<string[] | 'damaged' | null> {
  let text: string;
  try {
    text = await fs.readFile(pendingJournalPath(directory), 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw cause;
  }
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    log.warn('pending_journal_damaged', { error: describeError(cause) });
  }
  const parsed = Journal.safeParse(json);
  return parsed.success ? parsed.data.files : 'damaged';
}

/** Clears a store's own files (never the lock, the models or anything else in the folder). */
async function wipe(directory: string): Promise<void> {
  for (const name of await fs.readdir(directory).catch(() => [] as string[])) {
    if (name === 'index.lock' || !STORE_ENTRY.test(name)) continue;
    await fs.rm(path.join(directory, name), { recursive: true, force: true });
  }
}

async function hasStoreFiles(directory: string): Promise<boolean> {
  const names = await fs.readdir(directory).catch(() => [] as string[]);
  return names.some((name) => name !== 'index.lock' && STORE_ENTRY.test(name));
}

/** Files left in the store folder by a write that never committed (temporary files). */
async function removeStrayFiles(directory: string, manifest: Manifest): Promise<void> {
  const keep = new Set([
    path.basename(lexicalSnapshotPath(directory, manifest.lexicalGeneration)),
    path.basename(lexicalDeltaPath(directory, manifest.lexicalGeneration)),
    path.basename(textsPath(directory, manifest.textsGeneration)),
    path.basename(textsPath(directory, manifest.textsGeneration)) + COUNTS_SUFFIX,
    `files-${manifest.filesLog.generation}.json`,
    `files-${manifest.filesLog.generation}.delta`,
  ]);
  for (const name of await fs.readdir(directory)) {
    const stray = GENERATION_FILE.test(name) ? !keep.has(name) : name.includes('.tmp-');
    if (stray) await fs.rm(path.join(directory, name), { force: true, recursive: true });
  }
}

/** What in a folder given for a store is not a store's: null when it is one, or empty. */
async function foreignContent(directory: string): Promise<string | null> {
  const names = await fs.readdir(directory).catch(() => [] as string[]);
  if (names.includes('manifest.json')) return null;
  const foreign = names.filter((name) => !STORE_ENTRY.test(name) && !FOREIGN_OK.has(name));
  if (!foreign.length) return null;
  return foreign.length === 1 ? foreign[0]! : `${foreign[0]} and ${foreign.length - 1} more`;
}

/** A file's identity and change time: an atomic rename gives the manifest a new one. */
async function fileStamp(file: string): Promise<string | null> {
  try {
    const stat = await fs.stat(file);
    return `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw cause;
  }
}

/**
 * Bytes of every file under `folder`, each file's size read once into `sizes`: LanceDB writes each
 * of its files once, under a new name (data, deletions, manifests, transactions, indexes), so a
 * listing reads the sizes of only the names it has not seen (a save's few files, where reading
 * every size took 25 ms a save at 10k files).
 */
async function folderBytes(folder: string, sizes: Map<string, number>): Promise<number> {
  const files = await filesUnder(folder);
  const unseen = files.filter((file) => !sizes.has(file));
  const read = await Promise.all(unseen.map(fileSize));
  unseen.forEach((file, i) => sizes.set(file, read[i]!));
  const present = new Set(files);
  for (const file of sizes.keys()) if (!present.has(file)) sizes.delete(file);
  return files.reduce((total, file) => total + sizes.get(file)!, 0);
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await fs.readdir(folder, { withFileTypes: true }).catch(() => []);
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = path.join(folder, entry.name);
      return entry.isDirectory() ? filesUnder(full) : [full];
    }),
  );
  return nested.flat();
}

async function fileSize(file: string): Promise<number> {
  try {
    return (await fs.stat(file)).size;
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw cause;
  }
}

/** LanceDB's immutable files whose content the manifest vouches for: data and deletions. */
async function tableFiles(directory: string): Promise<string[]> {
  const lance = path.join(directory, 'lance');
  const out: string[] = [];
  for (const table of await fs.readdir(lance).catch(() => [] as string[])) {
    for (const folder of ['data', '_deletions']) {
      const names = await fs.readdir(path.join(lance, table, folder)).catch(() => [] as string[]);
      for (const name of names) if (!name.includes('.tmp')) out.push(`${table}/${folder}/${name}`);
    }
  }
  return out.sort();
}

/** The hashes of the files present now: known ones kept, new ones read once, gone ones dropped. */
async function hashDataFiles(
  directory: string,
  known: Readonly<Record<string, string>>,
): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  for (const file of await tableFiles(directory))
    hashes[file] = known[file] ?? (await hashFile(path.join(directory, 'lance', file)));
  return hashes;
}

/**
 * Every committed data file still on disk must hash as it did when written: LanceDB itself does
 * not notice bytes changed inside a column, and would answer from them. (A file that is gone is
 * left to LanceDB, which fails reading it if the committed version needs it.)
 */
async function verifyDataFiles(
  directory: string,
  hashes: Readonly<Record<string, string>>,
): Promise<void> {
  for (const [file, hash] of Object.entries(hashes)) {
    const full = path.join(directory, 'lance', file);
    const stamp = await fileStamp(full);
    if (stamp === null || verified.get(full) === `${stamp}:${hash}`) continue;
    if ((await hashFile(full)) !== hash)
      throw new Error(`the table file ${file} was changed after it was written`);
    verified.set(full, `${stamp}:${hash}`);
  }
}

/** How long each step of a longer operation took, in milliseconds, in the order they ran. */
class PhaseTimes {
  readonly durations: Record<string, number> = {};
  private last = performance.now();

  mark(phase: string): void {
    const now = performance.now();
    this.durations[phase] = Math.round(now - this.last);
    this.last = now;
  }
}

/**
 * Files this process has checked, by path, with their identity and hash: a reader reloading
 * after each of the writer's commits reads only the files that commit added.
 */
const verified = new Map<string, string>();

async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha1');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function manifestPath(directory: string): string {
  return path.join(directory, 'manifest.json');
}

function lockPath(directory: string): string {
  return path.join(directory, 'index.lock');
}

function pendingJournalPath(directory: string): string {
  return path.join(directory, 'pending.json');
}

function lexicalSnapshotPath(directory: string, generation: number): string {
  return path.join(directory, `lexical-${generation}.bin`);
}

function lexicalDeltaPath(directory: string, generation: number): string {
  return path.join(directory, `lexical-${generation}.delta`);
}

function textsPath(directory: string, generation: number): string {
  return path.join(directory, `texts-${generation}.bin`);
}
