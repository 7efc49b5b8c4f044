import { getLogger } from '../log/logger';
import type { TextsFile } from '../store/texts';

/**
 * Chunk texts for the search steps that read code (message matching, focused windows), read by
 * offset from the store's texts file (which keeps recently read texts decoded): a read costs
 * microseconds, so nothing is read ahead. The texts file is the only copy of the texts. Opening
 * the store checks every record, so a record failing its checksum here was damaged since: its
 * chunk is left out of this answer with a warning, and the next opening finds the damage and
 * rebuilds the index with a notice.
 */
const log = getLogger('search.texts');

/** Chunk texts by id, as a Map of them gives them: undefined for a chunk with none to read. */
export interface TextLookup {
  get(id: string): string | undefined;
}

export class ChunkTexts {
  constructor(private readonly stored: TextsFile) {}

  /**
   * The texts of chunks, each read when first asked for and kept by this lookup: for a step that
   * may need the texts of few of many chunks (a damaged record is left out with a warning).
   */
  lookup(): TextLookup {
    const read = new Map<string, string | undefined>();
    return {
      get: (id) => {
        if (!read.has(id)) read.set(id, this.readOne(id));
        return read.get(id);
      },
    };
  }

  private readOne(id: string): string | undefined {
    const read = this.stored.read(id);
    if (read.ok) return read.value;
    log.warn('chunk_texts_damaged', { chunks: 1, error: read.error.message });
    return undefined;
  }

  /** The texts of `ids` that exist and can be read, in the order asked. */
  get(ids: Iterable<string>): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    let damaged = 0;
    let failure: string | null = null;
    for (const id of ids) {
      if (out.has(id)) continue;
      const read = this.stored.read(id);
      if (read.ok) {
        if (read.value !== undefined) out.set(id, read.value);
      } else {
        damaged++;
        failure ??= read.error.message;
      }
    }
    if (damaged) log.warn('chunk_texts_damaged', { chunks: damaged, error: failure });
    return Promise.resolve(out);
  }
}
