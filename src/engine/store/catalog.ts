import { CHUNK_LEVELS, type ChunkLevel, type LanguageId, type Segment } from '../model';
import type { ChunkMeta } from './tables';

/** A string column's number for null. */
const NULL_TEXT = -1;
/** `originalLineCount`'s stand-in for null (a line count is never negative). */
const NO_COUNT = -1;
/** `isSummarized` as stored: false, true, or null (a row the table holds without a value). */
const SUMMARIZED_NULL = 2;
const LEVEL_NUMBER = new Map(CHUNK_LEVELS.map((level, number) => [level, number]));
const MIN_CAPACITY = 64;

/** The string columns, numbered in the catalog's string table: values that repeat across chunks. */
type TextField =
  | 'filePath'
  | 'directoryPath'
  | 'language'
  | 'className'
  | 'parentDirectoryId'
  | 'parentFileId'
  | 'parentClassId';
const TEXT_FIELDS: readonly TextField[] = [
  'filePath',
  'directoryPath',
  'language',
  'className',
  'parentDirectoryId',
  'parentFileId',
  'parentClassId',
];

/** Strings numbered as they first come: a file's path, its folder, its parents once for all chunks. */
class StringNumbers {
  readonly values: string[] = [];
  private readonly numbers = new Map<string, number>();

  numberOf(value: string | null): number {
    if (value === null) return NULL_TEXT;
    let number = this.numbers.get(value);
    if (number === undefined) {
      number = this.values.length;
      this.values.push(value);
      this.numbers.set(value, number);
    }
    return number;
  }

  /** The number of `value` if it has one, without numbering it. */
  find(value: string): number | undefined {
    return this.numbers.get(value);
  }

  at(number: number): string | null {
    return number === NULL_TEXT ? null : this.values[number]!;
  }
}

/** The catalog's columns: slot `i` of each is chunk `ids[i]`'s ('' for a removed chunk's slot). */
interface Columns {
  ids: string[];
  level: Uint8Array;
  text: Record<TextField, Int32Array>;
  functionName: (string | null)[];
  startLine: Int32Array;
  endLine: Int32Array;
  isSummarized: Uint8Array;
  originalLineCount: Int32Array;
  /** Where a chunk's segments start in `segments` (-1 for none) and how many it has. */
  segmentStart: Int32Array;
  segmentCount: Int32Array;
  /** Segment after segment, two numbers each (start and end line). */
  segments: Int32Array;
  segmentsUsed: number;
  strings: StringNumbers;
  /** Slots used so far, removed ones included. */
  used: number;
}

function emptyColumns(capacity: number, segmentRoom: number): Columns {
  return {
    ids: [],
    level: new Uint8Array(capacity),
    text: Object.fromEntries(
      TEXT_FIELDS.map((field) => [field, new Int32Array(capacity)]),
    ) as Record<TextField, Int32Array>,
    functionName: [],
    startLine: new Int32Array(capacity),
    endLine: new Int32Array(capacity),
    isSummarized: new Uint8Array(capacity),
    originalLineCount: new Int32Array(capacity),
    segmentStart: new Int32Array(capacity),
    segmentCount: new Int32Array(capacity),
    segments: new Int32Array(Math.max(MIN_CAPACITY, segmentRoom)),
    segmentsUsed: 0,
    strings: new StringNumbers(),
    used: 0,
  };
}

/**
 * Every chunk's metadata (all but its text and vector), kept as columns: numbers in typed arrays,
 * strings that repeat across chunks (paths, folders, languages, class names, parent ids) as
 * numbers in one string table. A chunk's metadata as an object held about 150 bytes of heap
 * plus its segments' arrays, 230 MB at 100k files (951k chunks); here a chunk takes about 60
 * bytes, most of them outside the heap.
 *
 * It reads as a `ReadonlyMap` from chunk id to metadata, in the order a `Map` would keep (a chunk
 * set again keeps its place, a removed one's place goes). `get` and the iterators make a fresh
 * object for each chunk they return: callers may keep it, and changing it changes nothing here.
 * Removed chunks leave their slot empty until the next growth packs the columns (which also
 * drops strings no chunk names any more), so iterating while adding chunks is not supported.
 */
export class ChunkCatalog implements ReadonlyMap<string, ChunkMeta> {
  private readonly slots = new Map<string, number>();
  private columns: Columns = emptyColumns(MIN_CAPACITY, MIN_CAPACITY);
  /** Segment numbers no live chunk reads any more (reclaimed when the columns are packed). */
  private abandonedSegments = 0;
  /** Counts the times the columns were packed, so an iterator notices its slots moved. */
  private packs = 0;

  /** A catalog of `metas`, in their order. */
  static of(metas: Iterable<ChunkMeta>): ChunkCatalog {
    const catalog = new ChunkCatalog();
    for (const meta of metas) catalog.set(meta.id, meta);
    return catalog;
  }

  get size(): number {
    return this.slots.size;
  }

  has(id: string): boolean {
    return this.slots.has(id);
  }

  get(id: string): ChunkMeta | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.metaAt(slot);
  }

  /** Adds `meta` under `id`, or replaces what `id` held (keeping its place in the order). */
  set(id: string, meta: ChunkMeta): this {
    let slot = this.slots.get(id);
    if (slot === undefined) {
      if (this.columns.used === this.columns.level.length) this.makeRoom();
      slot = this.columns.used++;
      this.columns.ids[slot] = id;
      this.slots.set(id, slot);
    } else this.abandonedSegments += this.columns.segmentCount[slot]! * 2;
    this.write(slot, meta);
    return this;
  }

  delete(id: string): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    this.slots.delete(id);
    this.columns.ids[slot] = '';
    this.abandonedSegments += this.columns.segmentCount[slot]! * 2;
    return true;
  }

  clear(): void {
    this.slots.clear();
    this.columns = emptyColumns(MIN_CAPACITY, MIN_CAPACITY);
    this.abandonedSegments = 0;
    this.packs++;
  }

  /** Takes over `other`'s chunks (which it then no longer holds), replacing this catalog's. */
  takeOver(other: ChunkCatalog): void {
    this.clear();
    for (const [id, slot] of other.slots) this.slots.set(id, slot);
    this.columns = other.columns;
    this.abandonedSegments = other.abandonedSegments;
    other.slots.clear();
    other.columns = emptyColumns(MIN_CAPACITY, MIN_CAPACITY);
    other.abandonedSegments = 0;
    other.packs++;
  }

  /** How many chunks of `level` the catalog holds. */
  countOf(level: ChunkLevel): number {
    const wanted = LEVEL_NUMBER.get(level);
    let count = 0;
    this.eachSlot((slot) => {
      if (this.columns.level[slot] === wanted) count++;
    });
    return count;
  }

  /** Whether any chunk belongs to the file at `filePath`. */
  hasFile(filePath: string): boolean {
    const number = this.columns.strings.find(filePath);
    if (number === undefined) return false;
    const { ids, text, used } = this.columns;
    for (let slot = 0; slot < used; slot++)
      if (text.filePath[slot] === number && ids[slot] !== '') return true;
    return false;
  }

  /** Each chunk's id and file path (null for a folder's chunk), in order, without making its metadata. */
  forEachPlace(callback: (id: string, filePath: string | null) => void): void {
    const { ids, text, strings } = this.columns;
    this.eachSlot((slot) => callback(ids[slot]!, strings.at(text.filePath[slot]!)));
  }

  /**
   * The ids, in order, of the chunks of `files` and of the folder chunks of `folders`: what a save
   * of those files replaces.
   */
  idsOf(files: ReadonlySet<string>, folders: ReadonlySet<string>): string[] {
    const { ids, level, text, strings } = this.columns;
    const numbers = (values: ReadonlySet<string>) =>
      new Set([...values].map((value) => strings.find(value)).filter((n) => n !== undefined));
    const fileNumbers = numbers(files);
    const folderNumbers = numbers(folders);
    const directory = LEVEL_NUMBER.get('directory');
    const out: string[] = [];
    this.eachSlot((slot) => {
      const wanted =
        level[slot] === directory
          ? folderNumbers.has(text.directoryPath[slot]!)
          : fileNumbers.has(text.filePath[slot]!);
      if (wanted) out.push(ids[slot]!);
    });
    return out;
  }

  /** Every chunk's folder, each once, in the order the chunks come. */
  directoryPaths(): Set<string> {
    const { text, strings } = this.columns;
    const seen = new Set<number>();
    this.eachSlot((slot) => seen.add(text.directoryPath[slot]!));
    return new Set([...seen].map((number) => strings.at(number)!));
  }

  *entries(): MapIterator<[string, ChunkMeta]> {
    for (const slot of this.liveSlots()) yield [this.columns.ids[slot]!, this.metaAt(slot)];
  }

  *keys(): MapIterator<string> {
    for (const slot of this.liveSlots()) yield this.columns.ids[slot]!;
  }

  *values(): MapIterator<ChunkMeta> {
    for (const slot of this.liveSlots()) yield this.metaAt(slot);
  }

  [Symbol.iterator](): MapIterator<[string, ChunkMeta]> {
    return this.entries();
  }

  forEach(
    callback: (value: ChunkMeta, key: string, map: ReadonlyMap<string, ChunkMeta>) => void,
  ): void {
    for (const [id, meta] of this.entries()) callback(meta, id, this);
  }

  /** The live slots in order; an error if the columns are packed while it runs. */
  private *liveSlots(): Generator<number> {
    const packs = this.packs;
    for (let slot = 0; slot < this.columns.used; slot++) {
      if (this.columns.ids[slot] === '') continue;
      yield slot;
      if (this.packs !== packs) throw new Error('the chunk catalog was repacked while iterated');
    }
  }

  private eachSlot(callback: (slot: number) => void): void {
    const { ids, used } = this.columns;
    for (let slot = 0; slot < used; slot++) if (ids[slot] !== '') callback(slot);
  }

  private metaAt(slot: number): ChunkMeta {
    const { text, strings } = this.columns;
    const summarized = this.columns.isSummarized[slot]!;
    const count = this.columns.originalLineCount[slot]!;
    // the same keys in the same order as the chunks table's rows give
    return {
      id: this.columns.ids[slot]!,
      level: CHUNK_LEVELS[this.columns.level[slot]!]!,
      filePath: strings.at(text.filePath[slot]!),
      directoryPath: strings.at(text.directoryPath[slot]!)!,
      language: strings.at(text.language[slot]!) as LanguageId | null,
      className: strings.at(text.className[slot]!),
      functionName: this.columns.functionName[slot]!,
      startLine: this.columns.startLine[slot]!,
      endLine: this.columns.endLine[slot]!,
      parentDirectoryId: strings.at(text.parentDirectoryId[slot]!),
      parentFileId: strings.at(text.parentFileId[slot]!),
      parentClassId: strings.at(text.parentClassId[slot]!),
      isSummarized: (summarized === SUMMARIZED_NULL ? null : summarized === 1) as boolean,
      originalLineCount: count === NO_COUNT ? null : count,
      segments: this.segmentsAt(slot),
    };
  }

  private segmentsAt(slot: number): Segment[] | null {
    const start = this.columns.segmentStart[slot]!;
    if (start < 0) return null;
    const out: Segment[] = [];
    const { segments } = this.columns;
    for (let i = 0, at = start; i < this.columns.segmentCount[slot]!; i++, at += 2)
      out.push([segments[at]!, segments[at + 1]!]);
    return out;
  }

  private write(slot: number, meta: ChunkMeta): void {
    const columns = this.columns;
    const level = LEVEL_NUMBER.get(meta.level);
    if (level === undefined) throw new Error(`a chunk of unknown level: ${String(meta.level)}`);
    const count = meta.originalLineCount;
    if (count !== null && !(Number.isInteger(count) && count >= 0 && count <= 0x7fffffff))
      throw new Error(`a chunk's original line count is not a line count: ${count}`);
    columns.level[slot] = level;
    for (const field of TEXT_FIELDS)
      columns.text[field][slot] = columns.strings.numberOf(meta[field] as string | null);
    columns.functionName[slot] = meta.functionName;
    columns.startLine[slot] = meta.startLine;
    columns.endLine[slot] = meta.endLine;
    const summarized = meta.isSummarized as boolean | null;
    columns.isSummarized[slot] = summarized === null ? SUMMARIZED_NULL : summarized ? 1 : 0;
    columns.originalLineCount[slot] = count ?? NO_COUNT;
    this.writeSegments(slot, meta.segments);
  }

  private writeSegments(slot: number, segments: readonly Segment[] | null): void {
    const columns = this.columns;
    // the slot's earlier segments, if any, were counted as abandoned
    columns.segmentStart[slot] = -1;
    columns.segmentCount[slot] = 0;
    if (!segments) return;
    const size = segments.length * 2;
    if (
      columns.segmentsUsed + size > columns.segments.length &&
      this.abandonedSegments * 2 >= columns.segmentsUsed
    )
      this.packSegments();
    if (columns.segmentsUsed + size > columns.segments.length) {
      const grown = new Int32Array(
        Math.max(columns.segmentsUsed + size, columns.segments.length * 2),
      );
      grown.set(columns.segments.subarray(0, columns.segmentsUsed));
      columns.segments = grown;
    }
    columns.segmentStart[slot] = columns.segmentsUsed;
    columns.segmentCount[slot] = segments.length;
    for (const [start, end] of segments) {
      columns.segments[columns.segmentsUsed++] = start;
      columns.segments[columns.segmentsUsed++] = end;
    }
  }

  /** Rewrites the segments arena with the live chunks' segments only. */
  private packSegments(): void {
    const columns = this.columns;
    const old = columns.segments;
    columns.segments = new Int32Array(
      Math.max(MIN_CAPACITY, columns.segmentsUsed - this.abandonedSegments),
    );
    columns.segmentsUsed = 0;
    this.abandonedSegments = 0;
    this.eachSlot((slot) => {
      const start = columns.segmentStart[slot]!;
      if (start < 0) return;
      const size = columns.segmentCount[slot]! * 2;
      columns.segmentStart[slot] = columns.segmentsUsed;
      columns.segments.set(old.subarray(start, start + size), columns.segmentsUsed);
      columns.segmentsUsed += size;
    });
  }

  /** Makes room for `size` chunks in all, so that loading them never grows the columns. */
  reserve(size: number): void {
    if (size > this.columns.level.length) this.resize(size);
  }

  /**
   * Room for one more chunk: the live chunks packed into columns of the same size when a quarter
   * or more of the slots were freed (strings no live chunk names are dropped on the way), else
   * the columns copied into ones a quarter larger.
   */
  private makeRoom(): void {
    const { used } = this.columns;
    if (this.slots.size * 4 <= used * 3) this.pack(Math.max(MIN_CAPACITY, used));
    else this.resize(Math.max(MIN_CAPACITY, Math.ceil(used * 1.25)));
  }

  private resize(capacity: number): void {
    const old = this.columns;
    const grown = <T extends Uint8Array | Int32Array>(column: T, make: (size: number) => T): T => {
      const copy = make(capacity);
      copy.set(column.subarray(0, old.used));
      return copy;
    };
    const ints = (size: number) => new Int32Array(size);
    const bytes = (size: number) => new Uint8Array(size);
    this.columns = {
      ...old,
      level: grown(old.level, bytes),
      text: Object.fromEntries(
        TEXT_FIELDS.map((field) => [field, grown(old.text[field], ints)]),
      ) as Record<TextField, Int32Array>,
      startLine: grown(old.startLine, ints),
      endLine: grown(old.endLine, ints),
      isSummarized: grown(old.isSummarized, bytes),
      originalLineCount: grown(old.originalLineCount, ints),
      segmentStart: grown(old.segmentStart, ints),
      segmentCount: grown(old.segmentCount, ints),
    };
  }

  /** Moves the live chunks, in order, into fresh columns of `capacity` slots. */
  private pack(capacity: number): void {
    const old = this.columns;
    this.columns = emptyColumns(capacity, old.segmentsUsed - this.abandonedSegments);
    this.abandonedSegments = 0;
    for (let slot = 0; slot < old.used; slot++) {
      const id = old.ids[slot]!;
      if (id === '') continue;
      const at = this.columns.used++;
      this.columns.ids[at] = id;
      this.slots.set(id, at);
      this.moveSlot(old, slot, at);
    }
    this.packs++;
  }

  private moveSlot(old: Columns, from: number, to: number): void {
    const columns = this.columns;
    columns.level[to] = old.level[from]!;
    for (const field of TEXT_FIELDS)
      columns.text[field][to] = columns.strings.numberOf(old.strings.at(old.text[field][from]!));
    columns.functionName[to] = old.functionName[from]!;
    columns.startLine[to] = old.startLine[from]!;
    columns.endLine[to] = old.endLine[from]!;
    columns.isSummarized[to] = old.isSummarized[from]!;
    columns.originalLineCount[to] = old.originalLineCount[from]!;
    const start = old.segmentStart[from]!;
    const count = old.segmentCount[from]!;
    columns.segmentCount[to] = count;
    if (start < 0) columns.segmentStart[to] = -1;
    else {
      columns.segmentStart[to] = columns.segmentsUsed;
      columns.segments.set(old.segments.subarray(start, start + count * 2), columns.segmentsUsed);
      columns.segmentsUsed += count * 2;
    }
  }
}
