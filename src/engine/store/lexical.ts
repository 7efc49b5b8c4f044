import { createReadStream, promises as fs } from 'node:fs';
import { createInterface } from 'node:readline';
import * as path from 'node:path';
import { z } from 'zod';
import { CHUNK_LEVELS, type ChunkLevel } from '../model';
import { appendAt, writeFileAtomic } from '../util/atomic-file';
import { Strings } from './columns';

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
 * Growable posting lists in one arena of two typed arrays (chunk ids, payloads): a vocabulary
 * of hundreds of thousands of terms, most held by a chunk or two, costs no object per term.
 * Per-term columns say where each list starts, its size and its room. A full list moves to the
 * arena's end with twice the room, leaving its old room behind until the lists are folded.
 */
class GrowingLists {
  docs = new Int32Array(1024);
  payload = new Int32Array(1024);
  /** Where the next moved or new list goes; counts the room left behind. */
  used = 0;
  start = new Int32Array(0);
  size = new Int32Array(0);
  private room = new Int32Array(0);

  sizeOf(termId: number): number {
    return termId < this.size.length ? this.size[termId]! : 0;
  }

  /** One past the highest term id with a list. */
  get termLimit(): number {
    return this.size.length;
  }

  /** Appends a posting whose chunk id is above every one the term's list holds. */
  append(termId: number, docId: number, packed: number): void {
    this.growTerms(termId);
    if (this.size[termId] === this.room[termId])
      this.relocate(termId, Math.max(2, this.room[termId]! * 2));
    const at = this.start[termId]! + this.size[termId]!;
    this.docs[at] = docId;
    this.payload[at] = packed;
    this.size[termId]!++;
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
    this.start[termId] = this.used;
    this.room[termId] = room;
    this.used += room;
  }

  private growTerms(termId: number): void {
    if (termId < this.size.length) return;
    const length = Math.max(termId + 1, this.size.length * 2, 1024);
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

/**
 * The posting lists of one level. The main lists are packed end to end in term order with no
 * spare room (a loaded snapshot's lists are laid out at their exact size); what is appended to
 * a term afterwards goes to its tail, a growable list of its own (`GrowingLists`), read after
 * the main list. Doc ids only grow, so main list then tail is in ascending id order. Giving the
 * main lists room would cost memory in proportion to the index; moving a full main list on
 * append made the first save after opening move the common terms' long lists and double the
 * arena (a full copy, ~0.4 GB at 100k files). Tails are folded into the main lists when they
 * grow past half the main lists, and before a snapshot is written.
 */
class LevelPostings {
  private docs = new Int32Array(0);
  private payload = new Int32Array(0);
  private used = 0;
  private start = new Int32Array(0);
  private size = new Int32Array(0);
  /** Places a main list has: its exact size to come while a snapshot is loaded, else its size. */
  private room = new Int32Array(0);
  private tail = new GrowingLists();

  /**
   * The term's postings, main list then tail. A term with a tail gets a fresh copy of both end
   * to end (a copy costs less than scoring what it holds); otherwise a view, valid until the
   * next change.
   */
  list(termId: number): PostingList | undefined {
    const mainSize = termId < this.size.length ? this.size[termId]! : 0;
    const tailSize = this.tail.sizeOf(termId);
    if (!mainSize && !tailSize) return undefined;
    if (!tailSize) return view(this.docs, this.payload, this.start[termId]!, mainSize);
    const { tail } = this;
    if (!mainSize) return view(tail.docs, tail.payload, tail.start[termId]!, tailSize);
    const from = this.start[termId]!;
    const tailFrom = this.tail.start[termId]!;
    const docs = new Int32Array(mainSize + tailSize);
    docs.set(this.docs.subarray(from, from + mainSize));
    docs.set(this.tail.docs.subarray(tailFrom, tailFrom + tailSize), mainSize);
    const payload = new Int32Array(mainSize + tailSize);
    payload.set(this.payload.subarray(from, from + mainSize));
    payload.set(this.tail.payload.subarray(tailFrom, tailFrom + tailSize), mainSize);
    return { docs, payload, size: mainSize + tailSize };
  }

  /** Appends a posting; `docId` must be above every chunk id the term's list holds. */
  append(termId: number, docId: number, tf: number, named: boolean): void {
    const packed = (tf << 1) | (named ? 1 : 0);
    if (termId < this.size.length && this.size[termId]! < this.room[termId]!) {
      const at = this.start[termId]! + this.size[termId]!;
      this.docs[at] = docId;
      this.payload[at] = packed;
      this.size[termId]!++;
    } else this.tail.append(termId, docId, packed);
  }

  /**
   * Lays out empty main lists with exactly `sizes[term]` places each, end to end, before a
   * snapshot's chunks append that many postings per term: nothing goes to a tail while they are.
   */
  reserve(sizes: Int32Array): void {
    if (this.used || this.tail.used)
      throw new Error('postings can only be reserved before any is added');
    this.start = new Int32Array(sizes.length);
    this.size = new Int32Array(sizes.length);
    this.room = Int32Array.from(sizes);
    let at = 0;
    for (let term = 0; term < sizes.length; term++) {
      this.start[term] = at;
      at += sizes[term]!;
    }
    this.docs = new Int32Array(at);
    this.payload = new Int32Array(at);
    this.used = at;
  }

  /** Folds the tails into the main lists once they outgrow half of them, or now when `force`. */
  settle(force = false): void {
    if (!this.tail.used || (!force && this.tail.used < this.used / 2)) return;
    const terms = Math.max(this.size.length, this.tail.termLimit);
    let total = 0;
    for (let term = 0; term < terms; term++)
      total += (term < this.size.length ? this.size[term]! : 0) + this.tail.sizeOf(term);
    const docs = new Int32Array(total);
    const payload = new Int32Array(total);
    const start = new Int32Array(terms);
    const size = new Int32Array(terms);
    let at = 0;
    for (let term = 0; term < terms; term++) {
      start[term] = at;
      if (term < this.size.length) {
        const from = this.start[term]!;
        const mainSize = this.size[term]!;
        docs.set(this.docs.subarray(from, from + mainSize), at);
        payload.set(this.payload.subarray(from, from + mainSize), at);
        at += mainSize;
      }
      const tailSize = this.tail.sizeOf(term);
      if (tailSize) {
        const from = this.tail.start[term]!;
        docs.set(this.tail.docs.subarray(from, from + tailSize), at);
        payload.set(this.tail.payload.subarray(from, from + tailSize), at);
        at += tailSize;
      }
      size[term] = at - start[term]!;
    }
    this.docs = docs;
    this.payload = payload;
    this.used = at;
    this.start = start;
    this.size = size;
    this.room = size.slice();
    this.tail = new GrowingLists();
  }
}

function view(docs: Int32Array, payload: Int32Array, from: number, size: number): PostingList {
  return {
    docs: docs.subarray(from, from + size),
    payload: payload.subarray(from, from + size),
    size,
  };
}

/**
 * Each chunk's own terms: its term ids (ascending, searched by bisection), their counts and its
 * name-term ids, end to end, with per-chunk columns saying where each chunk's run starts. One
 * record object and three typed-array views per chunk held about 80 MB of heap at 192k chunks.
 * Runs live in two arenas: the packed one (a snapshot's body, which has exactly this layout, or
 * what the last packing left) and a growable one for chunks added since, addressed after the
 * packed one. Only the growable arena grows: growing a loaded snapshot's body made the first save
 * after opening copy all of it. The room of removed chunks is reclaimed, by packing both arenas
 * into one, when the growable arena would otherwise grow and half of all the room is dead.
 */
class ChunkTerms {
  private packed: Uint32Array = new Uint32Array(0);
  private added: Uint32Array = new Uint32Array(64);
  private addedUsed = 0;
  private abandoned = 0;
  /** Where each chunk's run starts (past the packed arena's end: in the growable one), -1 for a chunk not held. */
  private start = new Int32Array(1024).fill(-1);
  private termCount = new Int32Array(1024);
  private nameCount = new Int32Array(1024);

  /** Takes a snapshot's body as the packed arena; `adopt` then says where each chunk's run is. */
  useArena(arena: Uint32Array): void {
    if (this.packed.length || this.addedUsed)
      throw new Error('an arena can only be taken before any chunk is added');
    this.packed = arena;
  }

  adopt(docId: number, start: number, terms: number, names: number): void {
    this.grow(docId);
    this.start[docId] = start;
    this.termCount[docId] = terms;
    this.nameCount[docId] = names;
  }

  place(
    docId: number,
    termIds: readonly number[],
    counts: readonly number[],
    nameIds: readonly number[],
  ): void {
    const size = termIds.length * 2 + nameIds.length;
    this.reserve(size);
    const at = this.addedUsed;
    this.added.set(termIds, at);
    this.added.set(counts, at + termIds.length);
    this.added.set(nameIds, at + termIds.length * 2);
    this.addedUsed += size;
    this.adopt(docId, this.packed.length + at, termIds.length, nameIds.length);
  }

  remove(docId: number): void {
    if (!this.holds(docId)) return;
    this.abandoned += this.runSize(docId);
    this.start[docId] = -1;
  }

  holds(docId: number): boolean {
    return docId < this.start.length && this.start[docId]! >= 0;
  }

  termIds(docId: number): Uint32Array {
    return this.run(this.start[docId]!, this.termCount[docId]!);
  }

  counts(docId: number): Uint32Array {
    return this.run(this.start[docId]! + this.termCount[docId]!, this.termCount[docId]!);
  }

  nameIds(docId: number): Uint32Array {
    return this.run(this.start[docId]! + this.termCount[docId]! * 2, this.nameCount[docId]!);
  }

  /** The count of `termId` in the chunk's text, 0 when absent. */
  frequency(docId: number, termId: number): number {
    const terms = this.termCount[docId]!;
    const { arena, from } = this.locate(this.start[docId]!);
    let low = from;
    let high = from + terms - 1;
    while (low <= high) {
      const middle = (low + high) >>> 1;
      const current = arena[middle]!;
      if (current === termId) return arena[middle + terms]!;
      if (current < termId) low = middle + 1;
      else high = middle - 1;
    }
    return 0;
  }

  hasName(docId: number, termId: number): boolean {
    const { arena, from } = this.locate(this.start[docId]! + this.termCount[docId]! * 2);
    const end = from + this.nameCount[docId]!;
    for (let at = from; at < end; at++) if (arena[at] === termId) return true;
    return false;
  }

  private runSize(docId: number): number {
    return this.termCount[docId]! * 2 + this.nameCount[docId]!;
  }

  /** The arena an address falls in and where it is there. */
  private locate(address: number): { arena: Uint32Array; from: number } {
    return address < this.packed.length
      ? { arena: this.packed, from: address }
      : { arena: this.added, from: address - this.packed.length };
  }

  private run(address: number, size: number): Uint32Array {
    const { arena, from } = this.locate(address);
    return arena.subarray(from, from + size);
  }

  private reserve(size: number): void {
    if (this.addedUsed + size <= this.added.length) return;
    if (this.abandoned >= (this.packed.length + this.addedUsed) / 2) this.pack();
    if (this.addedUsed + size <= this.added.length) return;
    const added = new Uint32Array(Math.max(this.addedUsed + size, this.added.length * 2));
    added.set(this.added.subarray(0, this.addedUsed));
    this.added = added;
  }

  /** Moves the runs of held chunks end to end into a new packed arena, leaving out removed ones. */
  private pack(): void {
    const packed = new Uint32Array(this.packed.length + this.addedUsed - this.abandoned);
    let at = 0;
    for (let docId = 0; docId < this.start.length; docId++) {
      if (this.start[docId]! < 0) continue;
      const size = this.runSize(docId);
      packed.set(this.run(this.start[docId]!, size), at);
      this.start[docId] = at;
      at += size;
    }
    this.packed = packed;
    this.added = new Uint32Array(64);
    this.addedUsed = 0;
    this.abandoned = 0;
  }

  private grow(docId: number): void {
    if (docId < this.start.length) return;
    const size = Math.max(docId + 1, this.start.length * 2);
    const start = new Int32Array(size).fill(-1);
    start.set(this.start);
    this.start = start;
    const termCount = new Int32Array(size);
    termCount.set(this.termCount);
    this.termCount = termCount;
    const nameCount = new Int32Array(size);
    nameCount.set(this.nameCount);
    this.nameCount = nameCount;
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
  /**
   * Per doc id: the length of the chunk's text, whether it is live (not a tombstone), its level
   * (by its place in CHUNK_LEVELS), chunk id and path; its terms are in `chunkTerms`.
   */
  private lengths = new Int32Array(1024);
  private live = new Uint8Array(1024);
  private levels = new Uint8Array(1024);
  private readonly chunkIds: (string | undefined)[] = [];
  private readonly paths: (string | undefined)[] = [];
  private readonly chunkTerms = new ChunkTerms();
  private liveDocs = 0;
  private readonly byPath = new Map<string, number[]>();
  /** Scratch for fileTermCounts: the place of each chunk's file among the files asked about. */
  private fileOfDoc = new Int32Array(0);
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
    return this.liveDocs;
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

  /** A live chunk's statistics, read where they are when asked (use them before the next change). */
  document(docId: number): DocumentStats | undefined {
    if (!this.isLive(docId)) return undefined;
    return {
      chunkId: this.chunkIds[docId]!,
      path: this.paths[docId]!,
      level: CHUNK_LEVELS[this.levels[docId]!]!,
      length: this.lengths[docId]!,
      termFrequency: (term) => {
        const id = this.termIds.get(term);
        return id === undefined ? 0 : this.chunkTerms.frequency(docId, id);
      },
      hasNameTerm: (term) => {
        const id = this.termIds.get(term);
        return id !== undefined && this.chunkTerms.hasName(docId, id);
      },
    };
  }

  /** The live chunks indexed under `path`: a file's chunks at every level, for scoring whole files. */
  documentsAt(path: string): DocumentStats[] {
    return (this.byPath.get(path) ?? [])
      .filter((docId) => this.isLive(docId))
      .map((docId) => this.document(docId)!);
  }

  /**
   * Per path of `paths`, in order: the summed text length of its live chunks of `levels` and,
   * per term of `terms`, its summed count in their texts (0 when absent): a file's whole text
   * seen through its chunks. A term is counted from its posting lists when they are shorter than
   * POSTINGS_PER_LOOKUP times the files' chunks, otherwise by looking it up in each of them.
   */
  fileTermCounts(
    paths: readonly string[],
    levels: readonly ChunkLevel[],
    terms: readonly string[],
  ): { length: number; counts: number[] }[] {
    const wanted = new Set(levels.map((level) => LEVEL_INDEX.get(level)!));
    const files = paths.map(() => ({ length: 0, counts: new Array<number>(terms.length).fill(0) }));
    // each chunk of the files marked with its file's place (-1 elsewhere, restored at the end)
    if (this.fileOfDoc.length < this.nextDocId)
      this.fileOfDoc = new Int32Array(Math.max(this.nextDocId, this.lengths.length)).fill(-1);
    const docs: number[] = [];
    const firstAt = new Map<string, number>();
    paths.forEach((filePath, at) => {
      if (firstAt.has(filePath)) return;
      firstAt.set(filePath, at);
      for (const docId of this.byPath.get(filePath) ?? []) {
        if (!this.isLive(docId) || !wanted.has(this.levels[docId]!)) continue;
        this.fileOfDoc[docId] = at;
        files[at]!.length += this.lengths[docId]!;
        docs.push(docId);
      }
    });
    const lists = levels.map((level) => this.postingLists.get(level)!);
    terms.forEach((term, i) => {
      const id = this.termIds.get(term);
      if (id === undefined) return;
      const postings = lists.map((list) => list.list(id));
      const listed = postings.reduce((sum, list) => sum + (list?.size ?? 0), 0);
      if (listed < docs.length * POSTINGS_PER_LOOKUP) {
        for (const list of postings)
          for (let k = 0; k < (list?.size ?? 0); k++) {
            const at = this.fileOfDoc[list!.docs[k]!]!;
            if (at >= 0) files[at]!.counts[i]! += list!.payload[k]! >> 1;
          }
      } else
        for (const docId of docs)
          files[this.fileOfDoc[docId]!]!.counts[i]! += this.chunkTerms.frequency(docId, id);
    });
    for (const docId of docs) this.fileOfDoc[docId] = -1;
    // a path asked twice gets its first place's counts
    return paths.map((filePath) => files[firstAt.get(filePath)!]!);
  }

  /** The distinct terms of a chunk's text. */
  termsOf(docId: number): string[] {
    if (!this.isLive(docId)) return [];
    return Array.from(this.chunkTerms.termIds(docId), (id) => this.terms[id]!);
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

  /** The term with id `id` (ids follow the terms' order of arrival, as `termsSince` counts them). */
  termAt(id: number): string {
    return this.terms[id]!;
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
    for (const docId of this.liveDocIds()) {
      const terms = new Map<string, number>();
      const counts = this.chunkTerms.counts(docId);
      this.chunkTerms.termIds(docId).forEach((id, i) => terms.set(this.terms[id]!, counts[i]!));
      yield {
        chunkId: this.chunkIds[docId]!,
        path: this.paths[docId]!,
        level: CHUNK_LEVELS[this.levels[docId]!]!,
        length: this.lengths[docId]!,
        terms,
      };
    }
  }

  /**
   * Before a snapshot is written: rebuilds the posting lists without tombstones when they outgrow
   * a quarter of the live chunks (says whether it did), else folds what was appended to the lists
   * since they were last folded into them, so a long-lived index reads no long tails.
   */
  compactIfNeeded(): boolean {
    if (this.tombstones.size === 0 || this.tombstones.size < this.liveDocs / 4) {
      for (const postings of this.postingLists.values()) postings.settle(true);
      return false;
    }
    for (const level of CHUNK_LEVELS) this.postingLists.set(level, new LevelPostings());
    for (const docId of this.liveDocIds()) this.post(docId);
    for (const postings of this.postingLists.values()) postings.settle(true);
    this.tombstones.clear();
    return true;
  }

  async writeSnapshot(file: string): Promise<void> {
    const ids = [...this.liveDocIds()];
    const header = {
      version: SNAPSHOT_VERSION,
      nextDocId: this.nextDocId,
      terms: this.terms,
      tombstones: [...this.tombstones],
      docs: {
        ids,
        chunkIds: ids.map((docId) => this.chunkIds[docId]!),
        paths: ids.map((docId) => this.paths[docId]!),
        levels: ids.map((docId) => this.levels[docId]!),
        lengths: ids.map((docId) => this.lengths[docId]!),
        termCounts: ids.map((docId) => this.chunkTerms.termIds(docId).length),
        nameCounts: ids.map((docId) => this.chunkTerms.nameIds(docId).length),
      },
      // the posting lists are rebuilt from the records; the field stays for older readers
      flex: {},
    };
    const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
    const total = header.docs.termCounts.reduce(
      (sum, terms, i) => sum + terms * 2 + header.docs.nameCounts[i]!,
      0,
    );
    const body = new Uint32Array(total);
    let at = 0;
    for (const docId of ids) {
      const termIds = this.chunkTerms.termIds(docId);
      body.set(termIds, at);
      body.set(this.chunkTerms.counts(docId), at + termIds.length);
      body.set(this.chunkTerms.nameIds(docId), at + termIds.length * 2);
      at += termIds.length * 2 + this.chunkTerms.nameIds(docId).length;
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

  /**
   * Reads a snapshot. Chunk ids and paths are kept through `strings`: a store passes the interner
   * its chunk catalog and facts read next, so each id and path is held once among them.
   */
  static async readSnapshot(file: string, strings = new Strings()): Promise<LexicalIndex> {
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
    index.chunkTerms.useArena(body);
    let at = 0;
    for (let i = 0; i < count; i++) {
      const terms = docs.termCounts[i]!;
      const names = docs.nameCounts[i]!;
      const docId = docs.ids[i]!;
      index.chunkTerms.adopt(docId, at, terms, names);
      index.register(
        docId,
        strings.intern(docs.chunkIds[i]!),
        // one copy of each path, however many chunks its file has
        strings.intern(docs.paths[i]!),
        docs.levels[i]!,
        docs.lengths[i]!,
      );
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
    return appendAt(file, bytes, offset);
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
    this.chunkTerms.place(
      docId,
      entries.map(([id]) => id),
      entries.map(([, count]) => count),
      [...new Set(document.nameTerms.map((term) => this.intern(term)))],
    );
    this.register(docId, document.chunkId, document.path, LEVEL_INDEX.get(document.level)!, length);
  }

  /** Makes a chunk whose terms `chunkTerms` holds live: its columns, postings and counts. */
  private register(
    docId: number,
    chunkId: string,
    path: string,
    levelIndex: number,
    length: number,
  ): void {
    const level = CHUNK_LEVELS[levelIndex];
    if (!level) throw new Error('the lexical snapshot names an unknown level');
    this.grow(docId);
    this.lengths[docId] = length;
    this.live[docId] = 1;
    this.levels[docId] = levelIndex;
    this.chunkIds[docId] = chunkId;
    this.paths[docId] = path;
    this.liveDocs++;
    this.post(docId);
    const ids = this.byPath.get(path);
    if (ids) ids.push(docId);
    else this.byPath.set(path, [docId]);
    this.countTerms(docId, 1);
    this.totalLength.set(level, this.totalLength.get(level)! + length);
    this.liveCount.set(level, this.liveCount.get(level)! + 1);
  }

  private removeDoc(docId: number): void {
    if (!this.isLive(docId)) return;
    const level = CHUNK_LEVELS[this.levels[docId]!]!;
    this.tombstones.add(docId);
    this.countTerms(docId, -1);
    this.live[docId] = 0;
    this.liveDocs--;
    this.chunkIds[docId] = undefined;
    this.paths[docId] = undefined;
    this.chunkTerms.remove(docId);
    this.totalLength.set(level, this.totalLength.get(level)! - this.lengths[docId]!);
    this.liveCount.set(level, this.liveCount.get(level)! - 1);
  }

  /** Live doc ids, ascending: the order chunks were added in. */
  private *liveDocIds(): IterableIterator<number> {
    for (let docId = 0; docId < this.nextDocId; docId++) if (this.isLive(docId)) yield docId;
  }

  /** Document frequencies count a chunk once per term, whether in its text or its names. */
  private countTerms(docId: number, delta: 1 | -1): void {
    const frequencies = this.documentFrequency.get(CHUNK_LEVELS[this.levels[docId]!]!)!;
    const count = (id: number) => {
      frequencies.add(id, delta);
      const total = this.termDocuments.add(id, delta);
      if (delta > 0 && total === 1) this.liveTerms++;
      if (delta < 0 && total === 0) this.liveTerms--;
    };
    const termIds = this.chunkTerms.termIds(docId);
    for (const id of termIds) count(id);
    for (const id of this.chunkTerms.nameIds(docId)) if (bisect(termIds, id) < 0) count(id);
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
  private post(docId: number): void {
    const lists = this.postingLists.get(CHUNK_LEVELS[this.levels[docId]!]!)!;
    const termIds = this.chunkTerms.termIds(docId);
    const counts = this.chunkTerms.counts(docId);
    // which of its terms are also names: found by bisecting the sorted terms once per name (a
    // file chunk has hundreds of both, so asking the names about every term cost ~0.7 s at open)
    if (this.namedTerms.length < termIds.length)
      this.namedTerms = new Uint8Array(termIds.length * 2);
    const named = this.namedTerms.fill(0, 0, termIds.length);
    for (const id of this.chunkTerms.nameIds(docId)) {
      const at = bisect(termIds, id);
      if (at >= 0) named[at] = 1;
      else lists.append(id, docId, 0, true);
    }
    termIds.forEach((id, i) => lists.append(id, docId, counts[i]!, named[i] === 1));
  }

  /** Scratch for `post`: whether each term of the chunk being posted is also one of its names. */
  private namedTerms = new Uint8Array(1024);

  private grow(docId: number): void {
    if (docId < this.lengths.length) return;
    const size = Math.max(docId + 1, this.lengths.length * 2);
    const lengths = new Int32Array(size);
    lengths.set(this.lengths);
    this.lengths = lengths;
    const live = new Uint8Array(size);
    live.set(this.live);
    this.live = live;
    const levels = new Uint8Array(size);
    levels.set(this.levels);
    this.levels = levels;
  }
}

/**
 * Postings read in the time a term is looked up in one chunk's sorted terms (a binary search of
 * a few steps, against one read of a list's entries and the mark of its chunk).
 */
const POSTINGS_PER_LOOKUP = 4;

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
