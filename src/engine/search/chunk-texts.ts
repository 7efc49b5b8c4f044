import { getLogger } from '../log/logger';
import type { ChunkText, Tables } from '../store/tables';
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
  private rowIds: RowIds | null = null;
  private loadingRowIds: Promise<void> | null = null;

  constructor(private readonly tables: Tables) {}

  async get(ids: Iterable<string>): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const text = this.cache.get(id);
      if (text === undefined) missing.push(id);
      else {
        this.cache.delete(id);
        this.cache.set(id, text);
        out.set(id, text);
      }
    }
    if (missing.length) {
      for (const [id, row] of await this.read(missing)) {
        const text = row.fullContent ?? row.content;
        out.set(id, text);
        this.cache.set(id, text);
      }
      while (this.cache.size > CAPACITY) this.cache.delete(this.cache.keys().next().value!);
    }
    return out;
  }

  clear(): void {
    this.cache.clear();
  }

  /** Forgets the texts of the chunks of `paths` and of the folders above them, which a save rebuilds. */
  forget(paths: readonly string[]): void {
    const gone = new Set([...paths, ...paths.flatMap(ancestors)]);
    // a chunk id starts with its file's path, or its folder's for a folder summary (chunkId in index/chunks.ts)
    for (const id of [...this.cache.keys()])
      if (gone.has(id.slice(0, id.indexOf('::')))) this.cache.delete(id);
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
