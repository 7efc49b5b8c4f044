import './lance-env';
import * as lancedb from '@lancedb/lancedb';
import {
  Bool,
  Field,
  FixedSizeList,
  Float32,
  Int32,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Utf8,
  vectorFromArray,
  type DataType,
} from 'apache-arrow';
import type {
  CallSite,
  Chunk,
  ChunkLevel,
  CodeFact,
  ImportBinding,
  LanguageId,
  SymbolKind,
} from '../model';
import { getLogger } from '../log/logger';
import {
  boolColumn,
  intColumn,
  NO_VALUES,
  stringColumn,
  stringListColumn,
  Strings,
} from './columns';
import { KnownVectors, type VectorBatch } from './known-vectors';
import { VECTOR_MEMORY_BYTES, vectorsFitInMemory } from './vector-memory';

/**
 * The LanceDB side of the store: a `chunks` table (metadata and, when a model is loaded, its
 * vector; the chunks' texts live in the texts file only) and a `facts` table (one row per definition, plus one 'module' row per file).
 * Rows are replaced per file, so writing the same file twice is harmless.
 */
const CHUNKS = 'chunks';
const FACTS = 'facts';
const DELETE_BATCH = 400;
/**
 * Rows given to LanceDB in one add, each add a table version and a data fragment. An indexing
 * run writes about 4,000 chunks (and their facts) at a time, each write somewhat over that: with
 * 4,000 here each took two adds, which doubled the versions and fragments a cold index left for
 * compaction to merge (at 10k files ~96 per table, past the small-fragment limit). A write now
 * goes as one add; the bound only keeps one add's Arrow copy small for a huge generated file.
 */
const ADD_BATCH = 20_000;
/** Tables this large get B-tree indexes on their path and id columns. */
const INDEXED_ROWS = 20_000;
/** Each incremental update adds a few fragments; past this many, they are compacted. */
const MAX_SMALL_FRAGMENTS = 64;
/**
 * Candidates per wanted neighbour taken from the vector index and measured again at full
 * precision. On the 951k chunks of the 100k bench store (160 neighbours, as search asks there):
 * recall 0.57 without refining, 0.89 at 5, 0.95 at 10 (~17 ms a query against 270 for the flat
 * scan); probing 40 or 80 partitions instead of LanceDB's 20 added nothing.
 */
const REFINE_FACTOR = 10;

const log = getLogger('store.tables');

const text = (name: string, nullable = false) => new Field(name, new Utf8(), nullable);
const int = (name: string, nullable = false) => new Field(name, new Int32(), nullable);
const strings = (name: string) =>
  new Field(name, new List(new Field('item', new Utf8(), true)), false);

function chunkSchema(dimensions: number | null): Schema {
  const fields: Field[] = [
    text('id'),
    text('level'),
    text('filePath', true),
    text('directoryPath'),
    text('language', true),
    text('className', true),
    text('functionName', true),
    int('startLine'),
    int('endLine'),
    text('parentDirectoryId', true),
    text('parentFileId', true),
    text('parentClassId', true),
    new Field('isSummarized', new Bool(), false),
    int('originalLineCount', true),
    text('segments', true),
  ];
  if (dimensions)
    fields.push(
      new Field(
        'vector',
        new FixedSizeList(dimensions, new Field('item', new Float32(), true)),
        false,
      ),
    );
  return new Schema(fields);
}

const factSchema = new Schema([
  text('id'),
  text('path'),
  text('language'),
  text('qualifiedName'),
  text('name'),
  text('kind'),
  text('className', true),
  text('parent', true),
  int('startLine'),
  int('endLine'),
  text('signature'),
  text('docstring', true),
  text('chunkId', true),
  text('calls'),
  strings('raises'),
  strings('errorStrings'),
  strings('mutates'),
  text('imports'),
  strings('bases'),
]);

export type { VectorBatch } from './known-vectors';

/** Chunk metadata kept in memory for search: everything but text and vector. */
export type ChunkMeta = Omit<Chunk, 'content' | 'fullContent'>;

const CHUNK_META_COLUMNS = [
  'id',
  'level',
  'filePath',
  'directoryPath',
  'language',
  'className',
  'functionName',
  'startLine',
  'endLine',
  'parentDirectoryId',
  'parentFileId',
  'parentClassId',
  'isSummarized',
  'originalLineCount',
  'segments',
];

export interface TableVersions {
  readonly chunks: number;
  readonly facts: number;
}

export class Tables {
  private readonly chunkSchema: Schema;
  /** Vectors of rows this process wrote in a save or read of a folder, read back after a save. */
  private readonly known: KnownVectors | null;

  private constructor(
    private readonly db: lancedb.Connection,
    private readonly chunks: lancedb.Table,
    private readonly facts: lancedb.Table,
    readonly dimensions: number | null,
    /** The folder the tables live in ('memory://' for a reader's empty stand-in). */
    readonly location: string,
  ) {
    this.chunkSchema = chunkSchema(dimensions);
    this.known = dimensions ? new KnownVectors(dimensions) : null;
  }

  /**
   * Opens the tables. `create` makes missing ones with the schema for `dimensions` (null: no
   * vector column): only for a writer starting a store. Otherwise a missing table is damage.
   */
  static async open(
    directory: string,
    dimensions: number | null,
    create: boolean,
  ): Promise<Tables> {
    const db = await lancedb.connect(directory);
    try {
      const names = new Set(await db.tableNames());
      const table = async (name: string, schema: Schema) => {
        if (names.has(name)) return db.openTable(name);
        if (!create) throw new Error(`the ${name} table is missing`);
        return db.createEmptyTable(name, schema);
      };
      const chunks = await table(CHUNKS, chunkSchema(dimensions));
      const facts = await table(FACTS, factSchema);
      const vector = (await chunks.schema()).fields.find((field) => field.name === 'vector');
      const storedDimensions = vector ? (vector.type as FixedSizeList).listSize : null;
      if (storedDimensions !== dimensions)
        throw new Error(
          `chunks table has ${storedDimensions ?? 'no'} vector dimensions, expected ${dimensions ?? 'none'}`,
        );
      return new Tables(db, chunks, facts, dimensions, directory);
    } catch (cause) {
      db.close();
      throw cause;
    }
  }

  /** The current version of each table (what a commit records). */
  async versions(): Promise<TableVersions> {
    return { chunks: await this.chunks.version(), facts: await this.facts.version() };
  }

  /** A reader's view: the tables as they were at a committed version, whatever came after. */
  async checkout(versions: TableVersions): Promise<void> {
    await this.changing(
      (known) => known.clear(),
      async () => {
        await this.chunks.checkout(versions.chunks);
        await this.facts.checkout(versions.facts);
      },
    );
  }

  /**
   * A writer's rollback: the latest version of each table is compared with the committed one and,
   * when a write was cut short after it, the committed content becomes the latest again.
   * Returns whether anything was rolled back.
   */
  async restore(versions: TableVersions): Promise<boolean> {
    this.indexesComplete = false;
    this.vectorIndexed = false;
    let restored = false;
    for (const [table, version] of [
      [this.chunks, versions.chunks],
      [this.facts, versions.facts],
    ] as const) {
      await table.checkoutLatest();
      if ((await table.version()) === version) continue;
      await this.changing(
        (known) => known.clear(),
        async () => {
          await table.checkout(version);
          await table.restore();
        },
      );
      restored = true;
    }
    return restored;
  }

  /**
   * One write of a run: the rows of `files` and the chunks `chunkIds` go, in one deletion per
   * table (per few hundred names), then the new rows come in: a version or two per table. The two
   * tables are written side by side (a save's four writes took ~60-85 ms one after another at
   * 10k files, ~35-40 ms two at a time).
   */
  async replace(change: {
    files: readonly string[];
    chunkIds: readonly string[];
    chunks: readonly Chunk[];
    vectors: ReadonlyMap<string, Float32Array> | null;
    facts: readonly CodeFact[];
  }): Promise<void> {
    const { files, chunkIds } = change;
    await this.changing(
      (known) => {
        known.forgetFiles(files);
        known.forget(chunkIds);
      },
      async () => {
        for (let i = 0; i < Math.max(files.length, chunkIds.length); i += DELETE_BATCH) {
          const byFile = files.slice(i, i + DELETE_BATCH);
          const byId = chunkIds.slice(i, i + DELETE_BATCH);
          const where = [
            ...(byFile.length ? [`filePath IN (${sqlList(byFile)})`] : []),
            ...(byId.length ? [`id IN (${sqlList(byId)})`] : []),
          ].join(' OR ');
          await settleBoth(
            this.chunks.delete(where),
            byFile.length ? this.facts.delete(`path IN (${sqlList(byFile)})`) : null,
          );
        }
      },
    );
    await settleBoth(
      change.chunks.length ? this.addChunks(change.chunks, change.vectors) : null,
      change.facts.length ? this.addFacts(change.facts) : null,
    );
  }

  async deleteFiles(paths: readonly string[]): Promise<void> {
    await this.changing(
      (known) => known.forgetFiles(paths),
      async () => {
        for (let i = 0; i < paths.length; i += DELETE_BATCH) {
          const list = sqlList(paths.slice(i, i + DELETE_BATCH));
          await this.chunks.delete(`filePath IN (${list})`);
          await this.facts.delete(`path IN (${list})`);
        }
      },
    );
  }

  async deleteChunks(ids: readonly string[]): Promise<void> {
    await this.changing(
      (known) => known.forget(ids),
      async () => {
        for (let i = 0; i < ids.length; i += DELETE_BATCH)
          await this.chunks.delete(`id IN (${sqlList(ids.slice(i, i + DELETE_BATCH))})`);
      },
    );
  }

  async addChunks(
    chunks: readonly Chunk[],
    vectors: ReadonlyMap<string, Float32Array> | null,
  ): Promise<void> {
    await this.changing(
      (known) => known.forget(chunks.map((chunk) => chunk.id)),
      async () => {
        for (let i = 0; i < chunks.length; i += ADD_BATCH) {
          const batch = chunks.slice(i, i + ADD_BATCH);
          const packed = this.dimensions
            ? packVectors(
                batch.map((chunk) => vectors?.get(chunk.id)),
                this.dimensions,
              )
            : null;
          const rows = batch.map((chunk) => ({
            ...chunk,
            segments: chunk.segments ? JSON.stringify(chunk.segments) : null,
          }));
          await this.chunks.add(arrowTable(this.chunkSchema, rows, packed));
        }
      },
    );
    this.known?.written(chunks, vectors);
  }

  /**
   * Runs a change to the tables' rows with `forget` applied to the known vectors before it and
   * again after it, whatever its outcome: a read under way meanwhile may have kept a row it changed.
   */
  private async changing(
    forget: (known: KnownVectors) => void,
    change: () => Promise<void>,
  ): Promise<void> {
    if (this.known) forget(this.known);
    try {
      await change();
    } finally {
      if (this.known) forget(this.known);
    }
  }

  /** Points file chunks at their directory chunk (or none) without rewriting the rows' text. */
  async setParentDirectory(
    ids: readonly string[],
    parentDirectoryId: string | null,
  ): Promise<void> {
    for (let i = 0; i < ids.length; i += DELETE_BATCH) {
      await this.chunks.update({
        where: `id IN (${sqlList(ids.slice(i, i + DELETE_BATCH))})`,
        valuesSql: {
          parentDirectoryId: parentDirectoryId === null ? 'NULL' : sqlList([parentDirectoryId]),
        },
      });
    }
  }

  /** The callers of a fact are not stored: the code graph resolves them again when it loads. */
  async addFacts(facts: readonly CodeFact[]): Promise<void> {
    for (let i = 0; i < facts.length; i += ADD_BATCH)
      await this.facts.add(
        arrowTable(factSchema, facts.slice(i, i + ADD_BATCH).map(factRow), null),
      );
  }

  /**
   * Every chunk's metadata, read column by column, a batch of rows at a time (the caller keeps
   * them as it likes; a million at once would be a few hundred MB); `strings` shares repeated
   * values (paths, parents).
   */
  async *chunkMetadata(strings = new Strings()): AsyncGenerator<ChunkMeta[]> {
    for await (const batch of this.chunks.query().select(CHUNK_META_COLUMNS)) {
      const out: ChunkMeta[] = [];
      // interned so that the facts' chunk ids, read next, share these copies
      const id = stringColumn(batch, 'id', strings);
      const level = stringColumn(batch, 'level', strings);
      const filePath = stringColumn(batch, 'filePath', strings);
      const directoryPath = stringColumn(batch, 'directoryPath', strings);
      const language = stringColumn(batch, 'language', strings);
      const className = stringColumn(batch, 'className', strings);
      const functionName = stringColumn(batch, 'functionName', strings);
      const startLine = intColumn(batch, 'startLine');
      const endLine = intColumn(batch, 'endLine');
      const parentDirectoryId = stringColumn(batch, 'parentDirectoryId', strings);
      const parentFileId = stringColumn(batch, 'parentFileId', strings);
      const parentClassId = stringColumn(batch, 'parentClassId', strings);
      const isSummarized = boolColumn(batch, 'isSummarized');
      const originalLineCount = intColumn(batch, 'originalLineCount');
      const segments = stringColumn(batch, 'segments');
      for (let row = 0; row < batch.numRows; row++)
        out.push({
          id: id[row]!,
          level: level[row] as ChunkLevel,
          filePath: filePath[row]!,
          directoryPath: directoryPath[row]!,
          language: language[row] as LanguageId | null,
          className: className[row]!,
          functionName: functionName[row]!,
          startLine: startLine[row]!,
          endLine: endLine[row]!,
          parentDirectoryId: parentDirectoryId[row]!,
          parentFileId: parentFileId[row]!,
          parentClassId: parentClassId[row]!,
          isSummarized: isSummarized[row]!,
          originalLineCount: originalLineCount[row]!,
          segments: segments[row] ? (JSON.parse(segments[row]!) as [number, number][]) : null,
        });
      yield out;
    }
  }

  /**
   * Every fact, read column by column into `gather`, which hands them over at the end; `strings`
   * shares repeated values (paths, names, kinds).
   */
  async allFacts(
    strings = new Strings(),
    gather: FactGatherer = new FactList(strings),
  ): Promise<readonly CodeFact[]> {
    for await (const batch of this.facts.query()) {
      const columns = {
        id: stringColumn(batch, 'id'),
        path: stringColumn(batch, 'path', strings),
        language: stringColumn(batch, 'language', strings),
        qualifiedName: stringColumn(batch, 'qualifiedName', strings),
        name: stringColumn(batch, 'name', strings),
        kind: stringColumn(batch, 'kind', strings),
        className: stringColumn(batch, 'className', strings),
        parent: stringColumn(batch, 'parent', strings),
        startLine: intColumn(batch, 'startLine'),
        endLine: intColumn(batch, 'endLine'),
        // a quarter of signatures and docstrings repeat (overrides, tests, `String() string`)
        signature: stringColumn(batch, 'signature', strings),
        docstring: stringColumn(batch, 'docstring', strings),
        chunkId: stringColumn(batch, 'chunkId', strings),
        calls: stringColumn(batch, 'calls'),
        raises: stringListColumn(batch, 'raises', strings),
        errorStrings: stringListColumn(batch, 'errorStrings'),
        mutates: stringListColumn(batch, 'mutates', strings),
        imports: stringColumn(batch, 'imports'),
        bases: stringListColumn(batch, 'bases', strings),
      };
      for (let row = 0; row < batch.numRows; row++) gather.add(factAt(columns, row));
    }
    return gather.take();
  }

  /** Nearest chunks to `vector` by cosine distance, optionally restricted to some levels. */
  async nearest(
    vector: Float32Array,
    limit: number,
    levels?: readonly ChunkLevel[],
  ): Promise<{ id: string; distance: number }[]> {
    if (!this.dimensions) return [];
    let query = this.chunks
      .vectorSearch(Array.from(vector))
      .distanceType('cosine')
      // with an index (above the memory budget) the best candidates are measured again at full
      // precision; without one this is ignored
      .refineFactor(REFINE_FACTOR)
      .select(['id', '_distance'])
      .limit(limit);
    if (levels && levels.length < 4) query = query.where(`level IN (${sqlList(levels)})`);
    const rows = await query.toArray();
    return rows.map((row) => ({ id: row.id as string, distance: row._distance as number }));
  }

  /**
   * Every chunk's vector (or only those of `ids`) with its id and level, batch by batch, for an
   * in-memory scan: row `i` of a batch has its vector at `values[i × dimensions …]`, a view on
   * the batch's own buffer. Those of `ids` this process knows (see KnownVectors) come first, from
   * memory; the table is asked for the rest.
   */
  async *vectors(ids?: readonly string[]): AsyncGenerator<VectorBatch> {
    const known = this.known;
    if (!known) return;
    if (!ids) return yield* this.readVectors(known, null);
    const { missing, ...kept } = known.take(ids);
    if (kept.ids.length) yield kept;
    for (let i = 0; i < missing.length; i += DELETE_BATCH)
      yield* this.readVectors(known, `id IN (${sqlList(missing.slice(i, i + DELETE_BATCH))})`);
  }

  /** The vectors `filter` selects, read from the table; the folders' rows are kept in `known`. */
  private async *readVectors(
    known: KnownVectors,
    filter: string | null,
  ): AsyncGenerator<VectorBatch> {
    const mark = known.mark();
    for await (const batch of this.vectorsWhere(filter)) {
      known.read(batch, mark);
      yield batch;
    }
  }

  private async *vectorsWhere(filter: string | null): AsyncGenerator<VectorBatch> {
    const dimensions = this.dimensions!;
    const query = this.chunks.query().select(['id', 'level', 'vector']);
    for await (const batch of filter ? query.where(filter) : query) {
      const ids = stringColumn(batch, 'id');
      const levels = stringColumn(batch, 'level');
      const data = batch.getChild('vector')!.data[0]!;
      const floats = data.children[0]!.values as Float32Array;
      if (!data.nullCount) {
        yield {
          ids: ids as string[],
          levels: levels as ChunkLevel[],
          values: floats.subarray(0, batch.numRows * dimensions),
        };
        continue;
      }
      // the column is not nullable; a row without a vector is left out all the same
      const rows = [...Array(batch.numRows).keys()].filter((row) => data.getValid(row));
      const values = new Float32Array(rows.length * dimensions);
      rows.forEach((row, at) =>
        values.set(floats.subarray(row * dimensions, (row + 1) * dimensions), at * dimensions),
      );
      yield {
        ids: rows.map((row) => ids[row]!),
        levels: rows.map((row) => levels[row] as ChunkLevel),
        values,
      };
    }
  }

  /**
   * Reads in the B-tree indexes a save filters by (its deletions by file and chunk id, the
   * vectors read back by id) with queries that match no row. LanceDB loads an index at its first
   * use after opening: at 100k files each first use cost 30-50 ms more than the next, paid by the
   * first save after opening unless this ran before it. Reads only: nothing is written.
   */
  async warmIndexes(): Promise<void> {
    // no chunk id and no file path is empty
    const none = sqlList(['']);
    const drain = async (rows: AsyncIterable<unknown>) => {
      for await (const _batch of rows);
    };
    await Promise.all([
      drain(this.chunks.query().where(`id IN (${none})`).select(['id'])),
      drain(this.chunks.query().where(`filePath IN (${none})`).select(['id'])),
      drain(this.facts.query().where(`path IN (${none})`).select(['id'])),
    ]);
  }

  async counts(): Promise<{ chunks: number; facts: number }> {
    return { chunks: await this.chunks.countRows(), facts: await this.facts.countRows() };
  }

  /**
   * Large tables get B-tree indexes on the columns every update filters by (deleting a file's rows
   * drops from a scan to a lookup); small ones do not need them. Chunks whose vectors are more than
   * search keeps in memory (`vectorBudget` bytes, see vector-memory.ts) get an IVF-PQ index on
   * them, so a question is not a flat scan of the table.
   */
  async ensureIndexes(vectorBudget: number = VECTOR_MEMORY_BYTES): Promise<boolean> {
    // the two tables build side by side: each index is a sort in LanceDB's own threads, and a
    // table's indexes are made one after another (each is a new version of that table)
    const [chunks, facts] = await Promise.all([
      this.ensureVectorIndex(vectorBudget).then(async (vectors) => {
        const btrees = await this.ensureBTreeIndexes(this.chunks, ['filePath', 'id']);
        return { created: vectors || btrees.created, complete: btrees.complete };
      }),
      this.ensureBTreeIndexes(this.facts, ['path', 'id']),
    ]);
    this.indexesComplete ||= chunks.complete && facts.complete;
    return chunks.created || facts.created;
  }

  /** One table's B-tree indexes once it is large enough: whether one was made, whether all are. */
  private async ensureBTreeIndexes(
    table: lancedb.Table,
    columns: readonly string[],
  ): Promise<{ created: boolean; complete: boolean }> {
    // once both tables have theirs, writes and compactions keep them: a save asks nothing
    if (this.indexesComplete) return { created: false, complete: true };
    if ((await table.countRows()) < INDEXED_ROWS) return { created: false, complete: false };
    const existing = await this.indexedColumns(table);
    let created = false;
    for (const column of columns) {
      if (existing.has(column)) continue;
      await table.createIndex(column, { config: lancedb.Index.btree() });
      created = true;
    }
    return { created, complete: true };
  }

  /** Both tables hold all their B-tree indexes, as this process last saw them. */
  private indexesComplete = false;
  /** The vector column has its index, as this process last saw it. */
  private vectorIndexed = false;

  /**
   * Builds the vector index once the table holds more vectors than fit the memory budget: cosine,
   * as searches measure, with LanceDB's default partitions (about √rows). Writes and compactions
   * keep it: rows added since are searched flat beside it.
   */
  private async ensureVectorIndex(budget: number): Promise<boolean> {
    if (!this.dimensions || this.vectorIndexed) return false;
    const rows = await this.chunks.countRows();
    if (vectorsFitInMemory(rows, this.dimensions, budget)) return false;
    this.vectorIndexed = true;
    if ((await this.indexedColumns(this.chunks)).has('vector')) return false;
    const started = performance.now();
    await this.chunks.createIndex('vector', {
      config: lancedb.Index.ivfPq({
        distanceType: 'cosine',
        // 8 dimensions per sub-vector where they divide evenly (LanceDB's default takes 16):
        // measured nearer the exact neighbours at twice the codes, still a few bytes per chunk
        ...(this.dimensions % 8 === 0 ? { numSubVectors: this.dimensions / 8 } : {}),
      }),
    });
    log.info('vector_index_created', {
      chunks: rows,
      dimensions: this.dimensions,
      duration_ms: Math.round(performance.now() - started),
    });
    return true;
  }

  private async indexedColumns(table: lancedb.Table): Promise<Set<string>> {
    return new Set((await table.listIndices()).flatMap((index) => index.columns));
  }

  /** Whether writes have left enough small fragments behind that scans slow down. */
  async needsOptimize(): Promise<boolean> {
    const [chunks, facts] = await Promise.all([this.chunks.stats(), this.facts.stats()]);
    return (
      Math.max(chunks.fragmentStats.numSmallFragments, facts.fragmentStats.numSmallFragments) >
      MAX_SMALL_FRAGMENTS
    );
  }

  /** Merges small fragments and rewrites deleted rows away; old versions stay for readers. */
  async compact(): Promise<void> {
    const keepVersions = new Date(0);
    await this.chunks.optimize({ cleanupOlderThan: keepVersions });
    await this.facts.optimize({ cleanupOlderThan: keepVersions });
  }

  /**
   * Removes the versions older than the committed ones, and files no version names (those a
   * killed write left behind: only the lock holder calls this, so no other write is in progress).
   * The cut-off is each committed version's own time, not the present: LanceDB's optimize may add
   * versions of its own (compaction, index updates) before pruning, and a cut-off of now would
   * then remove the version the manifest names, leaving the store unreadable.
   */
  async cleanup(committed: TableVersions): Promise<void> {
    this.oldestVersions = null;
    for (const [table, version] of [
      [this.chunks, committed.chunks],
      [this.facts, committed.facts],
    ] as const) {
      const listed = (await table.listVersions()).find((entry) => entry.version === version);
      if (!listed) throw new Error(`version ${version} of a table is gone before its cleanup`);
      await table.optimize({ cleanupOlderThan: listed.timestamp, deleteUnverified: true });
    }
    await this.learnOldestVersions();
  }

  /**
   * How many versions each table keeps on disk (the most of the two): they grow with every write
   * until cleaned up. Versions are numbered one after another and only a clean-up removes any (the
   * oldest ones), so once the oldest is known the count is the latest's number less it: listing
   * the versions reads every one's manifest (18 ms a save at 10k files).
   */
  async versionCount(): Promise<number> {
    this.oldestVersions ??= await this.listOldestVersions();
    const latest = await this.versions();
    return (
      Math.max(
        latest.chunks - this.oldestVersions.chunks,
        latest.facts - this.oldestVersions.facts,
      ) + 1
    );
  }

  /**
   * Lists each table's oldest version, so that counting versions (versionCount) needs no listing:
   * a writer's open calls it, and a clean-up once it has removed versions. Not from a background
   * task: the listing holds the native table while it runs, and closing the tables then fails.
   */
  async learnOldestVersions(): Promise<void> {
    this.oldestVersions = await this.listOldestVersions();
  }

  /** Each table's oldest version on disk, once listed; forgotten while versions are removed. */
  private oldestVersions: TableVersions | null = null;

  private async listOldestVersions(): Promise<TableVersions> {
    const oldest = async (table: lancedb.Table) =>
      Math.min(...(await table.listVersions()).map((entry) => entry.version));
    return { chunks: await oldest(this.chunks), facts: await oldest(this.facts) };
  }

  close(): void {
    this.chunks.close();
    this.facts.close();
    this.db.close();
  }
}

/**
 * Rows as an Arrow table of `schema`, built column by column: much faster than letting LanceDB
 * infer and convert plain objects. Vectors come packed in one Float32Array.
 */
function arrowTable(
  schema: Schema,
  rows: readonly Record<string, unknown>[],
  vectors: Float32Array | null,
): Table {
  const children = schema.fields.map((field) => {
    const values = rows.map((row) => row[field.name] ?? null);
    if (field.type instanceof FixedSizeList) {
      const floats = makeData({ type: new Float32(), length: vectors!.length, data: vectors! });
      return makeData({ type: field.type, length: rows.length, nullCount: 0, child: floats });
    }
    if (field.type instanceof Utf8) return utf8Data(values as (string | null)[]);
    if (field.type instanceof List && field.type.children[0]?.type instanceof Utf8) {
      const lists = values as string[][];
      const offsets = new Int32Array(lists.length + 1);
      lists.forEach((list, i) => (offsets[i + 1] = offsets[i]! + list.length));
      return makeData({
        type: field.type,
        length: lists.length,
        nullCount: 0,
        valueOffsets: offsets,
        child: utf8Data(lists.flat()),
      });
    }
    return vectorFromArray(values, field.type as DataType).data[0]!;
  });
  const data = makeData({
    type: new Struct(schema.fields),
    length: rows.length,
    nullCount: 0,
    children,
  });
  return new Table(new RecordBatch(schema, data));
}

/**
 * A UTF-8 column: one encoded buffer, one offsets array, a validity bitmap for nulls. Each value is
 * encoded straight into its place in the buffer: joining the values into one string first copied
 * every chunk's text once more (a few seconds of a 10k-file cold index).
 */
function utf8Data(values: readonly (string | null)[]) {
  const offsets = new Int32Array(values.length + 1);
  const validity = new Uint8Array(Math.ceil(values.length / 8)).fill(0xff);
  let nulls = 0;
  values.forEach((value, i) => {
    if (value === null) {
      validity[i >> 3]! &= ~(1 << (i & 7));
      nulls++;
    }
    offsets[i + 1] = offsets[i]! + (value === null ? 0 : Buffer.byteLength(value, 'utf8'));
  });
  const data = Buffer.allocUnsafe(offsets[values.length]!);
  values.forEach((value, i) => {
    if (value) data.write(value, offsets[i]!, 'utf8');
  });
  return makeData({
    type: new Utf8(),
    length: values.length,
    nullCount: nulls,
    valueOffsets: offsets,
    data,
    ...(nulls ? { nullBitmap: validity } : {}),
  });
}

function packVectors(
  vectors: readonly (Float32Array | undefined)[],
  dimensions: number,
): Float32Array {
  const packed = new Float32Array(vectors.length * dimensions);
  vectors.forEach((vector, i) => {
    if (vector) packed.set(vector, i * dimensions);
  });
  return packed;
}

function factRow(fact: CodeFact): Record<string, unknown> {
  return {
    id: fact.id,
    path: fact.path,
    language: fact.language,
    qualifiedName: fact.qualifiedName,
    name: fact.name,
    kind: fact.kind,
    className: fact.className,
    parent: fact.parent,
    startLine: fact.startLine,
    endLine: fact.endLine,
    signature: fact.signature,
    docstring: fact.docstring,
    chunkId: fact.chunkId,
    calls: JSON.stringify(fact.calls),
    raises: [...fact.raises],
    errorStrings: [...fact.errorStrings],
    mutates: [...fact.mutates],
    imports: JSON.stringify(fact.imports),
    bases: [...fact.bases],
  };
}

/** The facts table's columns of one batch, as read by `allFacts`. */
type FactColumns = { readonly [K in 'startLine' | 'endLine']: (number | null)[] } & {
  readonly [K in 'raises' | 'errorStrings' | 'mutates' | 'bases']: (readonly string[])[];
} & { readonly [K in FactTextColumn]: (string | null)[] };

type FactTextColumn =
  | 'id'
  | 'path'
  | 'language'
  | 'qualifiedName'
  | 'name'
  | 'kind'
  | 'className'
  | 'parent'
  | 'signature'
  | 'docstring'
  | 'chunkId'
  | 'calls'
  | 'imports';

function factAt(columns: FactColumns, row: number): CodeFact {
  return {
    id: columns.id[row]!,
    path: columns.path[row]!,
    language: columns.language[row] as LanguageId,
    qualifiedName: columns.qualifiedName[row]!,
    name: columns.name[row]!,
    kind: columns.kind[row] as SymbolKind,
    className: columns.className[row] ?? null,
    parent: columns.parent[row] ?? null,
    startLine: columns.startLine[row]!,
    endLine: columns.endLine[row]!,
    signature: columns.signature[row]!,
    docstring: columns.docstring[row] ?? null,
    chunkId: columns.chunkId[row] ?? null,
    calls: parseList<CallSite>(columns.calls[row]!),
    raises: columns.raises[row]!,
    errorStrings: columns.errorStrings[row]!,
    mutates: columns.mutates[row]!,
    imports: parseList<ImportBinding>(columns.imports[row]!),
    bases: columns.bases[row]!,
  };
}

/** A JSON list column's value; an empty one is the shared empty list. */
function parseList<T>(json: string): readonly T[] {
  return json === '[]' ? NO_VALUES : (JSON.parse(json) as T[]);
}

/**
 * Takes the facts of a read of the facts table one at a time and hands them all over at its end.
 * The engine's graph gives one that packs each fact's call sites into its own numbers as the fact
 * comes (see the graph's `PendingFacts`): the sites read are then garbage at once, where a list
 * holds a million of them as objects (at 10k files) until the graph takes the facts.
 */
export interface FactGatherer {
  add(fact: CodeFact): void;
  take(): readonly CodeFact[];
}

/** The facts as read, their call sites' names shared: a million sites repeat a few thousand names. */
class FactList implements FactGatherer {
  private facts: CodeFact[] = [];

  constructor(private readonly strings: Strings) {}

  add(fact: CodeFact): void {
    for (const call of fact.calls) sharedCall(call, this.strings);
    this.facts.push(fact);
  }

  take(): readonly CodeFact[] {
    const facts = this.facts;
    this.facts = [];
    return facts;
  }
}

function sharedCall(call: CallSite, strings: Strings): void {
  // the object is fresh from JSON.parse: its names are swapped for the shared copies in place
  const shared = call as { -readonly [K in keyof CallSite]: CallSite[K] };
  shared.name = strings.intern(call.name);
  if (typeof call.receiver === 'string') shared.receiver = strings.intern(call.receiver);
  if (typeof call.receiverType === 'string')
    shared.receiverType = strings.intern(call.receiverType);
}

/**
 * Waits for both writes to end, then fails with the first failure: a write still running when
 * the run rolls back would land after the rollback.
 */
async function settleBoth(first: Promise<unknown> | null, second: Promise<unknown> | null) {
  const [a, b] = await Promise.allSettled([first, second]);
  if (a.status === 'rejected') throw a.reason;
  if (b.status === 'rejected') throw b.reason;
}

function sqlList(values: readonly string[]): string {
  return values.map((value) => `'${value.replace(/'/g, "''")}'`).join(', ');
}
