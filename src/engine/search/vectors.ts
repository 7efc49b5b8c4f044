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

interface Loaded {
  readonly ids: string[];
  /** Each row's level as its position in CHUNK_LEVELS: a byte per row, tested against a mask. */
  readonly levels: Uint8Array;
  /** Row `i` holds the quantised vector of `ids[i]`. */
  readonly codes: Int8Matrix;
  readonly dimensions: number;
}

const LEVEL_CODE = new Map(CHUNK_LEVELS.map((level, index) => [level, index]));

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
    const loaded = await this.read(dimensions, this.tables.vectors(), this.catalog.size);
    log.info('vectors_loaded', {
      chunks: loaded.ids.length,
      dimensions,
      bytes: loaded.ids.length * dimensions,
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
    const stale = (meta: ChunkMeta | undefined) =>
      !meta ||
      (meta.level === 'directory'
        ? folders.has(meta.directoryPath)
        : meta.filePath !== null && changed.has(meta.filePath));
    // one pass over the rows and one over the catalog, with no object per row: a save in a large
    // index keeps almost every row, and allocating per row would cost more than reading the file
    const keep = new Uint8Array(loaded.ids.length);
    let keptCount = 0;
    for (let row = 0; row < loaded.ids.length; row++)
      if (!stale(this.catalog.get(loaded.ids[row]!))) {
        keep[row] = 1;
        keptCount++;
      }
    const fresh: string[] = [];
    for (const meta of this.catalog.values()) if (stale(meta)) fresh.push(meta.id);
    // a chunk neither kept nor re-read (a run that failed half-way): read the whole table again
    if (keptCount + fresh.length !== this.catalog.size) return this.load();
    const added = await this.read(dimensions, this.tables.vectors(fresh), fresh.length);
    const total = keptCount + added.ids.length;
    const codes = int8Matrix(total, dimensions);
    const levels = new Uint8Array(total);
    const ids: string[] = new Array<string>(total);
    let at = 0;
    for (let row = 0; row < loaded.ids.length; row++) {
      if (!keep[row]) continue;
      codes.setRow(at, loaded.codes.row(row));
      levels[at] = loaded.levels[row]!;
      ids[at++] = loaded.ids[row]!;
    }
    for (let row = 0; row < added.ids.length; row++)
      codes.setRow(keptCount + row, added.codes.row(row));
    levels.set(added.levels, keptCount);
    added.ids.forEach((id, i) => (ids[keptCount + i] = id));
    log.info('vectors_refreshed', {
      files: changed.size,
      kept: keptCount,
      read: added.ids.length,
      duration_ms: Math.round(performance.now() - started),
    });
    return { ids, levels, codes, dimensions };
  }

  /** Quantises the rows of `vectors` into one block of codes. */
  private async read(
    dimensions: number,
    vectors: AsyncIterable<VectorBatch>,
    expected: number,
  ): Promise<Loaded> {
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
    const matrix = int8Matrix(ids.length, dimensions);
    for (let row = 0; row < ids.length; row++)
      matrix.setRow(row, codes.subarray(row * dimensions, (row + 1) * dimensions));
    return { ids, levels: levels.slice(0, ids.length), codes: matrix, dimensions };
  }
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
  for (let row = 0; row < ids.length; row++) {
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
