import { createReadStream, promises as fs } from 'node:fs';
import { createInterface } from 'node:readline';
import * as path from 'node:path';
import { z } from 'zod';
import { CHUNK_LEVELS, type ChunkLevel } from '../model';
import { writeFileAtomic } from '../util/atomic-file';

/**
 * The lexical segment: per chunk level, a posting list per term (the chunks holding it, in
 * ascending id order, each with its term frequency and whether a name holds it, in typed arrays)
 * and beside them per-chunk lengths and per-level document frequencies: what BM25 needs, laid out
 * so a top-k search can skip through the lists instead of scoring every chunk.
 *
 * Updates are cheap: a removed chunk becomes a tombstone (dropped from the lists when tombstones
 * outgrow a quarter of the live chunks), new chunks are appended, and both are logged to a delta
 * file; a snapshot is written after large batches. Snapshots are a JSON header followed by the
 * term arrays in binary, so large indexes load fast; the posting lists are rebuilt from them.
 */
export interface LexicalDocument {
  readonly chunkId: string;
  readonly path: string;
  readonly level: ChunkLevel;
  /** Term counts of the chunk's text. */
  readonly terms: ReadonlyMap<string, number>;
  /** Terms of its names (symbol, file stem, folders): boosted at query time. */
  readonly nameTerms: readonly string[];
}

export interface DocumentStats {
  readonly chunkId: string;
  readonly path: string;
  readonly level: ChunkLevel;
  readonly length: number;
  /** Frequency of `term` in the chunk's text (0 when absent). */
  termFrequency(term: string): number;
  hasNameTerm(term: string): boolean;
}

interface DocRecord {
  readonly chunkId: string;
  readonly path: string;
  readonly level: ChunkLevel;
  readonly length: number;
  /** Sorted term ids with their counts, searched by bisection. */
  readonly termIds: Uint32Array;
  readonly counts: Uint32Array;
  readonly nameTermIds: Uint32Array;
}

/**
 * The chunks of one level holding one term, ascending by chunk id. `payload` packs the term's
 * frequency in the chunk's text with a low bit set when one of the chunk's names holds it.
 */
export interface PostingList {
  readonly docs: Int32Array;
  readonly payload: Int32Array;
  readonly size: number;
}

/**
 * The posting lists of one level, all in one arena of two typed arrays (chunk ids, payloads):
 * a vocabulary of hundreds of thousands of terms, most held by a chunk or two, costs no object
 * per term. Per-term columns say where each list starts, its size and its room. A full list
 * moves to the arena's end with twice the room; the room it left is reclaimed by `settle()`.
 */
class LevelPostings {
  private docs = new Int32Array(1024);
  private payload = new Int32Array(1024);
  private used = 0;
  /** Room left behind by lists that moved. */
  private abandoned = 0;
  private start = new Int32Array(1024);
  private size = new Int32Array(1024);
  private room = new Int32Array(1024);

  list(termId: number): PostingList | undefined {
    if (termId >= this.size.length || !this.size[termId]) return undefined;
    const from = this.start[termId]!;
    const size = this.size[termId]!;
    return {
      docs: this.docs.subarray(from, from + size),
      payload: this.payload.subarray(from, from + size),
      size,
    };
  }

  append(termId: number, docId: number, tf: number, named: boolean): void {
    this.growTerms(termId);
    if (this.size[termId] === this.room[termId])
      this.relocate(termId, Math.max(2, this.room[termId]! * 2));
    const from = this.start[termId]!;
    // ids only grow, so appending keeps the list sorted; anything else is placed in order
    let at = from + this.size[termId]!;
    while (at > from && this.docs[at - 1]! > docId) at--;
    const end = from + this.size[termId]!;
    this.docs.copyWithin(at + 1, at, end);
    this.payload.copyWithin(at + 1, at, end);
    this.docs[at] = docId;
    this.payload[at] = (tf << 1) | (named ? 1 : 0);
    this.size[termId]!++;
  }

  /**
   * Lays out empty lists with exactly `sizes[term]` places each, end to end, before a bulk load
   * appends that many postings per term: nothing moves while they are appended.
   */
  reserve(sizes: Int32Array): void {
    if (this.used) throw new Error('postings can only be reserved before any is added');
    if (sizes.length) this.growTerms(sizes.length - 1);
    let at = 0;
    for (let term = 0; term < sizes.length; term++) {
      this.start[term] = at;
      this.size[term] = 0;
      this.room[term] = sizes[term]!;
      at += sizes[term]!;
    }
    this.docs = new Int32Array(Math.max(1024, at));
    this.payload = new Int32Array(this.docs.length);
    this.used = at;
    this.abandoned = 0;
  }

  /** Packs the lists end to end with no spare room: after a bulk load, or once much room is left behind. */
  settle(force = false): void {
    if (!force && this.abandoned < this.used / 2) return;
    let total = 0;
    for (let term = 0; term < this.size.length; term++) total += this.size[term]!;
    const docs = new Int32Array(Math.max(1024, total));
    const payload = new Int32Array(docs.length);
    let at = 0;
    for (let term = 0; term < this.size.length; term++) {
      const size = this.size[term]!;
      const from = this.start[term]!;
      docs.set(this.docs.subarray(from, from + size), at);
      payload.set(this.payload.subarray(from, from + size), at);
      this.start[term] = at;
      this.room[term] = size;
      at += size;
    }
    this.docs = docs;
    this.payload = payload;
    this.used = at;
    this.abandoned = 0;
  }

  private relocate(termId: number, room: number): void {
    if (this.used + room > this.docs.length) {
      const capacity = Math.max(this.used + room, this.docs.length * 2);
      const docs = new Int32Array(capacity);
      docs.set(this.docs.subarray(0, this.used));
      this.docs = docs;
      const payload = new Int32Array(capacity);
      payload.set(this.payload.subarray(0, this.used));
      this.payload = payload;
    }
    const from = this.start[termId]!;
    const size = this.size[termId]!;
    this.docs.copyWithin(this.used, from, from + size);
    this.payload.copyWithin(this.used, from, from + size);
    this.abandoned += this.room[termId]!;
    this.start[termId] = this.used;
    this.room[termId] = room;
    this.used += room;
  }

  private growTerms(termId: number): void {
    if (termId < this.size.length) return;
    const length = Math.max(termId + 1, this.size.length * 2);
    const grown = (column: Int32Array): Int32Array<ArrayBuffer> => {
      const next = new Int32Array(length);
      next.set(column);
      return next;
    };
    this.start = grown(this.start);
    this.size = grown(this.size);
    this.room = grown(this.room);
  }
}

const SNAPSHOT_VERSION = 2;
const LEVEL_INDEX = new Map(CHUNK_LEVELS.map((level, index) => [level, index]));

/** Counts per term id that grow with the vocabulary. */
class TermCounts {
  private counts = new Int32Array(1024);

  get(id: number): number {
    return id < this.counts.length ? this.counts[id]! : 0;
  }

  /** Adds `delta` and returns the new count. */
  add(id: number, delta: number): number {
    if (id >= this.counts.length) {
      const grown = new Int32Array(Math.max(id + 1, this.counts.length * 2));
      grown.set(this.counts);
      this.counts = grown;
    }
    return (this.counts[id]! += delta);
  }
}

export class LexicalIndex {
  private readonly postingLists = new Map<ChunkLevel, LevelPostings>();
  /** Length of each chunk's text by chunk id, and whether the chunk is live (not a tombstone). */
  private lengths = new Int32Array(1024);
  private live = new Uint8Array(1024);
  private readonly docs = new Map<number, DocRecord>();
  private readonly byPath = new Map<string, number[]>();
  private readonly termIds = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly documentFrequency = new Map<ChunkLevel, TermCounts>();
  private readonly totalLength = new Map<ChunkLevel, number>();
  private readonly liveCount = new Map<ChunkLevel, number>();
  private readonly tombstones = new Set<number>();
  /** Chunks holding each term at any level; a term is in the vocabulary while this is above 0. */
  private readonly termDocuments = new TermCounts();
  private liveTerms = 0;
  private nextDocId = 1;

  constructor() {
    for (const level of CHUNK_LEVELS) {
      this.postingLists.set(level, new LevelPostings());
      this.documentFrequency.set(level, new TermCounts());
      this.totalLength.set(level, 0);
      this.liveCount.set(level, 0);
    }
  }

  /** Every doc id, live or not, is below this. */
  get docIdLimit(): number {
    return this.nextDocId;
  }

  get size(): number {
    return this.docs.size;
  }

  get tombstoneCount(): number {
    return this.tombstones.size;
  }

  get vocabularySize(): number {
    return this.liveTerms;
  }

  add(documents: readonly LexicalDocument[]): void {
    for (const document of documents) this.addOne(document);
    for (const postings of this.postingLists.values()) postings.settle();
  }

  removePaths(paths: Iterable<string>): void {
    for (const filePath of paths) {
      const ids = this.byPath.get(filePath);
      if (!ids) continue;
      this.byPath.delete(filePath);
      for (const docId of ids) this.removeDoc(docId);
    }
  }

  /** Documents of `level` holding `term` in their text or names, ascending (tombstones excluded). */
  postings(level: ChunkLevel, term: string): number[] {
    const list = this.postingList(level, term);
    const out: number[] = [];
    for (let i = 0; i < (list?.size ?? 0); i++)
      if (this.isLive(list!.docs[i]!)) out.push(list!.docs[i]!);
    return out;
  }

  /** The raw posting list of `term` at `level`; it may hold tombstones (see `isLive`). */
  postingList(level: ChunkLevel, term: string): PostingList | undefined {
    const id = this.termIds.get(term);
    return id === undefined ? undefined : this.postingLists.get(level)!.list(id);
  }

  isLive(docId: number): boolean {
    return this.live[docId] === 1;
  }

  /** The length of a live chunk's text (its number of terms, counted with repeats). */
  lengthOf(docId: number): number {
    return this.lengths[docId]!;
  }

  document(docId: number): DocumentStats | undefined {
    const record = this.docs.get(docId);
    if (!record) return undefined;
    return {
      chunkId: record.chunkId,
      path: record.path,
      level: record.level,
      length: record.length,
      termFrequency: (term) => {
        const id = this.termIds.get(term);
        if (id === undefined) return 0;
        const at = bisect(record.termIds, id);
        return at >= 0 ? record.counts[at]! : 0;
      },
      hasNameTerm: (term) => {
        const id = this.termIds.get(term);
        return id !== undefined && record.nameTermIds.includes(id);
      },
    };
  }

  /** The live chunks indexed under `path`: a file's chunks at every level, for scoring whole files. */
  documentsAt(path: string): DocumentStats[] {
    return (this.byPath.get(path) ?? [])
      .filter((docId) => this.isLive(docId))
      .map((docId) => this.document(docId)!);
  }

  /** The distinct terms of a chunk's text. */
  termsOf(docId: number): string[] {
    const record = this.docs.get(docId);
    return record ? Array.from(record.termIds, (id) => this.terms[id]!) : [];
  }

  documentFrequencyOf(level: ChunkLevel, term: string): number {
    const id = this.termIds.get(term);
    return id === undefined ? 0 : this.documentFrequency.get(level)!.get(id);
  }

  levelStats(level: ChunkLevel): { documents: number; averageLength: number } {
    const documents = this.liveCount.get(level)!;
    return { documents, averageLength: documents ? this.totalLength.get(level)! / documents : 0 };
  }

  /** Every term present in some live chunk: the index vocabulary the technicality scorer uses. */
  vocabulary(): Set<string> {
    return new Set(this.terms.filter((_, id) => this.termDocuments.get(id) > 0));
  }

  /**
   * The terms first seen after the first `start` (terms keep their order of arrival, so a reader
   * can follow the vocabulary as it grows); some may no longer be in a live chunk.
   */
  termsSince(start: number): { terms: string[]; next: number } {
    return { terms: this.terms.slice(start), next: this.terms.length };
  }

  hasTerm(term: string): boolean {
    const id = this.termIds.get(term);
    return id !== undefined && this.termDocuments.get(id) > 0;
  }

  /** Every live chunk with its length and term counts, for checks and statistics. */
  *documents(): IterableIterator<{
    chunkId: string;
    path: string;
    level: ChunkLevel;
    length: number;
    terms: Map<string, number>;
  }> {
    for (const record of this.docs.values()) {
      const terms = new Map<string, number>();
      record.termIds.forEach((id, i) => terms.set(this.terms[id]!, record.counts[i]!));
      yield {
        chunkId: record.chunkId,
        path: record.path,
        level: record.level,
        length: record.length,
        terms,
      };
    }
  }

  /** Rebuilds the posting lists without tombstones, when they outgrow a quarter of the live chunks. */
  compactIfNeeded(): boolean {
    if (this.tombstones.size === 0 || this.tombstones.size < this.docs.size / 4) return false;
    for (const level of CHUNK_LEVELS) this.postingLists.set(level, new LevelPostings());
    for (const [docId, record] of this.docs) this.post(docId, record);
    for (const postings of this.postingLists.values()) postings.settle(true);
    this.tombstones.clear();
    return true;
  }

  async writeSnapshot(file: string): Promise<void> {
    const records = [...this.docs];
    const header = {
      version: SNAPSHOT_VERSION,
      nextDocId: this.nextDocId,
      terms: this.terms,
      tombstones: [...this.tombstones],
      docs: {
        ids: records.map(([docId]) => docId),
        chunkIds: records.map(([, record]) => record.chunkId),
        paths: records.map(([, record]) => record.path),
        levels: records.map(([, record]) => LEVEL_INDEX.get(record.level)!),
        lengths: records.map(([, record]) => record.length),
        termCounts: records.map(([, record]) => record.termIds.length),
        nameCounts: records.map(([, record]) => record.nameTermIds.length),
      },
      // the posting lists are rebuilt from the records; the field stays for older readers
      flex: {},
    };
    const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
    const totalTerms = records.reduce((sum, [, record]) => sum + record.termIds.length, 0);
    const totalNames = records.reduce((sum, [, record]) => sum + record.nameTermIds.length, 0);
    const body = new Uint32Array(totalTerms * 2 + totalNames);
    let at = 0;
    for (const [, record] of records) {
      body.set(record.termIds, at);
      body.set(record.counts, at + record.termIds.length);
      body.set(record.nameTermIds, at + record.termIds.length * 2);
      at += record.termIds.length * 2 + record.nameTermIds.length;
    }
    const length = Buffer.alloc(4);
    length.writeUInt32LE(headerBytes.length);
    const padding = Buffer.alloc((4 - ((4 + headerBytes.length) % 4)) % 4);
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(
      file,
      Buffer.concat([length, headerBytes, padding, Buffer.from(body.buffer)]),
    );
  }

  static async readSnapshot(file: string): Promise<LexicalIndex> {
    const bytes = await fs.readFile(file);
    if (bytes.length < 4) throw new Error('the lexical snapshot is truncated');
    const headerLength = bytes.readUInt32LE(0);
    if (4 + headerLength > bytes.length) throw new Error('the lexical snapshot is truncated');
    const header = SnapshotHeader.parse(
      JSON.parse(bytes.subarray(4, 4 + headerLength).toString('utf8')),
    );
    const bodyStart = 4 + headerLength + ((4 - ((4 + headerLength) % 4)) % 4);
    const body = new Uint32Array(new Uint8Array(bytes.subarray(bodyStart)).buffer);
    const { docs } = header;
    const count = docs.ids.length;
    for (const column of [
      docs.chunkIds,
      docs.paths,
      docs.levels,
      docs.lengths,
      docs.termCounts,
      docs.nameCounts,
    ]) {
      if (column.length !== count)
        throw new Error('the lexical snapshot has columns of different lengths');
    }
    const expected =
      docs.termCounts.reduce((sum, n) => sum + n * 2, 0) +
      docs.nameCounts.reduce((sum, n) => sum + n, 0);
    if (body.length !== expected)
      throw new Error('the lexical snapshot body does not match its header');

    const index = new LexicalIndex();
    index.nextDocId = header.nextDocId;
    header.terms.forEach((term, id) => {
      index.terms.push(term);
      index.termIds.set(term, id);
    });
    // postings of tombstoned chunks are not rebuilt: nothing is left to remove
    header.tombstones.forEach((docId) => index.tombstones.add(docId));
    // every list gets its exact room first, so no list moves while the chunks are posted
    const sizes = new Map(
      CHUNK_LEVELS.map((level) => [level, new Int32Array(header.terms.length)]),
    );
    for (let i = 0, at = 0; i < count; i++) {
      const terms = docs.termCounts[i]!;
      const names = docs.nameCounts[i]!;
      const level = CHUNK_LEVELS[docs.levels[i]!];
      if (!level) throw new Error('the lexical snapshot names an unknown level');
      const counts = sizes.get(level)!;
      const termIds = body.subarray(at, at + terms);
      for (const id of termIds) counts[id]!++;
      for (const id of body.subarray(at + terms * 2, at + terms * 2 + names))
        if (bisect(termIds, id) < 0) counts[id]!++;
      at += terms * 2 + names;
    }
    for (const [level, counts] of sizes) index.postingLists.get(level)!.reserve(counts);
    let at = 0;
    for (let i = 0; i < count; i++) {
      const terms = docs.termCounts[i]!;
      const names = docs.nameCounts[i]!;
      const level = CHUNK_LEVELS[docs.levels[i]!];
      if (!level) throw new Error('the lexical snapshot names an unknown level');
      index.register(docs.ids[i]!, {
        chunkId: docs.chunkIds[i]!,
        path: docs.paths[i]!,
        level,
        length: docs.lengths[i]!,
        termIds: body.subarray(at, at + terms),
        counts: body.subarray(at + terms, at + terms * 2),
        nameTermIds: body.subarray(at + terms * 2, at + terms * 2 + names),
      });
      at += terms * 2 + names;
    }
    return index;
  }

  /**
   * Writes one batch of changes to the delta log at `offset` (the end of what is committed or
   * already written by this write), flushed before returning; returns the log's new length.
   * Anything past `offset` was left by a write that never committed and is overwritten.
   */
  static async appendDelta(
    file: string,
    removedPaths: readonly string[],
    added: readonly LexicalDocument[],
    offset: number,
  ): Promise<number> {
    const line = JSON.stringify({
      remove: removedPaths,
      add: added.map((document) => ({
        chunkId: document.chunkId,
        path: document.path,
        level: document.level,
        terms: [...document.terms],
        names: document.nameTerms,
      })),
    });
    const bytes = Buffer.from(`${line}\n`, 'utf8');
    await fs.mkdir(path.dirname(file), { recursive: true });
    const handle = await fs.open(file, 'a+');
    try {
      await handle.truncate(offset);
      await handle.write(bytes, 0, bytes.length, offset);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return offset + bytes.length;
  }

  /**
   * Replays the first `committedBytes` of a delta log, line by line as it streams in (a log of
   * any length is never read as one string). Every committed line must be whole and valid:
   * anything else means the log is damaged. Returns the lines applied.
   */
  async replayDelta(file: string, committedBytes: number): Promise<number> {
    if (committedBytes === 0) return 0;
    const size = await fs.stat(file).then(
      (stat) => stat.size,
      () => 0,
    );
    if (size < committedBytes)
      throw new Error(
        `the lexical delta log holds ${size} bytes, ${committedBytes} were committed`,
      );
    const lines = createInterface({
      input: createReadStream(file, { start: 0, end: committedBytes - 1 }),
      crlfDelay: Infinity,
    });
    let applied = 0;
    let number = 0;
    for await (const line of lines) {
      number++;
      const parsed = DeltaLine.safeParse(safeJson(line));
      if (!parsed.success) throw new Error(`line ${number} of the lexical delta log is damaged`);
      this.removePaths(parsed.data.remove);
      this.add(
        parsed.data.add.map((document) => ({
          chunkId: document.chunkId,
          path: document.path,
          level: document.level,
          terms: new Map(document.terms),
          nameTerms: document.names,
        })),
      );
      applied++;
    }
    return applied;
  }

  private addOne(document: LexicalDocument): void {
    const docId = this.nextDocId++;
    const entries = [...document.terms]
      .map(([term, count]) => [this.intern(term), count] as const)
      .sort((a, b) => a[0] - b[0]);
    let length = 0;
    for (const [, count] of entries) length += count;
    const record: DocRecord = {
      chunkId: document.chunkId,
      path: document.path,
      level: document.level,
      length,
      termIds: Uint32Array.from(entries.map(([id]) => id)),
      counts: Uint32Array.from(entries.map(([, count]) => count)),
      nameTermIds: Uint32Array.from(new Set(document.nameTerms.map((term) => this.intern(term)))),
    };
    this.register(docId, record);
  }

  private register(docId: number, record: DocRecord): void {
    this.docs.set(docId, record);
    this.grow(docId);
    this.lengths[docId] = record.length;
    this.live[docId] = 1;
    this.post(docId, record);
    const ids = this.byPath.get(record.path);
    if (ids) ids.push(docId);
    else this.byPath.set(record.path, [docId]);
    this.countTerms(record, 1);
    this.totalLength.set(record.level, this.totalLength.get(record.level)! + record.length);
    this.liveCount.set(record.level, this.liveCount.get(record.level)! + 1);
  }

  private removeDoc(docId: number): void {
    const record = this.docs.get(docId);
    if (!record) return;
    this.docs.delete(docId);
    this.tombstones.add(docId);
    this.live[docId] = 0;
    this.countTerms(record, -1);
    this.totalLength.set(record.level, this.totalLength.get(record.level)! - record.length);
    this.liveCount.set(record.level, this.liveCount.get(record.level)! - 1);
  }

  /** Document frequencies count a chunk once per term, whether in its text or its names. */
  private countTerms(record: DocRecord, delta: 1 | -1): void {
    const frequencies = this.documentFrequency.get(record.level)!;
    const count = (id: number) => {
      frequencies.add(id, delta);
      const total = this.termDocuments.add(id, delta);
      if (delta > 0 && total === 1) this.liveTerms++;
      if (delta < 0 && total === 0) this.liveTerms--;
    };
    for (const id of record.termIds) count(id);
    for (const id of record.nameTermIds) if (bisect(record.termIds, id) < 0) count(id);
  }

  private intern(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.terms.push(term);
      this.termIds.set(term, id);
    }
    return id;
  }

  /** Appends the chunk to the posting list of each term of its text and names. */
  private post(docId: number, record: DocRecord): void {
    const lists = this.postingLists.get(record.level)!;
    const named = (id: number) => record.nameTermIds.includes(id);
    record.termIds.forEach((id, i) => lists.append(id, docId, record.counts[i]!, named(id)));
    for (const id of record.nameTermIds)
      if (bisect(record.termIds, id) < 0) lists.append(id, docId, 0, true);
  }

  private grow(docId: number): void {
    if (docId < this.lengths.length) return;
    const size = Math.max(docId + 1, this.lengths.length * 2);
    const lengths = new Int32Array(size);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const live = new Uint8Array(size);
    live.set(this.live);
    this.live = live;
  }
}

function bisect(sorted: Uint32Array, value: number): number {
  let low = 0;
  let high = sorted.length - 1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const current = sorted[middle]!;
    if (current === value) return middle;
    if (current < value) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

const Level = z.enum(['directory', 'file', 'class', 'function']);
const numbers = z.array(z.number());

/** The header's shape; the large arrays are checked for length, not element by element. */
const SnapshotHeader = z.object({
  version: z.literal(SNAPSHOT_VERSION),
  nextDocId: z.number().int(),
  terms: z.array(z.string()),
  tombstones: numbers,
  docs: z.object({
    ids: numbers,
    chunkIds: z.array(z.string()),
    paths: z.array(z.string()),
    levels: numbers,
    lengths: numbers,
    termCounts: numbers,
    nameCounts: numbers,
  }),
  /** Written empty; older snapshots held FlexSearch's export here, which is not read any more. */
  flex: z.record(z.string(), z.unknown()).optional(),
});

const DeltaLine = z.object({
  remove: z.array(z.string()),
  add: z.array(
    z.object({
      chunkId: z.string(),
      path: z.string(),
      level: Level,
      terms: z.array(z.tuple([z.string(), z.number().int()])),
      names: z.array(z.string()),
    }),
  ),
});
