import { getLogger } from '../log/logger';
import type { Tables } from '../store/tables';
import type { TextsFile } from '../store/texts';
import { describeError } from '../util/result';

/**
 * Chunk texts for the search steps that read code (message matching, focused windows), read by
 * offset from the store's texts file (which keeps recently read texts decoded): a read costs
 * microseconds, so nothing is read ahead. A record that fails its checksum is read from the chunks table instead, so a damaged
 * texts file costs speed, never an answer.
 */
const log = getLogger('search.texts');

export class ChunkTexts {
  constructor(
    private readonly stored: TextsFile,
    private readonly tables: Tables,
  ) {}

  /** The texts of `ids` that exist, in the order asked. */
  async get(ids: Iterable<string>): Promise<Map<string, string>> {
    // callers pass iterators too: read once, kept for the order
    const wanted = [...ids];
    const out = new Map<string, string>();
    const damaged: string[] = [];
    let failure: string | null = null;
    for (const id of wanted) {
      if (out.has(id)) continue;
      const read = this.stored.read(id);
      if (read.ok) {
        if (read.value !== undefined) out.set(id, read.value);
      } else {
        damaged.push(id);
        failure ??= read.error.message;
      }
    }
    if (!damaged.length) return out;
    log.warn('chunk_texts_damaged', { chunks: damaged.length, error: failure });
    return this.withDamaged(wanted, out, damaged);
  }

  /** `found` with the texts the file could not give read from the table, in the order of `ids`. */
  private async withDamaged(
    ids: readonly string[],
    found: ReadonlyMap<string, string>,
    damaged: readonly string[],
  ): Promise<Map<string, string>> {
    const rows = await this.tables.chunkTexts(damaged).catch((cause: unknown) => {
      log.warn('chunk_texts_read_failed', { chunks: damaged.length, error: describeError(cause) });
      return new Map<string, { content: string; fullContent: string | null }>();
    });
    const out = new Map<string, string>();
    for (const id of ids) {
      const row = rows.get(id);
      const text = found.get(id) ?? (row && (row.fullContent ?? row.content));
      if (text !== undefined) out.set(id, text);
    }
    return out;
  }
}
