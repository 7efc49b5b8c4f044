import type { Chunk, ChunkLevel } from '../model';

/**
 * Vectors of chunk rows whose content this process knows, kept so that search, which reads back
 * the vectors of the chunks a save changed and of the folders above them, takes them from memory
 * instead of querying the table it has just written: at 10k files that query took 16 ms of a
 * save's way to searchable, and 30-40 ms on the first save after opening. Two kinds are kept: the
 * rows of a small write (a save's), and the folder summaries' rows met by any read (a save reads
 * them back though it seldom rewrites them; there are few of them). What is kept is always what
 * the table holds: an entry goes before its row is deleted or written again and once more after (a
 * read under way meanwhile may have kept the old row), a rollback drops them all, a read that a
 * change overtook keeps nothing, and an id not kept is read from the table.
 */

/** Bytes of vectors kept: 16,384 rows of the shipped model's 64 dimensions. */
const KEPT_BYTES = 4 * 1024 * 1024;
/**
 * A write of more than this share of what is kept is not kept: a save writes tens to hundreds of
 * rows, an index run thousands per batch, whose vectors nothing reads back (search has not read
 * the table yet) and which would only be copied to be dropped again.
 */
const WRITE_SHARE = 1 / 8;

interface Kept {
  readonly level: ChunkLevel;
  readonly filePath: string | null;
  readonly vector: Float32Array;
}

/** Vectors of a batch of chunks: row `i`'s at `values[i × dimensions …]`. */
export interface VectorBatch {
  readonly ids: string[];
  readonly levels: ChunkLevel[];
  readonly values: Float32Array;
}

/** Where a read started: what it reads is kept only if no row changed since. */
export type ReadMark = number;

export class KnownVectors {
  private readonly kept = new Map<string, Kept>();
  /**
   * The ids kept of each file: a save forgets its files' rows twice, and going through every kept
   * row for them (the folders' summaries at 100k files are thousands) took ~8 ms a save.
   */
  private readonly idsOfFile = new Map<string, Set<string>>();
  private readonly capacity: number;
  private readonly largestWrite: number;
  /** Counts the changes to the table's rows: a read that started before one keeps nothing. */
  private changes = 0;

  constructor(
    private readonly dimensions: number,
    keptBytes = KEPT_BYTES,
  ) {
    this.capacity = Math.floor(keptBytes / (4 * Math.max(1, dimensions)));
    this.largestWrite = Math.floor(this.capacity * WRITE_SHARE);
  }

  get size(): number {
    return this.kept.size;
  }

  /** Before the rows of `ids` are deleted or written again. */
  forget(ids: Iterable<string>): void {
    this.changes++;
    for (const id of ids) this.drop(id);
  }

  /** Before the rows of `paths` are deleted. */
  forgetFiles(paths: readonly string[]): void {
    this.changes++;
    for (const path of paths) {
      for (const id of this.idsOfFile.get(path) ?? []) this.kept.delete(id);
      this.idsOfFile.delete(path);
    }
  }

  /** Before the table goes back to another version. */
  clear(): void {
    this.changes++;
    this.kept.clear();
    this.idsOfFile.clear();
  }

  /**
   * After `chunks` were added with `vectors` and forgotten (a chunk without a vector is read from
   * the table).
   */
  written(chunks: readonly Chunk[], vectors: ReadonlyMap<string, Float32Array> | null): void {
    if (chunks.length > this.largestWrite) return;
    // the rows of earlier saves make room; the folders' stay, as no later read brings them back
    if (this.kept.size + chunks.length > this.capacity)
      for (const [id, kept] of this.kept) if (kept.level !== 'directory') this.drop(id);
    if (this.kept.size + chunks.length > this.capacity) return;
    for (const chunk of chunks) {
      const vector = vectors?.get(chunk.id);
      if (vector?.length === this.dimensions)
        this.keep(chunk.id, chunk.level, chunk.filePath, vector);
    }
  }

  /** Marks the start of a read, for `read`. */
  mark(): ReadMark {
    return this.changes;
  }

  /** After a read that started at `mark` gave `rows`: their folder summaries are kept. */
  read(rows: VectorBatch, mark: ReadMark): void {
    if (mark !== this.changes) return;
    rows.levels.forEach((level, row) => {
      if (level !== 'directory' || this.kept.size >= this.capacity) return;
      const at = row * this.dimensions;
      this.keep(rows.ids[row]!, level, null, rows.values.subarray(at, at + this.dimensions));
    });
  }

  /** The kept vectors of `ids` (each once), and the ids to read from the table. */
  take(ids: readonly string[]): VectorBatch & { readonly missing: string[] } {
    const found: string[] = [];
    const missing: string[] = [];
    for (const id of new Set(ids)) (this.kept.has(id) ? found : missing).push(id);
    const values = new Float32Array(found.length * this.dimensions);
    const levels = found.map((id, row) => {
      const kept = this.kept.get(id)!;
      values.set(kept.vector, row * this.dimensions);
      return kept.level;
    });
    return { ids: found, levels, values, missing };
  }

  private keep(id: string, level: ChunkLevel, filePath: string | null, vector: Float32Array): void {
    this.drop(id);
    // a copy: the vector may be a view on a whole batch's buffer
    this.kept.set(id, { level, filePath, vector: Float32Array.from(vector) });
    if (filePath === null) return;
    const ids = this.idsOfFile.get(filePath);
    if (ids) ids.add(id);
    else this.idsOfFile.set(filePath, new Set([id]));
  }

  private drop(id: string): void {
    const kept = this.kept.get(id);
    if (!kept) return;
    this.kept.delete(id);
    if (kept.filePath === null) return;
    const ids = this.idsOfFile.get(kept.filePath);
    ids?.delete(id);
    if (ids && !ids.size) this.idsOfFile.delete(kept.filePath);
  }
}
