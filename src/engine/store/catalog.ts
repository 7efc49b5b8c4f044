import { CHUNK_LEVELS, type ChunkLevel, type LanguageId, type Segment } from '../model';
import type { ChunkMeta } from './tables';

/** A string column's number for null. */
const NULL_TEXT = -1;
/** `originalLineCount`'s stand-in for null (a line count is never negative). */
const NO_COUNT = -1;
/** `isSummarized` as stored: false, true, or null (a row the table holds without a value). */
const SUMMARIZED_NULL = 2;
const LEVEL_NUMBER = new Map(CHUNK_LEVELS.map((level, number) => [level, number]));
const DIRECTORY_LEVEL = LEVEL_NUMBER.get('directory')!;
const MIN_CAPACITY = 64;
/**
 * Objects kept for the chunks asked for last, by slot. A question asks for ~2,800 chunks' metadata
 * at 10k files, 330 of them distinct: kept, most lookups make no object. A power of two: a slot's
 * place among them is its low bits.
 */
const RECENT = 1024;

/** The string fields numbered in the catalog's string table: values that repeat across chunks. */
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

/**
 * A chunk's numbers, side by side in one row of `Columns.rows` (so that reading a chunk touches
 * one or two cache lines, not one per field): its level, its string fields' numbers (in
 * TEXT_FIELDS order from TEXT), its lines, whether it is summarised, its original line count,
 * and where its segments start in `Columns.segments` (-1 for none) and how many it has.
 */
const LEVEL = 0;
const TEXT = 1;
const START_LINE = TEXT + TEXT_FIELDS.length;
const END_LINE = START_LINE + 1;
const SUMMARIZED = END_LINE + 1;
const LINE_COUNT = SUMMARIZED + 1;
const SEGMENT_START = LINE_COUNT + 1;
const SEGMENT_COUNT = SEGMENT_START + 1;
const ROW = SEGMENT_COUNT + 1;
const FILE_PATH = TEXT + TEXT_FIELDS.indexOf('filePath');
const DIRECTORY_PATH = TEXT + TEXT_FIELDS.indexOf('directoryPath');
const LANGUAGE = TEXT + TEXT_FIELDS.indexOf('language');
const CLASS_NAME = TEXT + TEXT_FIELDS.indexOf('className');
const PARENT_DIRECTORY_ID = TEXT + TEXT_FIELDS.indexOf('parentDirectoryId');
const PARENT_FILE_ID = TEXT + TEXT_FIELDS.indexOf('parentFileId');
const PARENT_CLASS_ID = TEXT + TEXT_FIELDS.indexOf('parentClassId');

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

/** The catalog's folders in the order of their first chunks, with what keeps it current. */
interface FolderOrder {
  readonly paths: Set<string>;
  /** By folder (its string number): the slot of its first chunk, and how many chunks it has. */
  readonly first: Map<number, number>;
  readonly live: Map<number, number>;
}

/** Where a chunk belongs (see `ChunkCatalog.placeOf`). */
export interface ChunkPlace {
  readonly id: string;
  /** Whether it is a folder's chunk. */
  readonly folder: boolean;
  /** Its folder for a folder's chunk, else its file's path (null for none). */
  readonly path: string | null;
  readonly level: ChunkLevel;
}

/** The catalog's slots: slot `i` is chunk `names[2i]`'s ('' for a removed chunk's slot). */
interface Columns {
  /** Each slot's chunk id and function name, side by side. */
  names: (string | null)[];
  /** ROW numbers per slot. */
  rows: Int32Array;
  /** Segment after segment, two numbers each (start and end line). */
  segments: Int32Array;
  segmentsUsed: number;
  strings: StringNumbers;
  /** Slots used so far, removed ones included. */
  used: number;
}

/**
 * The number of `meta`'s level, once `meta` is known to fit a row: checked before `set` changes
 * anything, so a rejected chunk leaves the catalog as it was.
 */
function levelNumberOf(meta: ChunkMeta): number {
  const level = LEVEL_NUMBER.get(meta.level);
  if (level === undefined) throw new Error(`a chunk of unknown level: ${String(meta.level)}`);
  const count = meta.originalLineCount;
  if (count !== null && !(Number.isInteger(count) && count >= 0 && count <= 0x7fffffff))
    throw new Error(`a chunk's original line count is not a line count: ${count}`);
  return level;
}

function emptyColumns(capacity: number, segmentRoom: number): Columns {
  return {
    names: [],
    rows: new Int32Array(capacity * ROW),
    segments: new Int32Array(Math.max(MIN_CAPACITY, segmentRoom)),
    segmentsUsed: 0,
    strings: new StringNumbers(),
    used: 0,
  };
}

/**
 * Every chunk's metadata (all but its text and vector), kept as one row of numbers per chunk in
 * a typed array, with strings that repeat across chunks (paths, folders, languages, class names,
 * parent ids) as numbers in one string table. A chunk's metadata as an object held about 150
 * bytes of heap plus its segments' arrays, 230 MB at 100k files (951k chunks); here a chunk takes
 * a 56-byte row outside the heap and two references (its id and function name) on it. A row
 * rather than a typed array per field: reading a chunk then touches a cache line or two, not one
 * per field (a lookup cost about five times a Map's with a column per field).
 *
 * It reads as a `ReadonlyMap` from chunk id to metadata, in the order a `Map` would keep (a chunk
 * set again keeps its place, a removed one's place goes). The iterators make an object for each
 * chunk; `get` makes one or gives the one it made for that chunk lately. Like a `Map`'s values,
 * one object may reach several callers: they read it and never change it.
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
  /** The object made for the chunk in slot `recentSlot[i]` (-1: none), at `i = slot % RECENT` (its low bits). */
  private readonly recent: (ChunkMeta | undefined)[] = new Array<ChunkMeta | undefined>(RECENT);
  private readonly recentSlot = new Int32Array(RECENT).fill(-1);
  /** The folders as `directoryPaths` last read them, while no change can have reordered them. */
  private folderOrder: FolderOrder | null = null;

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
    if (slot === undefined) return undefined;
    const at = slot & (RECENT - 1);
    if (this.recentSlot[at] === slot) return this.recent[at];
    const meta = this.metaAt(slot);
    this.recent[at] = meta;
    this.recentSlot[at] = slot;
    return meta;
  }

  /** Adds `meta` under `id`, or replaces what `id` held (keeping its place in the order). */
  set(id: string, meta: ChunkMeta): this {
    const level = levelNumberOf(meta);
    let slot = this.slots.get(id);
    if (slot === undefined) {
      if (this.columns.used * ROW === this.columns.rows.length) this.makeRoom();
      slot = this.columns.used++;
      this.columns.names[slot * 2] = id;
      this.slots.set(id, slot);
      this.forget(slot);
      this.write(slot, meta, level);
      this.joinFolder(slot);
      return this;
    }
    this.abandonedSegments += this.columns.rows[slot * ROW + SEGMENT_COUNT]! * 2;
    const folder = this.columns.rows[slot * ROW + DIRECTORY_PATH];
    this.forget(slot);
    this.write(slot, meta, level);
    // a chunk that moves to another folder may reorder the folders: read them again
    if (this.columns.rows[slot * ROW + DIRECTORY_PATH] !== folder) this.folderOrder = null;
    return this;
  }

  delete(id: string): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined) return false;
    this.slots.delete(id);
    this.leaveFolder(slot);
    this.forget(slot);
    this.columns.names[slot * 2] = '';
    this.columns.names[slot * 2 + 1] = null;
    this.abandonedSegments += this.columns.rows[slot * ROW + SEGMENT_COUNT]! * 2;
    return true;
  }

  clear(): void {
    this.slots.clear();
    this.columns = emptyColumns(MIN_CAPACITY, MIN_CAPACITY);
    this.abandonedSegments = 0;
    this.moved();
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
    other.moved();
  }

  /** How many chunks of `level` the catalog holds. */
  countOf(level: ChunkLevel): number {
    const wanted = LEVEL_NUMBER.get(level);
    const { rows } = this.columns;
    let count = 0;
    this.eachSlot((slot) => {
      if (rows[slot * ROW + LEVEL] === wanted) count++;
    });
    return count;
  }

  /**
   * Where chunk `id` belongs, without making its metadata: the catalog's copy of its id, and its
   * file's path (null for none) or, for a folder's chunk, its folder. Undefined for an unknown id.
   * `likelySlot` is where a caller expects it: a catalog read from a table fills its slots in the
   * table's order, which a later read of that table meets again, so its n-th row is looked for in
   * slot n first (compared with the id there, not looked up).
   */
  placeOf(id: string, likelySlot = -1): ChunkPlace | undefined {
    const { names, rows, strings } = this.columns;
    // a removed chunk's slot holds '', which no id equals
    const slot = names[likelySlot * 2] === id ? likelySlot : this.slots.get(id);
    if (slot === undefined) return undefined;
    const row = slot * ROW;
    const folder = rows[row + LEVEL] === DIRECTORY_LEVEL;
    return {
      id: names[slot * 2]!,
      folder,
      path: strings.at(rows[row + (folder ? DIRECTORY_PATH : FILE_PATH)]!),
      level: CHUNK_LEVELS[rows[row + LEVEL]!]!,
    };
  }

  /** The catalog's own copy of the id `id` (undefined for an unknown id): keep it, not `id`. */
  idOf(id: string): string | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.columns.names[slot * 2]!;
  }

  /** The level of chunk `id`, undefined for an unknown id: read from its row, no metadata made. */
  levelOf(id: string): ChunkLevel | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : CHUNK_LEVELS[this.columns.rows[slot * ROW + LEVEL]!];
  }

  /** The path of chunk `id`'s file: null for a folder's chunk, undefined for an unknown id. */
  filePathOf(id: string): string | null | undefined {
    const slot = this.slots.get(id);
    return slot === undefined
      ? undefined
      : this.columns.strings.at(this.columns.rows[slot * ROW + FILE_PATH]!);
  }

  /** Whether any chunk belongs to the file at `filePath`. */
  hasFile(filePath: string): boolean {
    const number = this.columns.strings.find(filePath);
    if (number === undefined) return false;
    const { names, rows, used } = this.columns;
    for (let slot = 0; slot < used; slot++)
      if (rows[slot * ROW + FILE_PATH] === number && names[slot * 2] !== '') return true;
    return false;
  }

  /** Each chunk's id and file path (null for a folder's chunk), in order, without making its metadata. */
  forEachPlace(callback: (id: string, filePath: string | null) => void): void {
    const { names, rows, strings } = this.columns;
    this.eachSlot((slot) => callback(names[slot * 2]!, strings.at(rows[slot * ROW + FILE_PATH]!)));
  }

  /**
   * The ids, in order, of the chunks of `files` and of the folder chunks of `folders`: what a save
   * of those files replaces.
   */
  idsOf(files: ReadonlySet<string>, folders: ReadonlySet<string>): string[] {
    const { names, rows, used } = this.columns;
    // flags by string number, not sets: a save asks this of every chunk (950k at 100k files)
    const fileWanted = this.stringFlags(files);
    const folderWanted = this.stringFlags(folders);
    const out: string[] = [];
    for (let slot = 0, row = 0; slot < used; slot++, row += ROW) {
      if (names[slot * 2] === '') continue;
      const wanted =
        rows[row + LEVEL] === DIRECTORY_LEVEL
          ? folderWanted[rows[row + DIRECTORY_PATH]! + 1]
          : fileWanted[rows[row + FILE_PATH]! + 1];
      if (wanted) out.push(names[slot * 2]!);
    }
    return out;
  }

  /**
   * Every chunk's folder, each once, in the order the chunks come. The same set is given again
   * until a change may have reordered the folders: a save adds its chunks after every folder's
   * first, so it seldom does, and reading them again took 9-12 ms of a save at 100k files.
   */
  directoryPaths(): ReadonlySet<string> {
    this.folderOrder ??= this.readFolderOrder();
    return this.folderOrder.paths;
  }

  private readFolderOrder(): FolderOrder {
    const { names, rows, used, strings } = this.columns;
    const order: FolderOrder = { paths: new Set(), first: new Map(), live: new Map() };
    for (let slot = 0, row = 0; slot < used; slot++, row += ROW) {
      if (names[slot * 2] === '') continue;
      const number = rows[row + DIRECTORY_PATH]!;
      const live = order.live.get(number);
      if (live !== undefined) {
        order.live.set(number, live + 1);
        continue;
      }
      order.live.set(number, 1);
      order.first.set(number, slot);
      order.paths.add(strings.at(number)!);
    }
    return order;
  }

  /**
   * Counts the chunk just appended in `slot` in its folder: it comes after every folder's first
   * chunk, so only a folder new to the catalog changes the order (it joins the set at its end).
   */
  private joinFolder(slot: number): void {
    const order = this.folderOrder;
    if (!order) return;
    const folder = this.columns.rows[slot * ROW + DIRECTORY_PATH]!;
    const live = order.live.get(folder);
    if (live === undefined) this.folderOrder = null;
    else order.live.set(folder, live + 1);
  }

  /** Uncounts the chunk leaving `slot` from its folder, unless its going may reorder the folders. */
  private leaveFolder(slot: number): void {
    const order = this.folderOrder;
    if (!order) return;
    const folder = this.columns.rows[slot * ROW + DIRECTORY_PATH]!;
    const live = order.live.get(folder)!;
    // the folder's first chunk leaving moves the folder back, or out of the set
    if (live === 1 || order.first.get(folder) === slot) this.folderOrder = null;
    else order.live.set(folder, live - 1);
  }

  /** A flag per string number, one past (so null's number has one), set for the numbers of `values`. */
  private stringFlags(values: ReadonlySet<string>): Uint8Array {
    const { strings } = this.columns;
    const flags = new Uint8Array(strings.values.length + 1);
    for (const value of values) {
      const number = strings.find(value);
      if (number !== undefined) flags[number + 1] = 1;
    }
    return flags;
  }

  *entries(): MapIterator<[string, ChunkMeta]> {
    for (const slot of this.liveSlots()) yield [this.columns.names[slot * 2]!, this.metaAt(slot)];
  }

  *keys(): MapIterator<string> {
    for (const slot of this.liveSlots()) yield this.columns.names[slot * 2]!;
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

  /** Makes room for `size` chunks in all, so that loading them never grows the columns. */
  reserve(size: number): void {
    if (size * ROW > this.columns.rows.length) this.resize(size);
  }

  /** The live slots in order; an error if the columns are packed while it runs. */
  private *liveSlots(): Generator<number> {
    const packs = this.packs;
    for (let slot = 0; slot < this.columns.used; slot++) {
      if (this.columns.names[slot * 2] === '') continue;
      yield slot;
      if (this.packs !== packs) throw new Error('the chunk catalog was repacked while iterated');
    }
  }

  private eachSlot(callback: (slot: number) => void): void {
    const { names, used } = this.columns;
    for (let slot = 0; slot < used; slot++) if (names[slot * 2] !== '') callback(slot);
  }

  private metaAt(slot: number): ChunkMeta {
    const { names, rows, strings } = this.columns;
    const row = slot * ROW;
    const summarized = rows[row + SUMMARIZED]!;
    const count = rows[row + LINE_COUNT]!;
    // the same keys in the same order as the chunks table's rows give
    return {
      id: names[slot * 2]!,
      level: CHUNK_LEVELS[rows[row + LEVEL]!]!,
      filePath: strings.at(rows[row + FILE_PATH]!),
      directoryPath: strings.at(rows[row + DIRECTORY_PATH]!)!,
      language: strings.at(rows[row + LANGUAGE]!) as LanguageId | null,
      className: strings.at(rows[row + CLASS_NAME]!),
      functionName: names[slot * 2 + 1]!,
      startLine: rows[row + START_LINE]!,
      endLine: rows[row + END_LINE]!,
      parentDirectoryId: strings.at(rows[row + PARENT_DIRECTORY_ID]!),
      parentFileId: strings.at(rows[row + PARENT_FILE_ID]!),
      parentClassId: strings.at(rows[row + PARENT_CLASS_ID]!),
      isSummarized: (summarized === SUMMARIZED_NULL ? null : summarized === 1) as boolean,
      originalLineCount: count === NO_COUNT ? null : count,
      segments: this.segmentsAt(row),
    };
  }

  private segmentsAt(row: number): Segment[] | null {
    const { rows, segments } = this.columns;
    const start = rows[row + SEGMENT_START]!;
    if (start < 0) return null;
    const out: Segment[] = [];
    for (let i = 0, at = start; i < rows[row + SEGMENT_COUNT]!; i++, at += 2)
      out.push([segments[at]!, segments[at + 1]!]);
    return out;
  }

  /** Writes `meta` (checked by `levelNumberOf`, its level's number `level`) into `slot`'s row. */
  private write(slot: number, meta: ChunkMeta, level: number): void {
    const columns = this.columns;
    const count = meta.originalLineCount;
    const { rows } = columns;
    const row = slot * ROW;
    rows[row + LEVEL] = level;
    TEXT_FIELDS.forEach((field, at) => {
      rows[row + TEXT + at] = columns.strings.numberOf(meta[field] as string | null);
    });
    columns.names[slot * 2 + 1] = meta.functionName;
    rows[row + START_LINE] = meta.startLine;
    rows[row + END_LINE] = meta.endLine;
    const summarized = meta.isSummarized as boolean | null;
    rows[row + SUMMARIZED] = summarized === null ? SUMMARIZED_NULL : summarized ? 1 : 0;
    rows[row + LINE_COUNT] = count ?? NO_COUNT;
    this.writeSegments(row, meta.segments);
  }

  private writeSegments(row: number, segments: readonly Segment[] | null): void {
    const columns = this.columns;
    // the slot's earlier segments, if any, were counted as abandoned
    columns.rows[row + SEGMENT_START] = -1;
    columns.rows[row + SEGMENT_COUNT] = 0;
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
    columns.rows[row + SEGMENT_START] = columns.segmentsUsed;
    columns.rows[row + SEGMENT_COUNT] = segments.length;
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
      const row = slot * ROW;
      const start = columns.rows[row + SEGMENT_START]!;
      if (start < 0) return;
      const size = columns.rows[row + SEGMENT_COUNT]! * 2;
      columns.rows[row + SEGMENT_START] = columns.segmentsUsed;
      columns.segments.set(old.subarray(start, start + size), columns.segmentsUsed);
      columns.segmentsUsed += size;
    });
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
    const rows = new Int32Array(capacity * ROW);
    rows.set(this.columns.rows.subarray(0, this.columns.used * ROW));
    this.columns = { ...this.columns, rows };
  }

  /** Moves the live chunks, in order, into fresh columns of `capacity` slots. */
  private pack(capacity: number): void {
    const old = this.columns;
    const columns = emptyColumns(capacity, old.segmentsUsed - this.abandonedSegments);
    this.columns = columns;
    this.abandonedSegments = 0;
    for (let slot = 0; slot < old.used; slot++) {
      const id = old.names[slot * 2]!;
      if (id === '') continue;
      const to = columns.used++;
      columns.names[to * 2] = id;
      columns.names[to * 2 + 1] = old.names[slot * 2 + 1]!;
      this.slots.set(id, to);
      const from = slot * ROW;
      const row = to * ROW;
      columns.rows.set(old.rows.subarray(from, from + ROW), row);
      for (let at = TEXT; at < TEXT + TEXT_FIELDS.length; at++)
        columns.rows[row + at] = columns.strings.numberOf(old.strings.at(old.rows[from + at]!));
      const start = old.rows[from + SEGMENT_START]!;
      if (start < 0) continue;
      const size = old.rows[from + SEGMENT_COUNT]! * 2;
      columns.rows[row + SEGMENT_START] = columns.segmentsUsed;
      columns.segments.set(old.segments.subarray(start, start + size), columns.segmentsUsed);
      columns.segmentsUsed += size;
    }
    this.moved();
  }

  /** Drops the object kept for `slot`, whose chunk changed or left. */
  private forget(slot: number): void {
    const at = slot & (RECENT - 1);
    if (this.recentSlot[at] === slot) {
      this.recentSlot[at] = -1;
      this.recent[at] = undefined;
    }
  }

  /** The slots moved or emptied: iterators stop, and no kept object is served again. */
  private moved(): void {
    this.packs++;
    this.folderOrder = null;
    this.recentSlot.fill(-1);
    this.recent.fill(undefined);
  }
}
