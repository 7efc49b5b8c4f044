import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { elapsedMs, getLogger } from '../log/logger';
import { PARSER_VERSION, type Chunk, type CodeFact } from '../model';
import { writeFileAtomic } from '../util/atomic-file';
import type { Disposable } from '../util/event';
import { describeError, fail, ok, type Result } from '../util/result';
import { LexicalIndex, type LexicalDocument } from './lexical';
import { acquireWriteLock } from './lock';
import {
  emptyManifest,
  readManifest,
  SCHEMA_VERSION,
  writeManifest,
  type BuildRecord,
  type FileEntry,
  type Manifest,
} from './manifest';
import { Tables, type ChunkMeta } from './tables';

/**
 * One workspace folder's index on disk, and its in-memory mirrors (chunk catalog, lexical
 * segment). Opening it repairs what a crash left behind; a store it cannot use (corrupt, older
 * schema, other parser or embedding model) is rebuilt, with a notice saying why.
 *
 * Layout: manifest.json (the commit point), index.lock, lance/ (chunks and facts tables),
 * lexical-<generation>.bin (snapshot) and lexical-<generation>.delta (changes since).
 */
export interface StoreEmbedding {
  readonly modelId: string;
  readonly dimensions: number;
}

export interface StoreOpenOptions {
  readonly root: string;
  readonly embedding: StoreEmbedding | null;
  readonly embeddingReason: string | null;
}

const log = getLogger('store');

export class IndexStore {
  readonly catalog = new Map<string, ChunkMeta>();

  private constructor(
    readonly directory: string,
    private manifestState: Manifest,
    readonly tables: Tables,
    readonly lexical: LexicalIndex,
    private lexicalGeneration: number,
  ) {}

  get manifest(): Readonly<Manifest> {
    return this.manifestState;
  }

  static async open(
    directory: string,
    options: StoreOpenOptions,
  ): Promise<Result<{ store: IndexStore; notices: string[] }>> {
    const notices: string[] = [];
    try {
      await fs.mkdir(directory, { recursive: true });
    } catch (cause) {
      return fail(
        'io_error',
        `Could not create the index folder ${directory}: ${describeError(cause)}`,
      );
    }
    const read = await readManifest(manifestPath(directory));
    let manifest: Manifest | null = null;
    if (read.kind === 'corrupt')
      notices.push(
        `The index in ${directory} could not be read (${read.reason}) and is being rebuilt.`,
      );
    if (read.kind === 'ok') {
      const reason = incompatibility(read.manifest, options);
      if (reason) notices.push(`${reason}: rebuilding the index.`);
      else manifest = read.manifest;
    }
    if (!manifest) {
      await wipe(directory);
      manifest = {
        ...emptyManifest(options.root, PARSER_VERSION),
        embedding: options.embedding,
        embeddingReason: options.embeddingReason,
      };
    }
    try {
      return ok({ store: await IndexStore.load(directory, manifest), notices });
    } catch (cause) {
      notices.push(
        `The index in ${directory} was damaged (${describeError(cause)}) and is being rebuilt.`,
      );
      log.warn('index_store_corrupt', { directory, error: describeError(cause) });
      await wipe(directory);
      manifest = {
        ...emptyManifest(options.root, PARSER_VERSION),
        embedding: options.embedding,
        embeddingReason: options.embeddingReason,
      };
      try {
        return ok({ store: await IndexStore.load(directory, manifest), notices });
      } catch (again) {
        return fail(
          'index_corrupt',
          `The index in ${directory} could not be rebuilt: ${describeError(again)}`,
        );
      }
    }
  }

  private static async load(directory: string, manifest: Manifest): Promise<IndexStore> {
    const started = performance.now();
    const tables = await Tables.open(
      path.join(directory, 'lance'),
      manifest.embedding?.dimensions ?? null,
    );
    const generation = manifest.lexicalGeneration;
    const snapshot = lexicalSnapshotPath(directory, generation);
    const lexical = (await exists(snapshot))
      ? await LexicalIndex.readSnapshot(snapshot)
      : new LexicalIndex();
    await lexical.replayDelta(lexicalDeltaPath(directory, generation));
    const journal = await readPendingJournal(directory);
    const store = new IndexStore(
      directory,
      { ...manifest, pending: [...new Set([...manifest.pending, ...journal])] },
      tables,
      lexical,
      generation,
    );
    for (const meta of await tables.chunkMetadata()) store.catalog.set(meta.id, meta);
    store.checkConsistency();
    await store.recoverPending();
    await store.removeStrayLexicalFiles();
    log.info('index_store_opened', {
      directory,
      files: Object.keys(manifest.files).length,
      chunks: store.catalog.size,
      duration_ms: elapsedMs(started),
    });
    return store;
  }

  /**
   * The parts of a store must agree: one file chunk per indexed file (pending files aside) and a
   * lexical entry per chunk. A store that does not is treated as damaged and rebuilt.
   */
  private checkConsistency(): void {
    const pending = new Set(this.manifestState.pending);
    const indexed = Object.entries(this.manifestState.files).filter(
      ([file, entry]) => !entry.skipped && !pending.has(file),
    ).length;
    const fileChunks = [...this.catalog.values()].filter(
      (meta) => meta.level === 'file' && !pending.has(meta.filePath!),
    ).length;
    if (fileChunks !== indexed)
      throw new Error(`the chunks table holds ${fileChunks} files, the manifest ${indexed}`);
    if (!pending.size && this.lexical.size !== this.catalog.size) {
      throw new Error(
        `the lexical index holds ${this.lexical.size} chunks, the chunks table ${this.catalog.size}`,
      );
    }
  }

  /** Rows written for files whose batch never committed are dropped; those files are indexed again. */
  async recoverPending(): Promise<void> {
    const pending = this.manifestState.pending;
    if (!pending.length) return;
    log.warn('index_recovered_interrupted_write', { files: pending.length });
    await this.removeFiles(pending);
    const files = { ...this.manifestState.files };
    for (const file of pending) delete files[file];
    this.manifestState = { ...this.manifestState, files, pending: [] };
    await writeManifest(manifestPath(this.directory), this.manifestState);
    await fs.rm(pendingJournalPath(this.directory), { force: true });
  }

  lock(): Result<Disposable> {
    return acquireWriteLock(path.join(this.directory, 'index.lock'));
  }

  /**
   * Marks files about to be rewritten, so a crash before `commit` is repaired on the next open.
   * The mark is a small journal beside the manifest: writing the whole manifest for it would
   * cost a second write of every file's entry on each save.
   */
  async beginWrite(paths: readonly string[]): Promise<void> {
    this.manifestState = { ...this.manifestState, pending: [...new Set(paths)] };
    await writeFileAtomic(
      pendingJournalPath(this.directory),
      JSON.stringify(this.manifestState.pending),
    );
  }

  /** Drops every chunk, fact and lexical entry of these files (directory chunks are by id). */
  async removeFiles(paths: readonly string[]): Promise<void> {
    if (!paths.length) return;
    await this.tables.deleteFiles(paths);
    this.lexical.removePaths(paths);
    const gone = new Set(paths);
    for (const [id, meta] of this.catalog)
      if (meta.filePath && gone.has(meta.filePath)) this.catalog.delete(id);
  }

  async addChunks(
    chunks: readonly Chunk[],
    vectors: ReadonlyMap<string, Float32Array> | null,
    lexical: readonly LexicalDocument[],
  ): Promise<void> {
    await this.tables.addChunks(chunks, vectors);
    this.lexical.add(lexical);
    for (const chunk of chunks) this.catalog.set(chunk.id, metaOf(chunk));
  }

  async replaceDirectoryChunks(
    removedIds: readonly string[],
    chunks: readonly Chunk[],
    vectors: ReadonlyMap<string, Float32Array> | null,
    lexical: readonly LexicalDocument[],
  ): Promise<void> {
    await this.tables.deleteChunks([...removedIds, ...chunks.map((chunk) => chunk.id)]);
    this.lexical.removePaths(
      [...removedIds, ...chunks.map((chunk) => chunk.id)].map(directoryLexicalKey),
    );
    for (const id of removedIds) this.catalog.delete(id);
    await this.addChunks(chunks, vectors, lexical);
  }

  async addFacts(facts: readonly CodeFact[]): Promise<void> {
    await this.tables.addFacts(facts);
  }

  /**
   * Persists the lexical changes of this batch: a delta line for small batches, a new snapshot
   * generation for large ones (its number is committed by the manifest, so a crash keeps the old).
   */
  async persistLexical(
    removedPaths: readonly string[],
    added: readonly LexicalDocument[],
    snapshot: boolean,
  ): Promise<void> {
    if (snapshot) {
      this.lexical.compactIfNeeded();
      const generation = this.lexicalGeneration + 1;
      await this.lexical.writeSnapshot(lexicalSnapshotPath(this.directory, generation));
      this.lexicalGeneration = generation;
      log.info('vocabulary_persisted', {
        vocabulary_size: this.lexical.vocabularySize,
        file_path: lexicalSnapshotPath(this.directory, generation),
      });
    } else if (removedPaths.length || added.length) {
      await LexicalIndex.appendDelta(
        lexicalDeltaPath(this.directory, this.lexicalGeneration),
        removedPaths,
        added,
      );
    }
  }

  /** The commit point: the files' new entries, the lexical generation, no pending writes. */
  async commit(
    entries: ReadonlyMap<string, FileEntry | null>,
    embedding?: { embedding: StoreEmbedding | null; reason: string | null },
  ): Promise<void> {
    const files = { ...this.manifestState.files };
    for (const [file, entry] of entries) {
      if (entry) files[file] = entry;
      else delete files[file];
    }
    this.manifestState = {
      ...this.manifestState,
      files,
      pending: [],
      lexicalGeneration: this.lexicalGeneration,
      ...(embedding ? { embedding: embedding.embedding, embeddingReason: embedding.reason } : {}),
    };
    await writeManifest(manifestPath(this.directory), this.manifestState);
    await fs.rm(pendingJournalPath(this.directory), { force: true });
    await this.removeStrayLexicalFiles();
  }

  /** Records the options the index was built with (see BuildRecord). */
  async recordBuild(build: BuildRecord): Promise<void> {
    this.manifestState = { ...this.manifestState, build };
    await writeManifest(manifestPath(this.directory), this.manifestState);
  }

  /** Indexes large tables and compacts fragmented ones (checked after every run; cheap). */
  async maintain(): Promise<void> {
    if (await this.tables.ensureIndexes())
      log.info('table_indexes_created', { directory: this.directory });
    if (await this.tables.needsOptimize()) await this.tables.optimize();
  }

  close(): void {
    this.tables.close();
  }

  private async removeStrayLexicalFiles(): Promise<void> {
    const keep = new Set([
      path.basename(lexicalSnapshotPath(this.directory, this.lexicalGeneration)),
      path.basename(lexicalDeltaPath(this.directory, this.lexicalGeneration)),
    ]);
    for (const name of await fs.readdir(this.directory)) {
      if (/^lexical-\d+\.(bin|delta)$/.test(name) && !keep.has(name))
        await fs.rm(path.join(this.directory, name), { force: true });
    }
  }
}

/** The options a store's index was built with, without opening it; null when none are recorded. */
export async function readBuildRecord(directory: string): Promise<BuildRecord | null> {
  const read = await readManifest(manifestPath(directory));
  return read.kind === 'ok' ? (read.manifest.build ?? null) : null;
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
  if (path.resolve(manifest.root) !== path.resolve(options.root))
    return `The index belonged to ${manifest.root}`;
  const before = manifest.embedding
    ? `${manifest.embedding.modelId} (${manifest.embedding.dimensions}d)`
    : 'none';
  const now = options.embedding
    ? `${options.embedding.modelId} (${options.embedding.dimensions}d)`
    : 'none';
  if (before !== now) return `The embedding model changed (${before} → ${now})`;
  return null;
}

function metaOf(chunk: Chunk): ChunkMeta {
  const { content: _content, fullContent: _fullContent, ...meta } = chunk;
  return meta;
}

function pendingJournalPath(directory: string): string {
  return path.join(directory, 'pending.json');
}

/** The files a write had begun on when it was cut short (none when it committed). */
async function readPendingJournal(directory: string): Promise<string[]> {
  let text: string;
  try {
    text = await fs.readFile(pendingJournalPath(directory), 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw cause;
  }
  const parsed = z.array(z.string()).safeParse(JSON.parse(text));
  if (!parsed.success) throw new Error('the journal of pending writes is damaged');
  return parsed.data;
}

async function wipe(directory: string): Promise<void> {
  for (const name of await fs.readdir(directory).catch(() => [] as string[])) {
    if (name === 'index.lock' || name === 'models') continue;
    await fs.rm(path.join(directory, name), { recursive: true, force: true });
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.stat(file).then(
    () => true,
    () => false,
  );
}

function manifestPath(directory: string): string {
  return path.join(directory, 'manifest.json');
}

function lexicalSnapshotPath(directory: string, generation: number): string {
  return path.join(directory, `lexical-${generation}.bin`);
}

function lexicalDeltaPath(directory: string, generation: number): string {
  return path.join(directory, `lexical-${generation}.delta`);
}
