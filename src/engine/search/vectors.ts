import { CHUNK_LEVELS, type ChunkLevel } from '../model';
import { getLogger } from '../log/logger';
import type { ChunkMeta, Tables, VectorBatch } from '../store/tables';
import { ancestors } from '../util/paths';
import { int8Matrix, type Int8Matrix } from './int8-dots';

/**
 * Nearest chunks by cosine similarity, scanned in memory: the vectors are read from the table once
 * (on the first search after a change), quantised to 8 bits per dimension (a quarter of the memory,
 * with rankings that match float search to well within the noise of a small embedding model), and
 * scanned whole — faster than a query through the database for any workspace that fits. Larger
 * workspaces keep searching the table itself. After a save only the saved files' vectors (and those
 * of the folders above them, whose summaries follow their files) are read again, not the whole table.
 */
export interface Neighbour {
  readonly id: string;
  readonly distance: number;
}

/** Above this many chunks (≈50 MB of 256-dimension vectors) the table is searched instead. */
const MAX_IN_MEMORY = 200_000;
/** A change to more files than this (a branch switch) reads the whole table again. */
const REFRESH_MAX_FILES = 500;
const SCALE = 127;

const log = getLogger('search.vectors');

/**
 * The vectors in memory. A save marks its files' old rows dead and appends their new ones in the
 * spare rows at the end, so it costs what it changed; the rows are packed again only when the spare
 * rows run out or a quarter of the used ones are dead.
 */
interface Loaded {
  /** Row `i` holds the quantised vector of `ids[i]`; a dead row's id is ''. */
  readonly ids: string[];
  /** Each row's level as its position in CHUNK_LEVELS (DEAD for a dead or spare row). */
  readonly levels: Uint8Array;
  /** The rows, spare ones included. */
  readonly codes: Int8Matrix;
  readonly dimensions: number;
  /** The rows of each file's chunks and of each folder's summary, by `ownerOf`. */
  readonly rowsOf: Map<string, number[]>;
  /** Rows written so far, dead ones included; the rest are spare. */
  used: number;
  dead: number;
}

/** Vectors as read from the table, before they are packed into a matrix. */
interface ReadRows {
  readonly ids: string[];
  readonly levels: Uint8Array;
  readonly codes: Int8Array;
}

const LEVEL_CODE = new Map(CHUNK_LEVELS.map((level, index) => [level, index]));
/** A level code no search mask has a bit for (shifts take their count modulo 32). */
const DEAD = 31;

/** What a save replaces a chunk's vector with: its file's chunks, or its folder's summary. */
function ownerOf(meta: ChunkMeta): string | null {
  if (meta.level === 'directory') return `d:${meta.directoryPath}`;
  return meta.filePath === null ? null : `f:${meta.filePath}`;
}

/** Spare rows kept after the used ones: about 3%, so a scan does little extra work. */
function spareRows(used: number): number {
  return Math.max(256, used >> 5);
}

export class VectorScan {
  private loading: Promise<Loaded | null> | null = null;

  constructor(
    private readonly tables: Tables,
    private readonly catalog: ReadonlyMap<string, ChunkMeta>,
  ) {}

  /** Forgets the vectors; the next search reads them again. */
  clear(): void {
    this.loading = null;
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
    const loaded = await this.loading;
    if (!loaded) return this.tables.nearest(vector, limit, levels);
    let mask = 0;
    for (const level of levels) mask |= 1 << LEVEL_CODE.get(level)!;
    return scan(loaded, vector, limit, mask);
  }

  private async load(): Promise<Loaded | null> {
    const dimensions = this.tables.dimensions;
    if (!dimensions || this.catalog.size > MAX_IN_MEMORY) return null;
    const started = performance.now();
    const read = await this.read(dimensions, this.tables.vectors(), this.catalog.size);
    const loaded = this.pack(dimensions, [read]);
    log.info('vectors_loaded', {
      chunks: read.ids.length,
      dimensions,
      bytes: read.ids.length * dimensions,
      duration_ms: Math.round(performance.now() - started),
    });
    return loaded;
  }

  private async patch(loaded: Loaded, changed: ReadonlySet<string>): Promise<Loaded | null> {
    const dimensions = this.tables.dimensions;
    if (!dimensions || dimensions !== loaded.dimensions || this.catalog.size > MAX_IN_MEMORY)
      return this.load();
    const started = performance.now();
    // the folders above a changed file have their summaries rebuilt, and no others
    const folders = new Set([...changed].flatMap(ancestors));
    const staleOwners = [
      ...[...changed].map((file) => `f:${file}`),
      ...[...folders].map((folder) => `d:${folder}`),
    ];
    const staleRows = staleOwners.flatMap((owner) => loaded.rowsOf.get(owner) ?? []);
    const fresh: string[] = [];
    for (const meta of this.catalog.values())
      if (
        meta.level === 'directory'
          ? folders.has(meta.directoryPath)
          : meta.filePath !== null && changed.has(meta.filePath)
      )
        fresh.push(meta.id);
    const kept = loaded.used - loaded.dead - staleRows.length;
    // a chunk neither kept nor re-read (a run that failed half-way): read the whole table again
    if (kept + fresh.length !== this.catalog.size) return this.load();
    const added = await this.read(dimensions, this.tables.vectors(fresh), fresh.length);
    // marked only now, with the new rows at once: a search never sees a file without its rows
    for (const row of staleRows) {
      loaded.levels[row] = DEAD;
      loaded.ids[row] = '';
    }
    for (const owner of staleOwners) loaded.rowsOf.delete(owner);
    loaded.dead += staleRows.length;
    const fits = loaded.used + added.ids.length <= loaded.codes.rows;
    const patched =
      fits && loaded.dead * 4 <= loaded.used
        ? this.append(loaded, added)
        : this.pack(dimensions, [liveRows(loaded), added]);
    log.info('vectors_refreshed', {
      files: changed.size,
      kept,
      read: added.ids.length,
      packed: patched !== loaded,
      duration_ms: Math.round(performance.now() - started),
    });
    return patched;
  }

  /** Writes `added` into the spare rows of `loaded`. */
  private append(loaded: Loaded, added: ReadRows): Loaded {
    const { dimensions } = loaded;
    for (let i = 0; i < added.ids.length; i++) {
      const row = loaded.used++;
      loaded.codes.setRow(row, added.codes.subarray(i * dimensions, (i + 1) * dimensions));
      loaded.levels[row] = added.levels[i]!;
      loaded.ids[row] = added.ids[i]!;
      this.track(loaded, row);
    }
    return loaded;
  }

  /** One matrix of the rows read, with spare rows after them. */
  private pack(dimensions: number, parts: readonly ReadRows[]): Loaded {
    const used = parts.reduce((sum, part) => sum + part.ids.length, 0);
    const capacity = used + spareRows(used);
    const loaded: Loaded = {
      ids: new Array<string>(capacity).fill(''),
      levels: new Uint8Array(capacity).fill(DEAD),
      codes: int8Matrix(capacity, dimensions),
      dimensions,
      rowsOf: new Map(),
      used: 0,
      dead: 0,
    };
    for (const part of parts) this.append(loaded, part);
    return loaded;
  }

  private track(loaded: Loaded, row: number): void {
    const meta = this.catalog.get(loaded.ids[row]!);
    const owner = meta ? ownerOf(meta) : null;
    if (owner === null) return;
    const rows = loaded.rowsOf.get(owner);
    if (rows) rows.push(row);
    else loaded.rowsOf.set(owner, [row]);
  }

  /** Quantises the rows of `vectors`. */
  private async read(
    dimensions: number,
    vectors: AsyncIterable<VectorBatch>,
    expected: number,
  ): Promise<ReadRows> {
    const ids: string[] = [];
    let levels = new Uint8Array(Math.max(1, expected));
    let codes = new Int8Array(Math.max(1, expected) * dimensions);
    for await (const batch of vectors) {
      for (let row = 0; row < batch.ids.length; row++) {
        if ((ids.length + 1) * dimensions > codes.length) {
          const grown = new Int8Array(codes.length * 2);
          grown.set(codes);
          codes = grown;
          const grownLevels = new Uint8Array(levels.length * 2);
          grownLevels.set(levels);
          levels = grownLevels;
        }
        quantise(
          batch.values.subarray(row * dimensions, (row + 1) * dimensions),
          codes,
          ids.length * dimensions,
        );
        levels[ids.length] = LEVEL_CODE.get(batch.levels[row]!)!;
        ids.push(batch.ids[row]!);
      }
    }
    return { ids, levels, codes };
  }
}

/** The live rows of `loaded`, in row order, as rows read. */
function liveRows(loaded: Loaded): ReadRows {
  const { dimensions } = loaded;
  const live = loaded.used - loaded.dead;
  const ids = new Array<string>(live);
  const levels = new Uint8Array(live);
  const codes = new Int8Array(live * dimensions);
  let at = 0;
  for (let row = 0; row < loaded.used; row++) {
    if (loaded.levels[row] === DEAD) continue;
    ids[at] = loaded.ids[row]!;
    levels[at] = loaded.levels[row]!;
    codes.set(loaded.codes.row(row), at * dimensions);
    at++;
  }
  return { ids, levels, codes };
}

/** Writes `vector`, scaled to unit length, as signed bytes at `offset`. */
function quantise(vector: Float32Array, codes: Int8Array, offset: number): void {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!;
  const factor = norm > 0 ? SCALE / Math.sqrt(norm) : 0;
  for (let i = 0; i < vector.length; i++) codes[offset + i] = Math.round(vector[i]! * factor);
}

/** One pass over the dot products; `mask` has bit `i` set when level `CHUNK_LEVELS[i]` is wanted. */
function scan(loaded: Loaded, vector: Float32Array, limit: number, mask: number): Neighbour[] {
  const { codes, dimensions, ids, levels } = loaded;
  const query = new Int8Array(dimensions);
  quantise(vector, query, 0);
  const dots = codes.dots(query);
  const best: { index: number; score: number }[] = [];
  // once the list is full, the weakest score it holds: most rows are passed by this one comparison
  let floor = -Infinity;
  for (let row = 0; row < loaded.used; row++) {
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
  // equal scores by id, so the order does not depend on where a row sits in memory
  return best
    .sort((a, b) => b.score - a.score || (ids[a.index]! < ids[b.index]! ? -1 : 1))
    .map((entry) => ({ id: ids[entry.index]!, distance: 1 - entry.score / (SCALE * SCALE) }));
}
