import * as path from 'node:path';
import { CHUNK_LEVELS, type ChunkLevel } from '../model';
import { getLogger } from '../log/logger';
import type { ChunkCatalog, ChunkPlace } from '../store/catalog';
import { SAVED_VECTORS_FILE, type IndexStore } from '../store/store';
import type { Tables, VectorBatch } from '../store/tables';
import { VECTOR_MEMORY_BYTES, vectorsFitInMemory } from '../store/vector-memory';
import { ancestors } from '../util/paths';
import { spareSlots } from '../util/spare';
import { describeError } from '../util/result';
import { BLOCK_ROWS, int8Matrix, PlainMatrix, type Int8Matrix } from './int8-dots';
import { readVectorRows, writeVectorRows } from './vector-rows-file';

/**
 * Nearest chunks by cosine similarity, scanned in memory: the vectors are read from the table once
 * (on the first search after a change), quantised to 8 bits per dimension (a quarter of the memory,
 * with rankings that match float search to well within the noise of a small embedding model), and
 * scanned whole — faster than a query through the database for any workspace whose vectors fit the
 * memory budget (store/vector-memory.ts). Above it the table is searched, through the approximate
 * index it gets at index time. After a save only the saved files' vectors (and those of the folders
 * above them, whose summaries follow their files) are read again, not the whole table.
 */
export interface Neighbour {
  readonly id: string;
  readonly distance: number;
}

/**
 * A whole read of more vectors than this takes a second or more (about 4 s for 950k on a loaded
 * 2-core machine): questions asked meanwhile are answered by the table instead of waiting for it.
 */
const WAIT_FOR_READ_MAX_ROWS = 200_000;
/** Saved rows taken in between two turns of the event loop. */
const YIELD_ROWS = 65_536;
/** A change to more files than this (a branch switch) reads the whole table again. */
const REFRESH_MAX_FILES = 500;
const SCALE = 127;

const log = getLogger('search.vectors');

/**
 * The files and folders whose chunks have rows, numbered: a row records its owner's number, so a
 * save finds the rows it replaces by one pass over a typed array instead of a list of rows kept
 * per file. The keys are the catalog's own path strings.
 */
class Owners {
  private readonly files = new Map<string, number>();
  private readonly folders = new Map<string, number>();

  /** The number of what a save replaces the vector of the chunk at `place` with: its file, or its folder's summary. */
  of(place: ChunkPlace): number {
    if (place.folder) return this.number(this.folders, place.path!);
    return place.path === null ? NO_OWNER : this.number(this.files, place.path);
  }

  /**
   * A flag per owner number, set for the numbers of `files` and of `folders` that have rows: a
   * save looks up the owner of every row (950k at 100k files), which a set made slow.
   */
  flags(files: Iterable<string>, folders: Iterable<string>): Uint8Array {
    const flags = new Uint8Array(this.files.size + this.folders.size);
    for (const file of files) if (this.files.has(file)) flags[this.files.get(file)!] = 1;
    for (const folder of folders)
      if (this.folders.has(folder)) flags[this.folders.get(folder)!] = 1;
    return flags;
  }

  private number(map: Map<string, number>, key: string): number {
    let number = map.get(key);
    if (number === undefined) {
      number = this.files.size + this.folders.size;
      map.set(key, number);
    }
    return number;
  }
}

/** The owner of a row whose chunk has neither file nor folder (none in a consistent catalog). */
const NO_OWNER = -1;

/** Quantised vectors in rows of a matrix: the ones searched, or ones read to be added to them. */
interface Rows {
  /** Row `i` holds the quantised vector of `ids[i]` (the catalog's string); a dead row's id is ''. */
  readonly ids: string[];
  /** Each row's level as its position in CHUNK_LEVELS (DEAD for a dead or spare row). */
  readonly levels: Uint8Array;
  /** Each row's owner (see Owners). */
  readonly owners: Int32Array;
  /** The rows, spare ones included. */
  readonly codes: Int8Matrix;
  /** Rows written so far, dead ones included; the rest are spare. */
  used: number;
}

/**
 * The vectors in memory. A save marks its files' old rows dead and appends their new ones in the
 * spare rows at the end, so it costs what it changed; the rows are packed again only when the spare
 * rows run out or a quarter of the used ones are dead.
 */
interface Loaded extends Rows {
  readonly numbering: Owners;
  readonly dimensions: number;
  dead: number;
}

interface ScanLimits {
  /** Bytes the vectors may take in memory (see store/vector-memory.ts). */
  readonly memoryBudget: number;
  /** Above this many chunks a question does not wait for a whole read. */
  readonly waitForReadMaxRows: number;
}

/**
 * Where the vectors in memory are kept between openings (see vector-rows-file.ts): the file, the
 * key of the commit the store holds now, and whether this process writes there.
 */
export interface SavedVectors {
  readonly file: string;
  key(): string;
  writable(): boolean;
}

/**
 * Where `store`'s vectors are kept between openings: vectors.bin, under the key of the commit the
 * store holds (its creation, generation, chunks table version and model), written only by the
 * process holding the store's lock, as its other files.
 */
export function savedVectorsOf(store: IndexStore): SavedVectors {
  return {
    file: path.join(store.directory, SAVED_VECTORS_FILE),
    key: () => {
      const { createdAt, generation, tableVersions, embedding } = store.manifest;
      const chunks = tableVersions?.chunks ?? null;
      return JSON.stringify({ createdAt, generation, chunks, model: embedding?.modelId ?? null });
    },
    writable: () => store.texts.forWriting,
  };
}

const LEVEL_CODE = new Map(CHUNK_LEVELS.map((level, index) => [level, index]));
/** A level code no search mask has a bit for (shifts take their count modulo 32). */
const DEAD = 31;

export class VectorScan {
  private loading: Promise<Loaded | null> | null = null;
  /** Whole reads of the table in progress. */
  private reading = 0;
  /** The key of the rows on disk, as far as this scan knows. */
  private savedKey: string | null = null;
  private readonly limits: ScanLimits;
  private readonly saved: SavedVectors | null;

  constructor(
    private readonly tables: Tables,
    private readonly catalog: ChunkCatalog,
    {
      limits = { memoryBudget: VECTOR_MEMORY_BYTES, waitForReadMaxRows: WAIT_FOR_READ_MAX_ROWS },
      saved = null,
    }: { readonly limits?: ScanLimits; readonly saved?: SavedVectors | null } = {},
  ) {
    this.limits = limits;
    this.saved = saved;
  }

  /** Forgets the vectors; the next search reads them again. */
  clear(): void {
    this.loading = null;
  }

  /** Reads the vectors in now, as the first search would; a failed read is tried again by the next. */
  async ready(): Promise<void> {
    const loading = (this.loading ??= this.load());
    try {
      await loading;
    } catch (cause) {
      if (this.loading === loading) this.loading = null;
      throw cause;
    }
  }

  /**
   * Brings the vectors in memory up to date after the chunks of `paths` changed: their rows and
   * those of the folders above them are dropped and read again, the rest are kept. Nothing is
   * read when no search has loaded the vectors yet.
   */
  refresh(paths: readonly string[]): void {
    if (!this.loading) return;
    if (paths.length > REFRESH_MAX_FILES) return this.clear();
    const changed = new Set(paths);
    this.loading = this.loading
      // a table searched in place may have shrunk below the size kept in memory
      .then((loaded) => (loaded ? this.patch(loaded, changed) : this.load()))
      .catch((error: unknown) => {
        log.warn('vectors_refresh_failed', { files: paths.length, error: String(error) });
        return this.load();
      });
  }

  async nearest(
    vector: Float32Array,
    limit: number,
    levels: readonly ChunkLevel[],
  ): Promise<Neighbour[]> {
    this.loading ??= this.load();
    // a save's patch costs milliseconds and is awaited; a whole read of a large table is not
    if (this.reading && this.catalog.size > this.limits.waitForReadMaxRows)
      return this.tables.nearest(vector, limit, levels);
    const loaded = await this.loading;
    if (!loaded) return this.tables.nearest(vector, limit, levels);
    let mask = 0;
    for (const level of levels) mask |= 1 << LEVEL_CODE.get(level)!;
    return scan(loaded, vector, limit, mask);
  }

  /**
   * Saves the vectors in memory for the next opening, unless those on disk are already of the
   * commit the store holds: called when the engine idles, when the vectors in memory are that
   * commit's. Nothing is saved when no search has loaded them, or when their rows are not the
   * catalog's chunks one for one.
   */
  async save(): Promise<void> {
    if (!this.saved?.writable() || !this.loading) return;
    const loaded = await this.loading;
    const key = this.saved.key();
    if (key === this.savedKey || !loaded || loaded.used - loaded.dead !== this.catalog.size) return;
    const started = performance.now();
    const { dimensions } = loaded;
    const ids: string[] = [];
    const codes = new Int8Array(this.catalog.size * dimensions);
    for (let row = 0; row < loaded.used; row++) {
      if (loaded.levels[row] === DEAD) continue;
      codes.set(loaded.codes.row(row), ids.length * dimensions);
      ids.push(loaded.ids[row]!);
    }
    await writeVectorRows(this.saved.file, key, dimensions, { ids, codes });
    this.savedKey = key;
    log.info('vectors_saved', {
      chunks: ids.length,
      duration_ms: Math.round(performance.now() - started),
    });
  }

  /** Whether the catalog's vectors, of `dimensions`, are kept in memory. */
  private fits(dimensions: number): boolean {
    return vectorsFitInMemory(this.catalog.size, dimensions, this.limits.memoryBudget);
  }

  private async load(): Promise<Loaded | null> {
    const dimensions = this.tables.dimensions;
    if (!dimensions) return null;
    if (!this.fits(dimensions)) {
      log.info('vectors_searched_in_table', { chunks: this.catalog.size, dimensions });
      return null;
    }
    const started = performance.now();
    // a whole read, from the saved rows or the table: a large catalog's questions do not wait for it
    log.debug('vectors_reading', { chunks: this.catalog.size, dimensions });
    this.reading++;
    const { loaded, saved } = await this.readWhole(dimensions).finally(() => this.reading--);
    log.info('vectors_loaded', {
      chunks: loaded.used,
      dimensions,
      bytes: loaded.used * dimensions,
      ...(saved ? { saved } : {}),
      duration_ms: Math.round(performance.now() - started),
    });
    return loaded;
  }

  /**
   * Every vector, from the rows saved for the store's commit when there are (`saved`), else from
   * the table.
   */
  private async readWhole(dimensions: number): Promise<{ loaded: Loaded; saved: boolean }> {
    const saved = await this.readSaved(dimensions);
    if (saved) return { loaded: saved, saved: true };
    const numbering = new Owners();
    // read straight into the matrix searched, with its spare rows: no second copy while loading
    const size = this.catalog.size;
    const read = await this.read(dimensions, this.tables.vectors(), size + spareSlots(size), {
      numbering,
      matrix: int8Matrix,
    });
    return { loaded: { ...read, numbering, dimensions, dead: 0 }, saved: false };
  }

  /**
   * The vectors saved for the commit the store holds, when there are and they are the catalog's
   * chunks one for one; null otherwise (the table is read instead, and the rows saved again once
   * the engine idles).
   */
  private async readSaved(dimensions: number): Promise<Loaded | null> {
    if (!this.saved) return null;
    const key = this.saved.key();
    const read = await readVectorRows(this.saved.file, key, dimensions);
    if (!read.ok) {
      log.warn('saved_vectors_not_read', { error: describeError(read.error) });
      return null;
    }
    if (!read.value) return null;
    const { count, idAt, codes } = read.value;
    if (count !== this.catalog.size) return null;
    const numbering = new Owners();
    const rows = emptyRows(count + spareSlots(count), dimensions, int8Matrix);
    rows.codes.setRows(0, codes);
    while (rows.used < count) {
      // a question asked meanwhile is answered between batches (from the table, when it is large)
      if (rows.used && rows.used % YIELD_ROWS === 0)
        await new Promise<void>((resolve) => setImmediate(resolve));
      const at = rows.used++;
      const place = this.catalog.placeOf(idAt(at), at);
      // a chunk the catalog lacks (a change since, or rows of other chunks): read the table
      if (!place) return null;
      rows.levels[at] = LEVEL_CODE.get(place.level)!;
      rows.owners[at] = numbering.of(place);
      rows.ids[at] = place.id;
    }
    this.savedKey = key;
    return { ...rows, numbering, dimensions, dead: 0 };
  }

  private async patch(loaded: Loaded, changed: ReadonlySet<string>): Promise<Loaded | null> {
    const dimensions = this.tables.dimensions;
    if (!dimensions || dimensions !== loaded.dimensions || !this.fits(dimensions))
      return this.load();
    const started = performance.now();
    // the folders above a changed file have their summaries rebuilt, and no others
    const folders = new Set([...changed].flatMap(ancestors));
    const stale = loaded.numbering.flags(changed, folders);
    const staleRows: number[] = [];
    const { levels, owners } = loaded;
    for (let row = 0; row < loaded.used; row++) {
      const owner = owners[row]!;
      if (owner !== NO_OWNER && stale[owner] && levels[row] !== DEAD) staleRows.push(row);
    }
    const fresh = this.catalog.idsOf(changed, folders);
    const kept = loaded.used - loaded.dead - staleRows.length;
    // a chunk neither kept nor re-read (a run that failed half-way): read the whole table again
    if (kept + fresh.length !== this.catalog.size) return this.load();
    const added = await this.read(dimensions, this.tables.vectors(fresh), fresh.length, {
      numbering: loaded.numbering,
      matrix: (rows, width) => new PlainMatrix(rows, width),
    });
    // marked only now, with the new rows at once: a search never sees a file without its rows
    for (const row of staleRows) {
      loaded.levels[row] = DEAD;
      loaded.ids[row] = '';
    }
    loaded.dead += staleRows.length;
    const fits = loaded.used + added.used <= loaded.codes.rows;
    const patched =
      fits && loaded.dead * 4 <= loaded.used
        ? append(loaded, added)
        : pack(dimensions, loaded.numbering, [liveRows(loaded), added]);
    log.info('vectors_refreshed', {
      files: changed.size,
      kept,
      read: added.used,
      packed: patched !== loaded,
      duration_ms: Math.round(performance.now() - started),
    });
    return patched;
  }

  /**
   * Quantises the rows of `vectors` into a matrix of `capacity` rows (more when the table holds
   * more). A row takes the catalog's string for its id (the table's copy would cost a string per
   * row) and its owner's number from `numbering`.
   */
  private async read(
    dimensions: number,
    vectors: AsyncIterable<VectorBatch>,
    capacity: number,
    into: { numbering: Owners; matrix: (rows: number, dimensions: number) => Int8Matrix },
  ): Promise<Rows> {
    let rows = emptyRows(Math.max(1, capacity), dimensions, into.matrix);
    let codes = new Int8Array(0);
    for await (const batch of vectors) {
      const count = batch.ids.length;
      while (rows.used + count > rows.codes.rows)
        rows = copyRows(rows, rows.codes.rows * 2, dimensions, into.matrix);
      // the batch quantised at once and written in one copy: a view of each row's values and
      // codes was two objects per chunk for the collector
      if (codes.length < count * dimensions) codes = new Int8Array(count * dimensions);
      const quantised = codes.subarray(0, count * dimensions);
      quantise(batch.values, dimensions, quantised);
      rows.codes.setRows(rows.used, quantised);
      for (let row = 0; row < count; row++) {
        const at = rows.used++;
        rows.levels[at] = LEVEL_CODE.get(batch.levels[row]!)!;
        // a whole read meets the chunks in the order the catalog was read in
        const place = this.catalog.placeOf(batch.ids[row]!, at);
        rows.owners[at] = place ? into.numbering.of(place) : NO_OWNER;
        rows.ids[at] = place ? place.id : batch.ids[row]!;
      }
    }
    return rows;
  }
}

/** `capacity` spare rows. */
function emptyRows(
  capacity: number,
  dimensions: number,
  matrix: (rows: number, dimensions: number) => Int8Matrix,
): Rows {
  return {
    ids: new Array<string>(capacity).fill(''),
    levels: new Uint8Array(capacity).fill(DEAD),
    owners: new Int32Array(capacity).fill(NO_OWNER),
    codes: matrix(capacity, dimensions),
    used: 0,
  };
}

/** The used rows of `rows` in a matrix of `capacity` rows. */
function copyRows(
  rows: Rows,
  capacity: number,
  dimensions: number,
  matrix: (rows: number, dimensions: number) => Int8Matrix,
): Rows {
  const copy = emptyRows(capacity, dimensions, matrix);
  append(copy, rows);
  return copy;
}

/** Writes the used rows of `added` into the spare rows of `target`. */
function append<T extends Rows>(target: T, added: Rows): T {
  for (let i = 0; i < added.used; i++) copyRow(added, i, target, target.used++);
  return target;
}

/** Copies row `from` of `source` into row `to` of `target`: codes, level, owner and id. */
function copyRow(source: Rows, from: number, target: Rows, to: number): void {
  target.codes.setRow(to, source.codes.row(from));
  target.levels[to] = source.levels[from]!;
  target.owners[to] = source.owners[from]!;
  target.ids[to] = source.ids[from]!;
}

/** One matrix of the rows of `parts`, with spare rows after them. */
function pack(dimensions: number, numbering: Owners, parts: readonly Rows[]): Loaded {
  const used = parts.reduce((sum, part) => sum + part.used, 0);
  const rows = emptyRows(used + spareSlots(used), dimensions, int8Matrix);
  for (const part of parts) append(rows, part);
  return { ...rows, numbering, dimensions, dead: 0 };
}

/** The live rows of `loaded`, in row order. */
function liveRows(loaded: Loaded): Rows {
  const { dimensions } = loaded;
  const live = emptyRows(
    Math.max(1, loaded.used - loaded.dead),
    dimensions,
    (rows, width) => new PlainMatrix(rows, width),
  );
  for (let row = 0; row < loaded.used; row++) {
    if (loaded.levels[row] !== DEAD) copyRow(loaded, row, live, live.used++);
  }
  return live;
}

/**
 * Writes each vector of `vectors` (`dimensions` values each, one after another), scaled to unit
 * length, as signed bytes into `codes` at the same place.
 */
function quantise(vectors: Float32Array, dimensions: number, codes: Int8Array): void {
  for (let at = 0; at < vectors.length; at += dimensions) {
    let norm = 0;
    for (let i = at; i < at + dimensions; i++) norm += vectors[i]! * vectors[i]!;
    const factor = norm > 0 ? SCALE / Math.sqrt(norm) : 0;
    for (let i = at; i < at + dimensions; i++) codes[i] = Math.round(vectors[i]! * factor);
  }
}

/**
 * One pass over the dot products; `mask` has bit `i` set when level `CHUNK_LEVELS[i]` is wanted.
 * A block of rows whose highest product is no higher than the list's weakest is passed whole: none
 * of its rows would enter the list.
 */
function scan(loaded: Loaded, vector: Float32Array, limit: number, mask: number): Neighbour[] {
  const { codes, dimensions, ids, levels } = loaded;
  const query = new Int8Array(dimensions);
  quantise(vector, vector.length, query);
  const best: { index: number; score: number }[] = [];
  codes.dotsEach([query], (dots, _, maxima) => {
    // once the list is full, the weakest score it holds: most rows are passed by this one comparison
    let floor = -Infinity;
    for (let block = 0; block < maxima.length; block++) {
      if (maxima[block]! <= floor) continue;
      const end = Math.min(loaded.used, (block + 1) * BLOCK_ROWS);
      for (let row = block * BLOCK_ROWS; row < end; row++) {
        const dot = dots[row]!;
        if (dot <= floor || !((mask >> levels[row]!) & 1)) continue;
        if (best.length < limit) {
          best.push({ index: row, score: dot });
          if (best.length === limit) best.sort((a, b) => b.score - a.score);
        } else {
          // Insert in order; the list is short next to the number of rows scanned.
          let at = limit - 1;
          while (at > 0 && best[at - 1]!.score < dot) at--;
          best.splice(at, 0, { index: row, score: dot });
          best.pop();
        }
        if (best.length === limit) floor = best[limit - 1]!.score;
      }
    }
  });
  // equal scores by id, so the order does not depend on where a row sits in memory
  return best
    .sort((a, b) => b.score - a.score || (ids[a.index]! < ids[b.index]! ? -1 : 1))
    .map((entry) => ({ id: ids[entry.index]!, distance: 1 - entry.score / (SCALE * SCALE) }));
}
