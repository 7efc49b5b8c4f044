import { createReadStream, promises as fs } from 'node:fs';
import { createInterface } from 'node:readline';
import * as path from 'node:path';
import { z } from 'zod';
import { elapsedMs, getLogger } from '../log/logger';
import { CHUNK_LEVELS, type ChunkLevel } from '../model';
import { appendAt, writeFileAtomic } from '../util/atomic-file';
import { parseJsonOrNull } from '../util/json';
import { Strings } from './columns';
import { readSnapshotHeader, snapshotPrefix, type SnapshotLayout } from './lexical-header';
import { TermTable } from './term-table';
import { BlockWriter, ReadArena, ScratchFile, WordFile, WordReader } from './snapshot-file';

const log = getLogger('store.lexical');

/**
 * The lexical segment: per chunk level, a posting list per term (the chunks holding it, in
 * ascending id order, each with its term frequency and whether a name holds it, in typed arrays)
 * and beside them per-chunk lengths and per-level document frequencies: what BM25 needs, laid out
 * so a top-k search can skip through the lists instead of scoring every chunk.
 *
 * The lists and each chunk's terms are kept in the snapshot file and read from it when a query
 * or a change asks for them; the worker holds only the per-term directory (where each list
 * starts), the per-chunk columns and what changed since the snapshot. Updates are cheap: a
 * removed chunk becomes a tombstone (skipped by readers), new chunks are appended in memory, and
 * both are logged to a delta file; a snapshot written after large batches (or when the delta or
 * the tombstones pile up) holds the live chunks only and is read from then on.
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
 * Each term with a list has a slot in columns saying where its list starts, its size and its
 * room; slots are given out as terms first get a posting, so a save's few terms cost a few slots,
 * not columns as long as the vocabulary (three such columns per level held ~20 MB at 10k files
 * after the first save added a new word). A full list moves to the arena's end with twice the
 * room, leaving its old room behind until the lists are folded.
 */
class GrowingLists {
  docs = new Int32Array(1024);
  payload = new Int32Array(1024);
  /** Where the next moved or new list goes; counts the room left behind. */
  used = 0;
  private readonly slots = new Map<number, number>();
  private start = new Int32Array(64);
  private size = new Int32Array(64);
  private room = new Int32Array(64);
  private highest = -1;

  sizeOf(termId: number): number {
    const slot = this.slots.get(termId);
    return slot === undefined ? 0 : this.size[slot]!;
  }

  /** Where the term's list starts in the arena (the term must have one). */
  startOf(termId: number): number {
    return this.start[this.slots.get(termId)!]!;
  }

  /** One past the highest term id with a list. */
  get termLimit(): number {
    return this.highest + 1;
  }

  /** Words of memory the lists take, room included. */
  get heldWords(): number {
    return this.docs.length * 2 + this.start.length * 3;
  }

  /** Appends a posting whose chunk id is above every one the term's list holds. */
  append(termId: number, docId: number, packed: number): void {
    const slot = this.slots.get(termId) ?? this.newSlot(termId);
    if (this.size[slot] === this.room[slot]) this.relocate(slot, Math.max(2, this.room[slot]! * 2));
    const at = this.start[slot]! + this.size[slot]!;
    this.docs[at] = docId;
    this.payload[at] = packed;
    this.size[slot]!++;
  }

  private newSlot(termId: number): number {
    const slot = this.slots.size;
    if (slot === this.size.length) {
      const grown = (column: Int32Array): Int32Array<ArrayBuffer> => {
        const next = new Int32Array(column.length * 2);
        next.set(column);
        return next;
      };
      this.start = grown(this.start);
      this.size = grown(this.size);
      this.room = grown(this.room);
    }
    this.slots.set(termId, slot);
    this.highest = Math.max(this.highest, termId);
    return slot;
  }

  private relocate(slot: number, room: number): void {
    if (this.used + room > this.docs.length) {
      const capacity = Math.max(this.used + room, this.docs.length * 2);
      const docs = new Int32Array(capacity);
      docs.set(this.docs.subarray(0, this.used));
      this.docs = docs;
      const payload = new Int32Array(capacity);
      payload.set(this.payload.subarray(0, this.used));
      this.payload = payload;
    }
    const from = this.start[slot]!;
    const size = this.size[slot]!;
    this.docs.copyWithin(this.used, from, from + size);
    this.payload.copyWithin(this.used, from, from + size);
    this.start[slot] = this.used;
    this.room[slot] = room;
    this.used += room;
  }
}

/**
 * Posting lists spilled to a scratch file: the terms that had any, ascending, and each term's
 * chunk ids then payloads, term after term from byte `offset` (a snapshot level's layout, for
 * the few terms present).
 */
class SpilledPart {
  constructor(
    private readonly file: ScratchFile,
    private readonly offset: number,
    private readonly termIds: Int32Array,
    /** How many postings the part holds before each of its terms (and in all, last). */
    private readonly starts: Int32Array,
  ) {}

  sizeOf(termId: number): number {
    const place = bisect(this.termIds, termId);
    return place < 0 ? 0 : this.starts[place + 1]! - this.starts[place]!;
  }

  /** Reads the term's postings into `docs` and `payload` from `at`; returns how many. */
  read(termId: number, docs: Int32Array, payload: Int32Array, at: number): number {
    const place = bisect(this.termIds, termId);
    if (place < 0) return 0;
    const size = this.starts[place + 1]! - this.starts[place]!;
    const position = this.offset + this.starts[place]! * 8;
    this.file.read(docs, at, size, position);
    this.file.read(payload, at, size, position + size * 4);
    return size;
  }

  /**
   * One pass over the part in term order, for a writer going through every term: `take` reads a
   * term's postings as `read` does (0 for a term the part lacks), asked with ascending terms.
   */
  inOrder(): { take(termId: number, docs: Int32Array, payload: Int32Array, at: number): number } {
    const reader = new WordReader(this.file, this.offset);
    let place = 0;
    return {
      take: (termId, docs, payload, at) => {
        if (this.termIds[place] !== termId) return 0;
        const size = this.starts[place + 1]! - this.starts[place]!;
        place++;
        docs.set(reader.take(size), at);
        payload.set(reader.take(size), at);
        return size;
      },
    };
  }
}

/**
 * The posting lists of one level, in parts read one after another: the snapshot's lists on disk
 * (term after term, each its chunk ids then its payloads, read when a query asks for the term),
 * the parts a long write spilled to a scratch file (`SpilledPart`), the main lists in memory
 * (packed end to end in term order with no spare room) and the tails, a growable list per term
 * (`GrowingLists`) that appends go to. Doc ids only grow, so the parts in that order are in
 * ascending id order. Tails are folded into the main lists when they grow past half of them; the
 * main lists hold only what was added since the snapshot or the last spill, and writing the next
 * snapshot moves everything to disk. Giving the main lists room would cost memory in proportion
 * to the index; moving a full main list on append made the first save after opening move the
 * common terms' long lists.
 */
class LevelPostings {
  /** The snapshot's lists: `starts[term]` counts the postings of the terms before it. */
  private disk: { file: WordFile; offset: number; starts: Int32Array } | null = null;
  private docs = new Int32Array(0);
  private payload = new Int32Array(0);
  private used = 0;
  private start = new Int32Array(0);
  private size = new Int32Array(0);
  private tail = new GrowingLists();
  /**
   * Parts spilled to a scratch file during a long write, oldest first, between the snapshot's
   * lists and the main lists (see `spill`); folded into the next snapshot.
   */
  private spilled: SpilledPart[] = [];
  /**
   * Lists copied into an arena's room during its present use (`copiedIn`), by term: a search
   * reads a term's list for its lexical list and again for whole files' term counts, and the
   * second read is the first's copy. Dropped at any change.
   */
  private readonly copied = new Map<number, PostingList>();
  private copiedIn = 0;

  /**
   * Drops the copies of lists made for reading, which a change may have made stale. Only when
   * there are any: clearing a Map gives it a new table even when it is empty, and a first index
   * appends millions of postings (about 1 GB of garbage at 10k files).
   */
  private forgetCopies(): void {
    if (this.copied.size) this.copied.clear();
  }

  /** Reads the lists from `file` at byte `offset` from now on, dropping those in memory. */
  useDisk(file: WordFile, offset: number, starts: Int32Array): void {
    this.disk = { file, offset, starts };
    this.spilled = [];
    this.dropMemory();
  }

  /** Lets go of the main lists and tails (and the copies made of lists holding them). */
  private dropMemory(): void {
    this.forgetCopies();
    this.docs = new Int32Array(0);
    this.payload = new Int32Array(0);
    this.used = 0;
    this.start = new Int32Array(0);
    this.size = new Int32Array(0);
    this.tail = new GrowingLists();
  }

  /**
   * The term's postings, disk then spilled parts then main list then tail. A term with one part
   * in memory gets a view of it, valid until the next change; otherwise a copy of its parts end
   * to end in room from `arena` (a copy costs less than scoring what it holds).
   */
  list(termId: number, arena: ReadArena): PostingList | undefined {
    const onDisk = this.diskSize(termId);
    const stored = onDisk + this.spilledSize(termId);
    const mainSize = this.mainSize(termId);
    const tailSize = this.tail.sizeOf(termId);
    const total = stored + mainSize + tailSize;
    if (!total) return undefined;
    if (total === mainSize) return view(this.docs, this.payload, this.start[termId]!, mainSize);
    const { tail } = this;
    if (total === tailSize) return view(tail.docs, tail.payload, tail.startOf(termId), tailSize);
    if (this.copiedIn !== arena.use) {
      this.forgetCopies();
      this.copiedIn = arena.use;
    }
    const copy = this.copied.get(termId);
    if (copy) return copy;
    const both = arena.take(total * 2);
    const docs = both.subarray(0, total);
    const payload = both.subarray(total);
    if (onDisk) {
      const { file, offset, starts } = this.disk!;
      const position = offset + starts[termId]! * 8;
      if (total === onDisk) file.read(both, 0, onDisk * 2, position);
      else {
        file.read(docs, 0, onDisk, position);
        file.read(payload, 0, onDisk, position + onDisk * 4);
      }
    }
    let at = onDisk;
    for (const part of this.spilled) at += part.read(termId, docs, payload, at);
    this.copyMemory(termId, docs, payload, at);
    const list = { docs, payload, size: total };
    this.copied.set(termId, list);
    return list;
  }

  /**
   * The term's postings when they can be had without reading the snapshot: a list wholly in
   * memory, or one this use of `arena` copied in already. Undefined otherwise (or when empty).
   */
  listAtHand(termId: number, arena: ReadArena): PostingList | undefined {
    const onDisk = this.diskSize(termId) + this.spilledSize(termId);
    if (onDisk && (this.copiedIn !== arena.use || !this.copied.has(termId))) return undefined;
    return this.list(termId, arena);
  }

  /** How many postings the term's list holds (tombstones included), without reading it. */
  sizeOf(termId: number): number {
    return (
      this.diskSize(termId) +
      this.spilledSize(termId) +
      this.mainSize(termId) +
      this.tail.sizeOf(termId)
    );
  }

  /** Appends a posting; `docId` must be above every chunk id the term's list holds. */
  append(termId: number, docId: number, tf: number, named: boolean): void {
    this.forgetCopies();
    this.tail.append(termId, docId, (tf << 1) | (named ? 1 : 0));
  }

  /**
   * Puts every term's live postings (below `termLimit`) to `out`, term after term, each its chunk
   * ids then its payloads, handing out the blocks filled as it goes; `starts` gets how many were
   * put before each term, as `useDisk` takes them.
   */
  *write(
    termLimit: number,
    isLive: (docId: number) => boolean,
    out: BlockWriter,
    starts: Int32Array,
  ): Generator<Uint8Array> {
    const reader = this.disk ? new WordReader(this.disk.file, this.disk.offset) : null;
    const parts = this.spilled.map((part) => part.inOrder());
    let docs = new Int32Array(1024);
    let payload = new Int32Array(1024);
    const before = out.written;
    for (let term = 0; term < termLimit; term++) {
      starts[term] = (out.written - before) / 2;
      const onDisk = this.diskSize(term);
      const total = this.sizeOf(term);
      if (!total) continue;
      if (docs.length < total) {
        docs = new Int32Array(total * 2);
        payload = new Int32Array(total * 2);
      }
      if (onDisk) {
        docs.set(reader!.take(onDisk));
        payload.set(reader!.take(onDisk));
      }
      let at = onDisk;
      for (const part of parts) at += part.take(term, docs, payload, at);
      this.copyMemory(term, docs, payload, at);
      let kept = 0;
      for (let at = 0; at < total; at++) {
        if (!isLive(docs[at]!)) continue;
        docs[kept] = docs[at]!;
        payload[kept++] = payload[at]!;
      }
      out.put(docs, 0, kept);
      out.put(payload, 0, kept);
      if (out.filled) yield* out.drain();
    }
    starts[termLimit] = (out.written - before) / 2;
  }

  /**
   * Moves the main lists and tails to `file`, as one more spilled part after the others: the
   * memory they held is let go. Returns how many postings moved.
   */
  spill(file: ScratchFile): number {
    const terms = Math.max(this.size.length, this.tail.termLimit);
    let listed = 0;
    for (let term = 0; term < terms; term++) if (this.heldSize(term)) listed++;
    if (!listed) return 0;
    const termIds = new Int32Array(listed);
    const starts = new Int32Array(listed + 1);
    const out = new BlockWriter();
    let docs = new Int32Array(1024);
    let payload = new Int32Array(1024);
    const offset = file.bytes;
    let place = 0;
    for (let term = 0; term < terms; term++) {
      const size = this.heldSize(term);
      if (!size) continue;
      if (docs.length < size) {
        docs = new Int32Array(size * 2);
        payload = new Int32Array(size * 2);
      }
      this.copyMemory(term, docs, payload, 0);
      termIds[place] = term;
      starts[place++] = out.written / 2;
      out.put(docs, 0, size);
      out.put(payload, 0, size);
      if (out.filled) for (const block of out.drain()) file.append(block);
    }
    starts[place] = out.written / 2;
    for (const block of out.finish()) file.append(block);
    this.spilled.push(new SpilledPart(file, offset, termIds, starts));
    this.dropMemory();
    return starts[listed]!;
  }

  /** Words of memory the main lists and tails take (their arrays' lengths, room included). */
  get heldWords(): number {
    return this.docs.length * 2 + this.start.length * 2 + this.tail.heldWords;
  }

  /**
   * Folds the tails into the main lists once they outgrow half of them and MIN_FOLD_POSTINGS: a
   * fold passes over every term, so the saves after opening a snapshot (whose main lists in
   * memory start empty) do not each pay for one.
   */
  settle(): void {
    if (this.tail.used < Math.max(this.used / 2, MIN_FOLD_POSTINGS)) return;
    this.forgetCopies();
    const terms = Math.max(this.size.length, this.tail.termLimit);
    let total = 0;
    for (let term = 0; term < terms; term++) total += this.mainSize(term) + this.tail.sizeOf(term);
    const docs = new Int32Array(total);
    const payload = new Int32Array(total);
    const start = new Int32Array(terms);
    const size = new Int32Array(terms);
    let at = 0;
    for (let term = 0; term < terms; term++) {
      start[term] = at;
      size[term] = this.mainSize(term) + this.tail.sizeOf(term);
      this.copyMemory(term, docs, payload, at);
      at += size[term];
    }
    this.docs = docs;
    this.payload = payload;
    this.used = at;
    this.start = start;
    this.size = size;
    this.tail = new GrowingLists();
  }

  private diskSize(termId: number): number {
    const starts = this.disk?.starts;
    return starts && termId + 1 < starts.length ? starts[termId + 1]! - starts[termId]! : 0;
  }

  private spilledSize(termId: number): number {
    let size = 0;
    for (const part of this.spilled) size += part.sizeOf(termId);
    return size;
  }

  /** The term's postings held in memory: its main list and tail. */
  private heldSize(termId: number): number {
    return this.mainSize(termId) + this.tail.sizeOf(termId);
  }

  private mainSize(termId: number): number {
    return termId < this.size.length ? this.size[termId]! : 0;
  }

  /** Copies the term's main list then tail into `docs` / `payload` from `at`. */
  private copyMemory(termId: number, docs: Int32Array, payload: Int32Array, at: number): void {
    const mainSize = this.mainSize(termId);
    if (mainSize) {
      const from = this.start[termId]!;
      copyRange(this.docs, from, mainSize, docs, at);
      copyRange(this.payload, from, mainSize, payload, at);
    }
    const tailSize = this.tail.sizeOf(termId);
    if (tailSize) {
      const from = this.tail.startOf(termId);
      copyRange(this.tail.docs, from, tailSize, docs, at + mainSize);
      copyRange(this.tail.payload, from, tailSize, payload, at + mainSize);
    }
  }
}

/** Lists up to this long are copied number by number, longer ones through a view. */
const SHORT_COPY = 16;

/**
 * Copies `size` numbers of `from` at `start` into `into` at `at`. Most terms' lists hold a
 * posting or two, and a view to copy each through was most of the garbage a fold or a spill
 * made: it passes over every term of the vocabulary.
 */
function copyRange(
  from: Int32Array,
  start: number,
  size: number,
  into: Int32Array,
  at: number,
): void {
  if (size > SHORT_COPY) into.set(from.subarray(start, start + size), at);
  else for (let i = 0; i < size; i++) into[at + i] = from[start + i]!;
}

/** Postings appended to the tails before they are folded, however short the main lists are. */
const MIN_FOLD_POSTINGS = 1 << 16;

function view(docs: Int32Array, payload: Int32Array, from: number, size: number): PostingList {
  return {
    docs: docs.subarray(from, from + size),
    payload: payload.subarray(from, from + size),
    size,
  };
}

/** A chunk's own terms: its term ids (ascending), their counts and its name-term ids. */
interface ChunkRun {
  readonly termIds: Uint32Array;
  readonly counts: Uint32Array;
  readonly nameIds: Uint32Array;
}

/** Words of a snapshot's body read at once: the chunks of one file, read together, share them. */
const BODY_BLOCK_WORDS = 4096;

/**
 * Each chunk's own terms: its term ids (ascending, searched by bisection), their counts and its
 * name-term ids, end to end, with per-chunk columns saying where each chunk's run starts. One
 * record object and three typed-array views per chunk held about 80 MB of heap at 192k chunks.
 * Runs live in two places: the snapshot's body on disk, which has exactly this layout and is read
 * a block at a time when a chunk is asked about (saves and removals; a search asks about a few
 * dozen chunks), and a growable arena in memory for chunks added since, addressed after the
 * body. The room of chunks removed from the arena is reclaimed, by packing it, when it would
 * otherwise grow and half of it is dead; the body's is reclaimed by the next snapshot.
 */
class ChunkTerms {
  private body: { file: WordFile; offset: number; words: number } | null = null;
  /** Runs moved out of the arena during a long write, addressed after the body (see `spill`). */
  private spilled: ScratchFile | null = null;
  private spilledWords = 0;
  /** The block of the body read last, from `blockFrom`. */
  private block = new Uint32Array(BODY_BLOCK_WORDS);
  private blockFrom = 0;
  private blockWords = 0;
  private added: Uint32Array = new Uint32Array(64);
  private addedUsed = 0;
  /** Words of the arena held by removed chunks. */
  private abandoned = 0;
  /** Where each chunk's run starts (past the body's end: in the arena), -1 for a chunk not held. */
  private start = new Int32Array(1024).fill(-1);
  private termCount = new Int32Array(1024);
  private nameCount = new Int32Array(1024);

  /** Forgets every chunk and reads runs from `words` words at byte `offset` of `file`; `adopt` then places them. */
  useBody(file: WordFile, offset: number, words: number): void {
    this.body = { file, offset, words };
    this.spilled = null;
    this.spilledWords = 0;
    this.blockWords = 0;
    this.added = new Uint32Array(64);
    this.addedUsed = 0;
    this.abandoned = 0;
    this.start.fill(-1);
  }

  adopt(docId: number, start: number, terms: number, names: number): void {
    this.grow(docId);
    this.start[docId] = start;
    this.termCount[docId] = terms;
    this.nameCount[docId] = names;
  }

  place(
    docId: number,
    termIds: ArrayLike<number>,
    counts: ArrayLike<number>,
    nameIds: readonly number[],
  ): void {
    const size = termIds.length * 2 + nameIds.length;
    this.reserve(size);
    const at = this.addedUsed;
    this.added.set(termIds, at);
    this.added.set(counts, at + termIds.length);
    this.added.set(nameIds, at + termIds.length * 2);
    this.addedUsed += size;
    this.adopt(docId, this.arenaBase + at, termIds.length, nameIds.length);
  }

  /**
   * Moves the arena's runs to the end of `file` (which holds this index's spilled runs and
   * nothing else): their addresses stay the same, now read from the file, and the arena starts
   * empty after them.
   */
  spill(file: ScratchFile): void {
    if (!this.addedUsed) return;
    if (file.bytes !== this.spilledWords * 4)
      throw new Error('the spilled chunk terms do not match their file');
    file.append(this.added.subarray(0, this.addedUsed));
    this.spilled = file;
    this.spilledWords += this.addedUsed;
    this.added = new Uint32Array(64);
    this.addedUsed = 0;
    this.abandoned = 0;
  }

  /** Words of memory the arena takes: what a spill lets go (the per-chunk columns stay). */
  get heldWords(): number {
    return this.added.length;
  }

  remove(docId: number): void {
    if (!this.holds(docId)) return;
    if (this.start[docId]! >= this.arenaBase) this.abandoned += this.runSize(docId);
    this.start[docId] = -1;
  }

  holds(docId: number): boolean {
    return docId < this.start.length && this.start[docId]! >= 0;
  }

  /** How many distinct terms the chunk's text has. */
  termsIn(docId: number): number {
    return this.termCount[docId]!;
  }

  /** How many distinct name terms the chunk has. */
  namesIn(docId: number): number {
    return this.nameCount[docId]!;
  }

  /** The chunk's terms, read where they are: views valid until the next read. */
  read(docId: number): ChunkRun {
    const terms = this.termCount[docId]!;
    const { arena, from } = this.locate(docId);
    return {
      termIds: arena.subarray(from, from + terms),
      counts: arena.subarray(from + terms, from + terms * 2),
      nameIds: arena.subarray(from + terms * 2, from + terms * 2 + this.nameCount[docId]!),
    };
  }

  /** The count of `termId` in the chunk's text, 0 when absent. */
  frequency(docId: number, termId: number): number {
    const terms = this.termCount[docId]!;
    const { arena, from } = this.locate(docId);
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
    const { arena, from: runFrom } = this.locate(docId);
    const from = runFrom + this.termCount[docId]! * 2;
    const end = from + this.nameCount[docId]!;
    for (let at = from; at < end; at++) if (arena[at] === termId) return true;
    return false;
  }

  private get bodyWords(): number {
    return this.body?.words ?? 0;
  }

  /** The address of the arena's first word: after the body and the spilled runs. */
  private get arenaBase(): number {
    return this.bodyWords + this.spilledWords;
  }

  private runSize(docId: number): number {
    return this.termCount[docId]! * 2 + this.nameCount[docId]!;
  }

  /**
   * Where the chunk's whole run is: in the arena, or in the block read for it of the body or the
   * spilled runs (a block never reaches from one into the other, so its addresses say which).
   */
  private locate(docId: number): { arena: Uint32Array; from: number } {
    const address = this.start[docId]!;
    if (address >= this.arenaBase) return { arena: this.added, from: address - this.arenaBase };
    const size = this.runSize(docId);
    if (address < this.blockFrom || address + size > this.blockFrom + this.blockWords) {
      const { file, position, left } =
        address < this.bodyWords
          ? {
              file: this.body!.file,
              position: this.body!.offset + address * 4,
              left: this.bodyWords - address,
            }
          : {
              file: this.spilled!,
              position: (address - this.bodyWords) * 4,
              left: this.arenaBase - address,
            };
      const count = Math.min(Math.max(size, BODY_BLOCK_WORDS), left);
      if (this.block.length < count) this.block = new Uint32Array(count);
      file.read(this.block, 0, count, position);
      this.blockFrom = address;
      this.blockWords = count;
    }
    return { arena: this.block, from: address - this.blockFrom };
  }

  private reserve(size: number): void {
    if (this.addedUsed + size <= this.added.length) return;
    if (this.abandoned >= this.addedUsed / 2) this.pack();
    if (this.addedUsed + size <= this.added.length) return;
    const added = new Uint32Array(Math.max(this.addedUsed + size, this.added.length * 2));
    added.set(this.added.subarray(0, this.addedUsed));
    this.added = added;
  }

  /** Moves the arena's runs of held chunks end to end into a new arena, leaving out removed ones. */
  private pack(): void {
    const added = new Uint32Array(Math.max(64, this.addedUsed - this.abandoned));
    let at = 0;
    for (let docId = 0; docId < this.start.length; docId++) {
      const address = this.start[docId]!;
      if (address < this.arenaBase) continue;
      const size = this.runSize(docId);
      const from = address - this.arenaBase;
      added.set(this.added.subarray(from, from + size), at);
      this.start[docId] = this.arenaBase + at;
      at += size;
    }
    this.added = added;
    this.addedUsed = at;
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

const LEVEL_INDEX = new Map(CHUNK_LEVELS.map((level, index) => [level, index]));
/**
 * A term's place in its chunk's list, packed below its id (id × PLACE_SPAN + place): a chunk's
 * terms come in a Map, which holds at most 2^24 entries, and a Float64 holds the sum exactly for
 * ids below 2^29, more terms than any vocabulary in memory.
 */
const PLACE_SPAN = 2 ** 24;

/** The scratch files of a writer's index, made at its first spill. */
interface Scratch {
  readonly directory: string;
  readonly budgetWords: number;
  terms: ScratchFile | null;
  postings: ScratchFile | null;
}

/**
 * Words of memory (4 bytes each) the chunk terms and posting lists added since the last snapshot
 * may take before they spill: 64 MB, a few spills for a first index of 10k files.
 */
const SPILL_WORDS = 16 * 2 ** 20;
/** Scratch files made by this process so far: each gets a name of its own. */
let scratchFiles = 0;

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

  /** Per id below `limit`, the sum of the counts before it (and the total at `limit`). */
  prefixSums(limit: number): Int32Array {
    const sums = new Int32Array(limit + 1);
    for (let id = 0; id < limit; id++) sums[id + 1] = sums[id]! + this.get(id);
    return sums;
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
  /** fileTermCounts' list of the files' chunks, kept for the next question (grown, never shrunk). */
  private fileDocs = new Int32Array(0);
  private readonly terms: string[] = [];
  private readonly termIds = new TermTable(this.terms);
  private readonly documentFrequency = new Map<ChunkLevel, TermCounts>();
  private readonly totalLength = new Map<ChunkLevel, number>();
  private readonly liveCount = new Map<ChunkLevel, number>();
  private readonly tombstones = new Set<number>();
  /** Chunks holding each term at any level; a term is in the vocabulary while this is above 0. */
  private readonly termDocuments = new TermCounts();
  private liveTerms = 0;
  /** Counts the terms that entered or left the vocabulary: what `hasTerm` answers changes only with it. */
  private vocabularyTurns = 0;
  private nextDocId = 1;
  /** Room for the posting lists a search reads from the snapshot. */
  private readonly readArena = new ReadArena();
  /** The snapshot the postings and chunk terms not held in memory are read from. */
  private snapshot: WordFile | null = null;
  /** Where a writer's index spills (see `spillInto`); null for a reader's. */
  private scratch: Scratch | null = null;

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

  /** Changes whenever a term enters or leaves the vocabulary (see `hasTerm`), and only then. */
  get vocabularyVersion(): number {
    return this.vocabularyTurns;
  }

  /** Closes the snapshot and scratch files; reading what was on disk fails from now on. */
  close(): void {
    this.snapshot?.close();
    this.scratch?.terms?.close();
    this.scratch?.postings?.close();
    this.scratch = null;
  }

  /**
   * Lets the chunk terms and posting lists added since the last snapshot spill into scratch files
   * in `directory` once they hold more than `budgetWords` of memory: a first index of a large
   * workspace otherwise holds them all until its snapshot is written (about 200 MB at 10k files),
   * at the time its memory peaks. The next snapshot takes them in and empties the files.
   */
  spillInto(directory: string, budgetWords = SPILL_WORDS): void {
    this.scratch ??= { directory, budgetWords, terms: null, postings: null };
  }

  add(documents: readonly LexicalDocument[]): void {
    for (const document of documents) this.addOne(document);
    if (this.scratch && this.heldWords() > this.scratch.budgetWords) this.spill(this.scratch);
    else for (const postings of this.postingLists.values()) postings.settle();
  }

  /**
   * Words of memory a spill would let go: the chunk terms and posting lists added since the
   * snapshot or the last spill.
   */
  private heldWords(): number {
    let words = this.chunkTerms.heldWords;
    for (const postings of this.postingLists.values()) words += postings.heldWords;
    return words;
  }

  /** Moves the chunk terms and posting lists held in memory to the scratch files. */
  private spill(scratch: Scratch): void {
    const started = performance.now();
    const held = this.heldWords();
    const file = (part: string) =>
      ScratchFile.create(
        path.join(scratch.directory, `lexical.tmp-${process.pid}-${++scratchFiles}-${part}`),
      );
    scratch.terms ??= file('terms');
    scratch.postings ??= file('postings');
    this.chunkTerms.spill(scratch.terms);
    let postings = 0;
    for (const lists of this.postingLists.values()) postings += lists.spill(scratch.postings);
    log.info('lexical_spilled', {
      held_mb: Math.round((held * 4) / 2 ** 20),
      postings,
      spilled_mb: Math.round((scratch.terms.bytes + scratch.postings.bytes) / 2 ** 20),
      duration_ms: elapsedMs(started),
    });
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

  /**
   * Starts a search: the posting lists read for the one before may be overwritten from now on
   * (their room is reused, see ReadArena). Until the next start, a list is read from the
   * snapshot once, however many steps of the search ask for it.
   */
  startReading(): void {
    this.readArena.reset();
  }

  /**
   * The raw posting list of `term` at `level`; it may hold tombstones (see `isLive`). Valid until
   * the next change, or the next `startReading`.
   */
  postingList(level: ChunkLevel, term: string): PostingList | undefined {
    const id = this.termIds.get(term);
    return id === undefined ? undefined : this.postingLists.get(level)!.list(id, this.readArena);
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
      termFrequency: (term) => this.termFrequencyIn(docId, term),
      hasNameTerm: (term) => {
        const id = this.termIds.get(term);
        return id !== undefined && this.chunkTerms.hasName(docId, id);
      },
    };
  }

  /** A live chunk's id: what `document(docId).chunkId` gives, with no statistics built. */
  chunkIdOf(docId: number): string | undefined {
    return this.isLive(docId) ? this.chunkIds[docId] : undefined;
  }

  /** The doc id of the live chunk `chunkId` indexed under `path`, if there is one. */
  docIdAt(path: string, chunkId: string): number | undefined {
    for (const docId of this.byPath.get(path) ?? [])
      if (this.isLive(docId) && this.chunkIds[docId] === chunkId) return docId;
    return undefined;
  }

  /** The frequency of `term` in the text of the live chunk `docId` (0 when absent). */
  termFrequencyIn(docId: number, term: string): number {
    const id = this.termIds.get(term);
    return id === undefined ? 0 : this.frequencyOf(docId, id);
  }

  /**
   * A live chunk's count of a term, from the term's posting list when this search has it at hand
   * (its payload holds the same count), otherwise from the chunk's own terms: those are read from
   * the snapshot a block at a time, and the chunks a search asks about are scattered over it.
   */
  private frequencyOf(docId: number, termId: number): number {
    const list = this.listAtHand(this.levels[docId]!, termId);
    return list ? countIn(list, docId) : this.chunkTerms.frequency(docId, termId);
  }

  /**
   * The term's list at the level (by its index in CHUNK_LEVELS) when this search has it at hand,
   * an empty one when the level has none, undefined when it would have to be read.
   */
  private listAtHand(level: number, termId: number): PostingList | undefined {
    const postings = this.postingLists.get(CHUNK_LEVELS[level]!)!;
    return postings.sizeOf(termId) ? postings.listAtHand(termId, this.readArena) : NO_POSTINGS;
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
    let docs = this.fileDocs;
    let docCount = 0;
    const firstAt = new Map<string, number>();
    // indexed loops: the files' chunks are thousands a question, and each iterator step the
    // unoptimised code took was an object for the collector
    for (let at = 0; at < paths.length; at++) {
      const filePath = paths[at]!;
      if (firstAt.has(filePath)) continue;
      firstAt.set(filePath, at);
      const ids = this.byPath.get(filePath);
      const file = files[at]!;
      for (let k = 0; k < (ids?.length ?? 0); k++) {
        const docId = ids![k]!;
        if (!this.isLive(docId) || !wanted.has(this.levels[docId]!)) continue;
        this.fileOfDoc[docId] = at;
        file.length += this.lengths[docId]!;
        if (docCount === docs.length) {
          const grown = new Int32Array(Math.max(1024, docs.length * 2));
          grown.set(docs);
          docs = this.fileDocs = grown;
        }
        docs[docCount++] = docId;
      }
    }
    const lists = levels.map((level) => this.postingLists.get(level)!);
    // terms looked up per chunk: in the term's list where this search has it at hand (found once
    // per level), otherwise in the chunk's own terms, each chunk's read once for all of them
    const lookedUp: { place: number; id: number; atHand: (PostingList | undefined)[] }[] = [];
    terms.forEach((term, place) => {
      const id = this.termIds.get(term);
      if (id === undefined) return;
      const listed = lists.reduce((sum, list) => sum + list.sizeOf(id), 0);
      if (listed >= docCount * POSTINGS_PER_LOOKUP)
        lookedUp.push({
          place,
          id,
          atHand: CHUNK_LEVELS.map((_, level) =>
            wanted.has(level) ? this.listAtHand(level, id) : undefined,
          ),
        });
      else
        for (const list of lists.map((postings) => postings.list(id, this.readArena)))
          for (let k = 0; k < (list?.size ?? 0); k++) {
            const at = this.fileOfDoc[list!.docs[k]!]!;
            if (at >= 0) files[at]!.counts[place]! += list!.payload[k]! >> 1;
          }
    });
    if (lookedUp.length)
      for (let d = 0; d < docCount; d++) {
        const docId = docs[d]!;
        const { counts } = files[this.fileOfDoc[docId]!]!;
        for (let t = 0; t < lookedUp.length; t++) {
          const { place, id, atHand } = lookedUp[t]!;
          const list = atHand[this.levels[docId]!];
          counts[place]! += list ? countIn(list, docId) : this.chunkTerms.frequency(docId, id);
        }
      }
    for (let d = 0; d < docCount; d++) this.fileOfDoc[docs[d]!] = -1;
    // a path asked twice gets its first place's counts
    return paths.map((filePath) => files[firstAt.get(filePath)!]!);
  }

  /** The distinct terms of a chunk's text. */
  termsOf(docId: number): string[] {
    if (!this.isLive(docId)) return [];
    return Array.from(this.chunkTerms.read(docId).termIds, (id) => this.terms[id]!);
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
      const { termIds, counts } = this.chunkTerms.read(docId);
      termIds.forEach((id, i) => terms.set(this.terms[id]!, counts[i]!));
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
   * Writes the live chunks to a new snapshot (see the layout at SNAPSHOT_VERSION), replacing
   * `file` atomically, then reads what is not in memory from it: the posting lists and chunk
   * terms held in memory since the last snapshot move to disk, and removed chunks are gone from
   * the lists (no tombstones are left). The file is written block by block from the old
   * snapshot and memory: no copy of the whole index is made.
   */
  async writeSnapshot(file: string): Promise<void> {
    const ids = [...this.liveDocIds()];
    const termCounts = new Int32Array(ids.length);
    const nameCounts = new Int32Array(ids.length);
    ids.forEach((docId, i) => {
      termCounts[i] = this.chunkTerms.termsIn(docId);
      nameCounts[i] = this.chunkTerms.namesIn(docId);
    });
    const postings = CHUNK_LEVELS.map(
      (level) =>
        this.documentFrequency.get(level)!.prefixSums(this.terms.length)[this.terms.length]!,
    );
    const { prefix, layout } = snapshotPrefix({
      nextDocId: this.nextDocId,
      terms: this.terms,
      ids: Int32Array.from(ids),
      levels: Int32Array.from(ids, (docId) => this.levels[docId]!),
      lengths: Int32Array.from(ids, (docId) => this.lengths[docId]!),
      termCounts,
      nameCounts,
      chunkIds: ids.map((docId) => this.chunkIds[docId]!),
      paths: ids.map((docId) => this.paths[docId]!),
      postings,
    });
    const addresses = new Int32Array(ids.length);
    const starts = CHUNK_LEVELS.map(() => new Int32Array(this.terms.length + 1));
    await fs.mkdir(path.dirname(file), { recursive: true });
    await writeFileAtomic(file, this.snapshotParts(prefix, ids, postings, addresses, starts));
    const snapshot = WordFile.open(file);
    if (snapshot.bytes !== layout.bytes) {
      snapshot.close();
      throw new Error(`the lexical snapshot ${file} was not written whole`);
    }
    this.useSnapshot(snapshot, layout, (place) => {
      ids.forEach((docId, i) => place(docId, addresses[i]!, termCounts[i]!, nameCounts[i]!));
      return starts;
    });
    this.tombstones.clear();
  }

  /**
   * The snapshot's bytes after `prefix` (its length and header), block by block: the live chunks'
   * runs (noting where each starts in `addresses`), then each level's lists (their starts in
   * `starts`), which must hold `postings` entries.
   */
  private *snapshotParts(
    prefix: Uint8Array,
    ids: readonly number[],
    postings: readonly number[],
    addresses: Int32Array,
    starts: readonly Int32Array[],
  ): Generator<Uint8Array> {
    yield prefix;
    const out = new BlockWriter();
    for (let i = 0; i < ids.length; i++) {
      addresses[i] = out.written;
      const { termIds, counts, nameIds } = this.chunkTerms.read(ids[i]!);
      out.put(termIds);
      out.put(counts);
      out.put(nameIds);
      if (out.filled) yield* out.drain();
    }
    const isLive = (docId: number) => this.isLive(docId);
    for (let level = 0; level < CHUNK_LEVELS.length; level++) {
      const before = out.written;
      const lists = this.postingLists.get(CHUNK_LEVELS[level]!)!;
      yield* lists.write(this.terms.length, isLive, out, starts[level]!);
      if (out.written - before !== postings[level]! * 2)
        throw new Error('the lexical postings do not match the document frequencies');
    }
    yield* out.finish();
  }

  /**
   * Reads a snapshot: its chunks' columns and statistics into memory, its posting lists and chunk
   * terms left on disk, read when asked for. Chunk ids and paths are kept through `strings`: a
   * store passes the interner its chunk catalog and facts read next, so each id and path is held
   * once among them.
   */
  static async readSnapshot(file: string, strings = new Strings()): Promise<LexicalIndex> {
    const snapshot = WordFile.open(file);
    try {
      const { columns, layout } = readSnapshotHeader(snapshot, strings);
      const index = new LexicalIndex();
      index.nextDocId = columns.nextDocId;
      columns.terms.forEach((term, id) => {
        index.terms.push(term);
        index.termIds.add(id);
      });
      index.useSnapshot(snapshot, layout, (place) => {
        for (let i = 0, at = 0; i < columns.ids.length; i++) {
          const docId = columns.ids[i]!;
          if (docId < 0 || index.isLive(docId) || docId >= columns.nextDocId)
            throw new Error('the lexical snapshot names a chunk twice or past its last');
          place(docId, at, columns.termCounts[i]!, columns.nameCounts[i]!);
          index.register(
            docId,
            columns.chunkIds[i]!,
            columns.paths[i]!,
            columns.levels[i]!,
            columns.lengths[i]!,
          );
          at += columns.termCounts[i]! * 2 + columns.nameCounts[i]!;
        }
        // each level's lists are laid out term after term: where a term's starts follows from
        // how many chunks hold the terms before it
        return CHUNK_LEVELS.map((level, place) => {
          const starts = index.documentFrequency.get(level)!.prefixSums(columns.terms.length);
          if (starts[columns.terms.length] !== columns.postings[place])
            throw new Error("the lexical snapshot's postings do not match its chunks");
          return starts;
        });
      });
      return index;
    } catch (cause) {
      snapshot.close();
      throw cause;
    }
  }

  /**
   * Reads postings and chunk terms from `snapshot` from now on. `placeChunks` places each chunk's
   * terms in its body (through the function it is given) and returns each level's list starts.
   */
  private useSnapshot(
    snapshot: WordFile,
    layout: SnapshotLayout,
    placeChunks: (
      place: (docId: number, address: number, terms: number, names: number) => void,
    ) => Int32Array[],
  ): void {
    this.chunkTerms.useBody(snapshot, layout.bodyOffset, layout.bodyWords);
    const starts = placeChunks((docId, address, terms, names) =>
      this.chunkTerms.adopt(docId, address, terms, names),
    );
    let offset = layout.postingsOffset;
    CHUNK_LEVELS.forEach((level, place) => {
      const levelStarts = starts[place]!;
      this.postingLists.get(level)!.useDisk(snapshot, offset, levelStarts);
      offset += levelStarts[levelStarts.length - 1]! * 8;
    });
    const previous = this.snapshot;
    this.snapshot = snapshot;
    if (previous !== snapshot) previous?.close();
    // whatever was spilled is in the snapshot now
    this.scratch?.terms?.clear();
    this.scratch?.postings?.clear();
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
      const parsed = DeltaLine.safeParse(parseJsonOrNull(line));
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
    const { termIds, counts, length } = this.sortedTerms(document.terms);
    this.chunkTerms.place(docId, termIds, counts, [
      ...new Set(document.nameTerms.map((term) => this.intern(term))),
    ]);
    this.register(docId, document.chunkId, document.path, LEVEL_INDEX.get(document.level)!, length);
    this.post(docId);
  }

  /**
   * The chunk's terms interned (in the order given, which decides a new term's id) and sorted by
   * id, with their counts, in scratch arrays valid until the next call. Each term's id and place
   * are packed into one number so that a native numeric sort orders them: a pair array per term
   * sorted by a comparator made most of a cold index's lexical add.
   */
  private sortedTerms(terms: ReadonlyMap<string, number>): {
    termIds: Uint32Array;
    counts: Uint32Array;
    length: number;
  } {
    const size = terms.size;
    if (this.sortKeys.length < size) {
      this.sortKeys = new Float64Array(size * 2);
      this.givenCounts = new Uint32Array(size * 2);
      this.sortedIds = new Uint32Array(size * 2);
      this.sortedCounts = new Uint32Array(size * 2);
    }
    const keys = this.sortKeys.subarray(0, size);
    let place = 0;
    let length = 0;
    // forEach, not the entries: an array per entry was a tenth of a first index's garbage
    terms.forEach((count, term) => {
      keys[place] = this.intern(term) * PLACE_SPAN + place;
      this.givenCounts[place++] = count;
      length += count;
    });
    keys.sort();
    for (let at = 0; at < size; at++) {
      const id = Math.floor(keys[at]! / PLACE_SPAN);
      this.sortedIds[at] = id;
      this.sortedCounts[at] = this.givenCounts[keys[at]! - id * PLACE_SPAN]!;
    }
    return {
      termIds: this.sortedIds.subarray(0, size),
      counts: this.sortedCounts.subarray(0, size),
      length,
    };
  }

  /** Scratch for `sortedTerms`, grown to the largest chunk added. */
  private sortKeys = new Float64Array(1024);
  private givenCounts = new Uint32Array(1024);
  private sortedIds = new Uint32Array(1024);
  private sortedCounts = new Uint32Array(1024);

  /** Makes a chunk whose terms `chunkTerms` holds live: its columns and counts (not its postings). */
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
      if (total === (delta > 0 ? 1 : 0)) this.vocabularyTurns++;
    };
    const { termIds, nameIds } = this.chunkTerms.read(docId);
    for (const id of termIds) count(id);
    for (const id of nameIds) if (bisect(termIds, id) < 0) count(id);
  }

  private intern(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.terms.length;
      this.terms.push(term);
      this.termIds.add(id);
    }
    return id;
  }

  /** Appends the chunk to the posting list of each term of its text and names. */
  private post(docId: number): void {
    const lists = this.postingLists.get(CHUNK_LEVELS[this.levels[docId]!]!)!;
    const { termIds, counts, nameIds } = this.chunkTerms.read(docId);
    // which of its terms are also names: found by bisecting the sorted terms once per name (a
    // file chunk has hundreds of both, so asking the names about every term cost ~0.7 s at open)
    if (this.namedTerms.length < termIds.length)
      this.namedTerms = new Uint8Array(termIds.length * 2);
    const named = this.namedTerms.fill(0, 0, termIds.length);
    for (const id of nameIds) {
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

const NO_POSTINGS: PostingList = { docs: new Int32Array(0), payload: new Int32Array(0), size: 0 };

/** The chunk's count of the list's term: its posting's payload holds it beside the name flag. */
function countIn(list: PostingList, docId: number): number {
  const at = bisect(list.docs, docId);
  return at < 0 ? 0 : list.payload[at]! >> 1;
}

function bisect(sorted: Uint32Array | Int32Array, value: number): number {
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

const Level = z.enum(['directory', 'file', 'class', 'function']);
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
