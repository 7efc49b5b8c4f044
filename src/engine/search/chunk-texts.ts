import { getLogger } from '../log/logger';
import type { ChunkMeta, ChunkText, Tables } from '../store/tables';
import { ancestors } from '../util/paths';
import { describeError } from '../util/result';

/**
 * Chunk texts for the search steps that read code (message matching, focused windows), read from
 * the table and kept in a bounded cache, since the same chunks come back question after question.
 * A change to the index forgets what it rewrote.
 *
 * The table is read by row id where it can be: finding rows by their chunk id costs a lookup in
 * the id index per call, several milliseconds at 200k chunks, a few times what reading the rows
 * directly does. The row ids are read once (in the background, the first time texts are asked
 * for) and used only while the table is at the version they were read at; any write moves rows,
 * so after one the ids are read again, and until then texts are found by chunk id.
 */
const CAPACITY = 4000;

const log = getLogger('search.texts');

interface RowIds {
  readonly version: number;
  readonly rowIds: ReadonlyMap<string, bigint>;
}

export class ChunkTexts {
  private readonly cache = new Map<string, string>();
  /** Counts changes to the index: a read started before one does not fill the cache. */
  private epoch = 0;
  /** Texts being read, by chunk id. */
  private readonly pending = new Map<string, Promise<string | undefined>>();
  private rowIds: RowIds | null = null;
  private loadingRowIds: Promise<void> | null = null;

  constructor(private readonly tables: Tables) {}

  /** The texts of `ids` that exist, in the order asked (whatever was cached or read first). */
  async get(ids: Iterable<string>): Promise<Map<string, string>> {
    const wanted = [...new Set(ids)];
    const missing = wanted.filter((id) => !this.cache.has(id) && !this.pending.has(id));
    if (missing.length) this.start(missing);
    const out = new Map<string, string>();
    for (const id of wanted) {
      const cached = this.cache.get(id);
      if (cached !== undefined) {
        // most recently used last: the cache drops from the front
        this.cache.delete(id);
        this.cache.set(id, cached);
      }
      const text = cached ?? (await this.pending.get(id));
      if (text !== undefined) out.set(id, text);
    }
    return out;
  }

  /**
   * Starts reading texts a later step will ask for, without waiting: the read runs beside the
   * search's own work, and `get` waits for it instead of reading again.
   */
  prefetch(ids: Iterable<string>): void {
    const missing = [...new Set(ids)].filter((id) => !this.cache.has(id) && !this.pending.has(id));
    if (missing.length) this.start(missing);
  }

  /** One read for `ids`, each id's text promised in `pending` until it is in the cache. */
  private start(ids: readonly string[]): void {
    const epoch = this.epoch;
    const read = this.read(ids).then((rows) => {
      // what was read before the index changed is not kept (it may be the old text)
      if (epoch === this.epoch) {
        for (const [id, row] of rows) this.cache.set(id, row.fullContent ?? row.content);
        while (this.cache.size > CAPACITY) this.cache.delete(this.cache.keys().next().value!);
      }
      return rows;
    });
    read.catch((cause: unknown) =>
      log.warn('chunk_texts_read_failed', { chunks: ids.length, error: describeError(cause) }),
    );
    for (const id of ids) {
      const text = read.then((rows) => {
        const row = rows.get(id);
        return row && (row.fullContent ?? row.content);
      });
      this.pending.set(id, text);
      // settled either way, the id is no longer pending; a failed read fails the get awaiting it
      const settled = () => {
        if (this.pending.get(id) === text) this.pending.delete(id);
      };
      void text.then(settled, settled);
    }
  }

  clear(): void {
    this.epoch++;
    this.cache.clear();
    this.pending.clear();
  }

  /** Forgets the texts of the chunks of `paths` and of the folders above them, which a save rebuilds. */
  forget(paths: readonly string[]): void {
    const gone = new Set([...paths, ...paths.flatMap(ancestors)]);
    this.epoch++;
    // a chunk id starts with its file's path, or its folder's for a folder summary (chunkId in index/chunks.ts)
    for (const id of [...this.cache.keys()])
      if (gone.has(id.slice(0, id.indexOf('::')))) this.cache.delete(id);
    for (const id of [...this.pending.keys()])
      if (gone.has(id.slice(0, id.indexOf('::')))) this.pending.delete(id);
  }

  /** By row id those whose row is known at the table's version, by chunk id the rest. */
  private async read(ids: readonly string[]): Promise<Map<string, ChunkText>> {
    const version = await this.tables.chunksVersion();
    const known = this.rowIds?.version === version ? this.rowIds.rowIds : null;
    // not awaited: this read goes by chunk id, the next ones by row
    if (!known) void this.loadRowIds();
    const rows = known
      ? ids.flatMap((id) => {
          const row = known.get(id);
          return row === undefined ? [] : [row];
        })
      : [];
    const found = await this.tables.chunkTextsAt(rows).catch((cause: unknown) => {
      // a write between reading the version and the rows may have moved them
      log.warn('chunk_texts_by_row_failed', { rows: rows.length, error: describeError(cause) });
      this.rowIds = null;
      return new Map<string, ChunkText>();
    });
    const rest = ids.filter((id) => !found.has(id));
    if (rest.length)
      for (const [id, text] of await this.tables.chunkTexts(rest)) found.set(id, text);
    return found;
  }

  /** Reads the row ids now (the first read otherwise starts it, without waiting for it). */
  readRowIds(): Promise<void> {
    return this.loadRowIds();
  }

  private loadRowIds(): Promise<void> {
    if (this.loadingRowIds) return this.loadingRowIds;
    const started = performance.now();
    this.loadingRowIds = this.tables
      .chunkRowIds()
      .then((read) => {
        this.rowIds = read;
        log.info('chunk_row_ids_read', {
          chunks: read?.rowIds.size ?? 0,
          version: read?.version ?? null,
          duration_ms: Math.round(performance.now() - started),
        });
      })
      .catch((cause: unknown) => log.warn('chunk_row_ids_unread', { error: describeError(cause) }))
      .finally(() => (this.loadingRowIds = null));
    return this.loadingRowIds;
  }
}

/**
 * The chunks the later steps of a search read, given its best hits so far: the hits, and the
 * class, file and folder each sits in (shown as its surroundings).
 */
export function withParents(
  ids: readonly string[],
  catalog: ReadonlyMap<string, ChunkMeta>,
): string[] {
  const out = new Set(ids);
  for (const id of ids) {
    const meta = catalog.get(id);
    if (meta?.parentClassId) out.add(meta.parentClassId);
    const file =
      meta?.level === 'file' ? meta : meta?.parentFileId && catalog.get(meta.parentFileId);
    if (file) out.add(file.id);
    if (file && file.parentDirectoryId) out.add(file.parentDirectoryId);
  }
  return [...out];
}
