import type { Tables } from '../store/tables';
import { ancestors } from '../util/paths';

/**
 * Chunk texts for the search steps that read code (message matching, focused windows), fetched
 * from the table in one query per call and kept in a bounded cache, since the same chunks come
 * back question after question. A change to the index forgets what it rewrote.
 */
const CAPACITY = 4000;

export class ChunkTexts {
  private readonly cache = new Map<string, string>();

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
      for (const [id, row] of await this.tables.chunkTexts(missing)) {
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
}
