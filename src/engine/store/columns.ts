import type { Data, RecordBatch } from 'apache-arrow';
import { fnv1a, fnv1aBytes } from '../util/hash';

/**
 * Whole columns of a LanceDB record batch read straight from their Arrow buffers: strings cut
 * from one UTF-8 buffer by offset, integers copied from their typed array. Reading rows through
 * Arrow's row objects instead costs a visitor call per field and many short-lived objects, which
 * at 200k rows made opening a store take seconds of CPU and hundreds of MB of garbage.
 *
 * Strings that repeat across rows or tables (a file's path on each of its chunks and facts, a
 * language, a kind, a called name, a chunk id that facts name, a function's name that is also
 * its qualified name, a signature or docstring written alike in several places) go through a
 * `Strings` table, so the rows kept in memory share one copy; values unique to a row (fact ids,
 * texts) are not looked up there.
 */
export class Strings {
  /** Each kept string's place in `values` (−1 for none), by its hash, probed linearly. */
  private slots = new Int32Array(1024).fill(EMPTY);
  private hashes = new Int32Array(512);
  private readonly values: string[] = [];

  get size(): number {
    return this.values.length;
  }

  /** The one kept copy of `value`. */
  intern(value: string): string {
    const hash = hashOfString(value);
    const mask = this.slots.length - 1;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const place = this.slots[at]!;
      if (place === EMPTY) return this.keep(at, hash, value);
      if (this.hashes[place] === hash && this.values[place] === value) return this.values[place]!;
    }
  }

  /**
   * The one kept copy of the string `bytes[start, end)` holds in UTF-8. A string kept already is
   * found from the bytes without decoding them: an opening meets most values many times over
   * (four out of five at 10k files), and decoding each copy only to find it here was most of
   * the work.
   */
  internBytes(bytes: Buffer, start: number, end: number): string {
    const hash = fnv1aBytes(bytes, start, end);
    const mask = this.slots.length - 1;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const place = this.slots[at]!;
      if (place === EMPTY) return this.keep(at, hash, bytes.toString('utf8', start, end));
      if (this.hashes[place] === hash && holdsBytes(this.values[place]!, bytes, start, end))
        return this.values[place]!;
    }
  }

  private keep(slot: number, hash: number, value: string): string {
    const place = this.values.length;
    this.values.push(value);
    if (place === this.hashes.length) {
      const hashes = new Int32Array(place * 2);
      hashes.set(this.hashes);
      this.hashes = hashes;
    }
    this.hashes[place] = hash;
    this.slots[slot] = place;
    // at most half full, so that probes stay short
    if (this.values.length * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    return value;
  }

  private rehash(capacity: number): void {
    const slots = new Int32Array(capacity).fill(EMPTY);
    const mask = capacity - 1;
    for (let place = 0; place < this.values.length; place++) {
      let at = this.hashes[place]! & mask;
      while (slots[at] !== EMPTY) at = (at + 1) & mask;
      slots[at] = place;
    }
    this.slots = slots;
  }
}

const EMPTY = -1;
const BEYOND_ASCII = /\P{ASCII}/u;

/**
 * The hash of a value's UTF-8 bytes (FNV-1a over every byte: chunk ids and paths of a tree
 * repeated under other names differ only in their middles, and a hash of their ends alone put
 * them in one long run of the table, an opening at 100k files spending seconds probing it). An
 * ASCII string's characters are its bytes, so it is hashed as it is.
 */
function hashOfString(value: string): number {
  return BEYOND_ASCII.test(value) ? fnv1aBytes(Buffer.from(value, 'utf8')) : fnv1a(value);
}

/** Whether `value` is the string `bytes[start, end)` holds in UTF-8. */
function holdsBytes(value: string, bytes: Buffer, start: number, end: number): boolean {
  if (value.length === end - start) {
    let at = 0;
    for (; at < value.length; at++) {
      const code = value.charCodeAt(at);
      if (code >= 0x80 || bytes[start + at]! >= 0x80) break;
      if (code !== bytes[start + at]) return false;
    }
    if (at === value.length) return true;
  }
  // a character beyond ASCII, or lengths that only such characters can make differ: decoded
  return bytes.toString('utf8', start, end) === value;
}

/** A UTF-8 column's values (null where the row has none), interned when `strings` is given. */
export function stringColumn(
  batch: RecordBatch,
  name: string,
  strings?: Strings,
): (string | null)[] {
  // sized once: growing by push cost as much as decoding the values
  const out = new Array<string | null>(batch.numRows);
  let at = 0;
  for (const data of column(batch, name)) {
    const text = strings ? internedReader(data, strings) : utf8Reader(data);
    for (let row = 0; row < data.length; row++) out[at++] = text(row);
  }
  return out;
}

/**
 * The one empty list every row without values shares: most definitions raise, mutate and extend
 * nothing, and 200k facts × four fresh empty arrays held about 30 MB.
 */
export const NO_VALUES: readonly never[] = Object.freeze([]);

/** A list-of-UTF-8 column's values (the shared empty list where the row has none). */
export function stringListColumn(
  batch: RecordBatch,
  name: string,
  strings?: Strings,
): (readonly string[])[] {
  const out: (readonly string[])[] = [];
  for (const data of column(batch, name)) {
    const child = data.children[0] as Data | undefined;
    const text = !child ? () => null : strings ? internedReader(child, strings) : utf8Reader(child);
    for (let row = 0; row < data.length; row++) {
      const list: string[] = [];
      if (isValid(data, row)) {
        const end = Number(data.valueOffsets[row + 1]);
        for (let at = Number(data.valueOffsets[row]); at < end; at++) {
          const value = text(at);
          if (value !== null) list.push(value);
        }
      }
      out.push(list.length ? list : NO_VALUES);
    }
  }
  return out;
}

/** A 32-bit integer column's values (null where the row has none). */
export function intColumn(batch: RecordBatch, name: string): (number | null)[] {
  const out: (number | null)[] = [];
  for (const data of column(batch, name)) {
    const values = data.values as Int32Array;
    for (let row = 0; row < data.length; row++) out.push(isValid(data, row) ? values[row]! : null);
  }
  return out;
}

/** A boolean column's values (null where the row has none). */
export function boolColumn(batch: RecordBatch, name: string): (boolean | null)[] {
  const vector = batch.getChild(name);
  if (!vector) throw new Error(`the table has no ${name} column`);
  const out: (boolean | null)[] = [];
  for (let row = 0; row < vector.length; row++) out.push(vector.get(row) as boolean | null);
  return out;
}

function column(batch: RecordBatch, name: string): readonly Data[] {
  const vector = batch.getChild(name);
  if (!vector) throw new Error(`the table has no ${name} column`);
  return vector.data as Data[];
}

function isValid(data: Data, row: number): boolean {
  return data.nullCount === 0 || data.getValid(row);
}

/** Reads row `row` of a UTF-8 (or large UTF-8) column's data. */
function utf8Reader(data: Data): (row: number) => string | null {
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  const bytes = bytesOf(data);
  return (row) =>
    isValid(data, row)
      ? bytes.toString('utf8', Number(offsets[row]), Number(offsets[row + 1]))
      : null;
}

/**
 * Reads row `row` of a UTF-8 column's data interned in `strings`. A row whose bytes are those of
 * the row read before it is given that row's string without being decoded or looked up: tables
 * are written file by file, so a path, a language, a kind or a parent repeats row after row, and
 * decoding each copy only to find it in the table was most of an opening's string work.
 */
function internedReader(data: Data, strings: Strings): (row: number) => string | null {
  const offsets = data.valueOffsets as Int32Array | BigInt64Array;
  const bytes = bytesOf(data);
  let lastStart = 0;
  let lastEnd = 0;
  let last: string | null = null;
  return (row) => {
    if (!isValid(data, row)) return null;
    const start = Number(offsets[row]);
    const end = Number(offsets[row + 1]);
    if (last !== null && sameBytes(bytes, lastStart, lastEnd, start, end)) return last;
    last = strings.internBytes(bytes, start, end);
    lastStart = start;
    lastEnd = end;
    return last;
  };
}

/**
 * Whether `bytes[aStart, aEnd)` and `bytes[bStart, bEnd)` hold the same bytes. A loop, not
 * `Buffer.compare`: the values are short, and the native call cost more than it saved (a 200k-row
 * column of repeated paths read in 33 ms with it, 29 ms with the loop).
 */
function sameBytes(bytes: Buffer, aStart: number, aEnd: number, bStart: number, bEnd: number) {
  if (aEnd - aStart !== bEnd - bStart) return false;
  for (let i = 0; i < aEnd - aStart; i++) if (bytes[aStart + i] !== bytes[bStart + i]) return false;
  return true;
}

function bytesOf(data: Data): Buffer {
  const values = data.values as Uint8Array;
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength);
}
