import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { fail, ok, type Result } from '../util/result';
import { spareSlots } from '../util/spare';

/**
 * Chunk texts on disk, read by offset. A search reads a few dozen texts per question; from a file
 * kept open each costs microseconds, where a read from the chunks table costs milliseconds.
 *
 * Layout: a header (magic, format version), then one record per chunk written: the byte lengths
 * of its id and its text, a CRC-32 of both, the id and the text (UTF-8). Records are only ever
 * appended. A chunk written again with another text gets a new record and its old one becomes
 * garbage, which a rewrite into the next generation's file drops; one written again with the same
 * text keeps its record. The manifest commits how many bytes count: a reader reads no further, and
 * a writer first cuts off what an unfinished write appended. Which records are live is decided by
 * the catalog: for each chunk it holds, the last record of its id.
 */
const MAGIC = 0x58544f43; // 'COTX'
const FORMAT_VERSION = 1;
const FILE_HEADER_BYTES = 8;
/** What the name of a texts file's counts file adds to the texts file's (see countsFileOf). */
export const COUNTS_SUFFIX = '.counts';
const RECORD_HEADER_BYTES = 12;
/** Opening reads the committed part in blocks of this size. */
const SCAN_BLOCK_BYTES = 8 * 1024 * 1024;
/** Garbage is rewritten away once it outgrows this share of the live records … */
const GARBAGE_SHARE = 0.5;
/** … and this many bytes, so a small index keeps appending. */
const MIN_GARBAGE_BYTES = 64 * 1024;
/**
 * Characters of decoded texts kept: a question reads its hits' files and classes again for their
 * surroundings, and the next question often the same files.
 */
const CACHED_CHARS = 4 * 1024 * 1024;

/** What a chunk contributes to the file: its id and the text the search reads. */
export interface StoredText {
  readonly id: string;
  readonly text: string;
}

/** The file beside a texts file where a reader of its records keeps their token counts. */
export function countsFileOf(texts: TextsFile): string | null {
  return texts.path === null ? null : `${texts.path}${COUNTS_SUFFIX}`;
}

/** Live records in file order (see `TextsFile.recordsFrom`). */
export interface LiveRecords {
  readonly offsets: Float64Array;
  readonly lengths: Uint32Array;
  readonly checks: Uint32Array;
}

/** The chunks whose texts are live: how many, and the index's own copy of each id. */
export interface LiveChunkIds {
  readonly size: number;
  idOf(id: string): string | undefined;
}

export class TextsFile {
  /** Each live chunk's slot in `offsets` / `lengths`. */
  private readonly slots = new Map<string, number>();
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  /** Each slot's record checksum: what tells a record apart from another written at its offset. */
  private checks = new Uint32Array(1024);
  private slotCount = 0;
  private liveBytes = 0;
  /** Reused for every read: a question reads dozens of texts. */
  private buffer = Buffer.allocUnsafe(64 * 1024);
  /**
   * Decoded texts by the offset of their record, least recently read first. A record never
   * changes once written and offsets only grow while this file is read, so an offset names one
   * text until the file is rewritten (which clears this).
   */
  private readonly decoded = new Map<number, string>();
  private decodedChars = 0;
  /** How many times the records were moved into a new file (see `layout`). */
  private rewrites = 0;

  private constructor(
    private file: string | null,
    private fd: number | null,
    /** Bytes written so far: the committed ones and, in a writer, those of the write under way. */
    private end: number,
    private readonly writable: boolean,
  ) {}

  /** Whether this file was opened to be written (a reader's cannot be, even once it holds the lock). */
  get forWriting(): boolean {
    return this.writable;
  }

  /** Texts of a store with nothing to read (a reader before any commit): never written. */
  static empty(): TextsFile {
    return new TextsFile(null, null, 0, false);
  }

  /** A writer's new file at `file`, created by the first write (whatever is there is replaced). */
  static create(file: string): TextsFile {
    return new TextsFile(file, null, 0, true);
  }

  /**
   * The committed texts in `file`: the first `committedBytes`, every record whole and matching its
   * checksum, one live record for each chunk of `catalog` (whose id strings the index shares).
   * Anything else is a damaged file, thrown as an error naming what is wrong.
   */
  static load(
    file: string,
    committedBytes: number,
    catalog: LiveChunkIds,
    writable: boolean,
  ): TextsFile {
    if (committedBytes === 0) {
      if (catalog.size) throw new Error(`the texts file holds none of ${catalog.size} chunks`);
      return writable ? TextsFile.create(file) : TextsFile.empty();
    }
    const fd = openSync(file, writable ? 'r+' : 'r');
    try {
      const texts = new TextsFile(file, fd, committedBytes, writable);
      texts.scan(catalog);
      return texts;
    } catch (cause) {
      closeSync(fd);
      throw cause;
    }
  }

  /** How many chunks have a text. */
  get size(): number {
    return this.slots.size;
  }

  /** The bytes a commit vouches for: everything written so far. */
  get bytes(): number {
    return this.end;
  }

  /**
   * Which layout the record offsets belong to: it changes when a rewrite moves the records, so an
   * offset read before names another record after. Within one layout, an offset names one text.
   */
  get layout(): number {
    return this.rewrites;
  }

  /** The file read now (a rewrite moves to another); null when nothing was ever written. */
  get path(): string | null {
    return this.file;
  }

  /** The offset of chunk `id`'s live record, undefined when it has none. */
  recordOf(id: string): number | undefined {
    const slot = this.slots.get(id);
    return slot === undefined ? undefined : this.offsets[slot];
  }

  /**
   * The live records from `offset` on, in file order: their offsets, byte lengths and checksums
   * (a record written at an offset an unfinished write had used has another checksum).
   */
  recordsFrom(offset: number): LiveRecords {
    // one pass over the live slots, no copy of them: after a save only its few records are new
    const slots: number[] = [];
    for (const slot of this.slots.values()) if (this.offsets[slot]! >= offset) slots.push(slot);
    slots.sort((a, b) => this.offsets[a]! - this.offsets[b]!);
    return {
      offsets: Float64Array.from(slots, (slot) => this.offsets[slot]!),
      lengths: Uint32Array.from(slots, (slot) => this.lengths[slot]!),
      checks: Uint32Array.from(slots, (slot) => this.checks[slot]!),
    };
  }

  /**
   * The text of the record at `offset` (`length` bytes, from `recordsFrom`), read without keeping
   * it among the decoded texts: a pass over every record would push out those questions read.
   */
  readRecord(offset: number, length: number): Result<string> {
    if (this.fd === null)
      return fail('cancelled', 'The index was closed while its texts were read.');
    // the buffer `read` reuses: a buffer per record left the process's memory larger after a pass
    if (this.buffer.length < length) this.buffer = Buffer.allocUnsafe(roundUp(length));
    const read = readSync(this.fd, this.buffer, 0, length, offset);
    const record = read === length ? parseRecord(this.buffer, 0, length) : null;
    if (!record || record.end !== length)
      return fail('index_corrupt', `The stored text at byte ${offset} is damaged.`);
    return ok(this.buffer.toString('utf8', record.textStart, record.end));
  }

  /** The text of chunk `id`, undefined when it has none; an error when its record is damaged. */
  read(id: string): Result<string | undefined> {
    const slot = this.slots.get(id);
    if (slot === undefined) return ok(undefined);
    // a search that outlived its engine
    if (this.fd === null) return fail('cancelled', 'The index was closed while a search read it.');
    const length = this.lengths[slot]!;
    const offset = this.offsets[slot]!;
    const cached = this.decoded.get(offset);
    if (cached !== undefined) {
      this.decoded.delete(offset);
      this.decoded.set(offset, cached);
      return ok(cached);
    }
    if (this.buffer.length < length) this.buffer = Buffer.allocUnsafe(roundUp(length));
    const read = readSync(this.fd, this.buffer, 0, length, offset);
    const record = read === length ? parseRecord(this.buffer, 0, length) : null;
    if (!record || record.end !== length)
      return fail('index_corrupt', `The stored text of ${id} at byte ${offset} is damaged.`);
    const text = this.buffer.toString('utf8', record.textStart, record.end);
    this.remember(offset, text);
    return ok(text);
  }

  private remember(offset: number, text: string): void {
    if (text.length > CACHED_CHARS / 4) return;
    this.decoded.set(offset, text);
    this.decodedChars += text.length;
    for (const [oldest, old] of this.decoded) {
      if (this.decodedChars <= CACHED_CHARS) break;
      this.decoded.delete(oldest);
      this.decodedChars -= old.length;
    }
  }

  /**
   * Drops the texts of `removed`, then appends those of `added` (a chunk written again replaces
   * its text; of a chunk given twice, the last text counts). A chunk whose text is byte for byte
   * its live record's keeps that record: a save rewrites every chunk of its file, most of them
   * unchanged, and a kept record keeps its offset, so what is known by it (its decoded text, its
   * token counts) stays valid and the file grows by the changed texts only. Nothing counts until
   * a commit records the new `bytes`.
   */
  write(removed: Iterable<string>, added: readonly StoredText[]): void {
    if (!this.writable) throw new Error('the texts file was opened for reading');
    const last = new Map(added.map((chunk) => [chunk.id, chunk]));
    const fresh: { id: string; record: Buffer }[] = [];
    const kept = new Set<string>();
    for (const chunk of last.values()) {
      const record = encodeRecord(chunk);
      if (this.holdsRecord(chunk.id, record)) kept.add(chunk.id);
      else fresh.push({ id: chunk.id, record });
    }
    for (const id of removed) if (!kept.has(id)) this.drop(id);
    if (!fresh.length) return;
    const fd = this.openForWriting();
    writeFully(fd, Buffer.concat(fresh.map(({ record }) => record)), this.end);
    let offset = this.end;
    for (const { id, record } of fresh) {
      this.drop(id);
      this.place(id, offset, record.length, record.readUInt32LE(8));
      offset += record.length;
    }
    this.end = offset;
  }

  /** Whether chunk `id`'s live record is `record`, byte for byte (its checksum is compared first). */
  private holdsRecord(id: string, record: Buffer): boolean {
    const slot = this.slots.get(id);
    if (slot === undefined || this.fd === null) return false;
    const length = this.lengths[slot]!;
    if (length !== record.length || this.checks[slot] !== record.readUInt32LE(8)) return false;
    if (this.buffer.length < length) this.buffer = Buffer.allocUnsafe(roundUp(length));
    const read = readSync(this.fd, this.buffer, 0, length, this.offsets[slot]!);
    return read === length && this.buffer.subarray(0, length).equals(record);
  }

  /** Makes what was written durable: called before a commit names it. */
  sync(): void {
    if (this.fd !== null && this.writable) fsyncSync(this.fd);
  }

  /** Whether superseded records have piled up enough to be rewritten away. */
  wasteful(): boolean {
    const garbage = this.end - FILE_HEADER_BYTES - this.liveBytes;
    return garbage > Math.max(MIN_GARBAGE_BYTES, this.liveBytes * GARBAGE_SHARE);
  }

  /**
   * Copies the live records, in file order, into a new file at `file` (flushed to disk) and reads
   * from it from now on. The old file is left as it is: it stays the committed one until a commit
   * names the new.
   */
  rewriteTo(file: string): void {
    if (!this.writable || this.fd === null)
      throw new Error('the texts file has nothing to rewrite');
    const live = [...this.slots.values()].sort((a, b) => this.offsets[a]! - this.offsets[b]!);
    const fd = openSync(file, 'w+');
    try {
      writeFully(fd, fileHeader(), 0);
      let end = FILE_HEADER_BYTES;
      let pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = () => {
        writeFully(fd, Buffer.concat(pending), end - pendingBytes);
        pending = [];
        pendingBytes = 0;
      };
      for (const slot of live) {
        const length = this.lengths[slot]!;
        const record = Buffer.allocUnsafe(length);
        if (readSync(this.fd, record, 0, length, this.offsets[slot]!) !== length)
          throw new Error(`the texts file ended inside a record at byte ${this.offsets[slot]}`);
        pending.push(record);
        pendingBytes += length;
        this.offsets[slot] = end;
        end += length;
        if (pendingBytes >= SCAN_BLOCK_BYTES) flush();
      }
      flush();
      fsyncSync(fd);
      closeSync(this.fd);
      this.fd = fd;
      this.file = file;
      this.end = end;
      this.decoded.clear();
      this.decodedChars = 0;
      this.rewrites++;
    } catch (cause) {
      closeSync(fd);
      throw cause;
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** Reads the committed records, keeping the last of each chunk the catalog holds. */
  private scan(catalog: LiveChunkIds): void {
    const size = fstatSync(this.fd!).size;
    if (size < this.end)
      throw new Error(`the texts file holds ${size} bytes, ${this.end} were committed`);
    const header = Buffer.allocUnsafe(FILE_HEADER_BYTES);
    readSync(this.fd!, header, 0, FILE_HEADER_BYTES, 0);
    if (header.readUInt32LE(0) !== MAGIC || header.readUInt32LE(4) !== FORMAT_VERSION)
      throw new Error('the texts file has an unknown header');
    // one live record per chunk of the catalog, and room for the saves to come
    this.offsets = new Float64Array(Math.max(1024, catalog.size + spareSlots(catalog.size)));
    this.lengths = new Uint32Array(this.offsets.length);
    this.checks = new Uint32Array(this.offsets.length);
    let block = Buffer.allocUnsafe(SCAN_BLOCK_BYTES);
    let position = FILE_HEADER_BYTES;
    while (position < this.end) {
      const want = Math.min(block.length, this.end - position);
      const got = readSync(this.fd!, block, 0, want, position);
      let at = 0;
      for (;;) {
        const record = parseRecord(block, at, got);
        if (!record) break;
        const id = catalog.idOf(block.toString('utf8', at + RECORD_HEADER_BYTES, record.textStart));
        if (id !== undefined) this.supersede(id, position + at, record.end - at, record.check);
        at = record.end;
      }
      if (at === 0) {
        // no whole record at the block's start: a damaged one, or one longer than the block
        const length = recordLength(block, got);
        if (length === null || position + length > this.end || length <= got)
          throw new Error(`the texts file is damaged at byte ${position}`);
        if (length <= block.length)
          throw new Error(`the texts file ended early at byte ${position}`);
        block = Buffer.allocUnsafe(roundUp(length));
        continue;
      }
      position += at;
    }
    if (this.slots.size !== catalog.size)
      throw new Error(`the texts file holds ${this.slots.size} of ${catalog.size} chunks`);
  }

  private openForWriting(): number {
    if (this.fd !== null) return this.fd;
    this.fd = openSync(this.file!, 'w+');
    writeFully(this.fd, fileHeader(), 0);
    this.end = FILE_HEADER_BYTES;
    return this.fd;
  }

  /** Points `id` at a later record: its slot is reused, as an earlier record is never read. */
  private supersede(id: string, offset: number, length: number, check: number): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return this.place(id, offset, length, check);
    this.liveBytes += length - this.lengths[slot]!;
    this.offsets[slot] = offset;
    this.lengths[slot] = length;
    this.checks[slot] = check;
  }

  private drop(id: string): void {
    const slot = this.slots.get(id);
    if (slot === undefined) return;
    this.liveBytes -= this.lengths[slot]!;
    this.slots.delete(id);
  }

  private place(id: string, offset: number, length: number, check: number): void {
    if (this.slotCount === this.offsets.length) this.grow();
    const slot = this.slotCount++;
    this.offsets[slot] = offset;
    this.lengths[slot] = length;
    this.checks[slot] = check;
    this.slots.set(id, slot);
    this.liveBytes += length;
  }

  /**
   * Slots are never reused. When they run out, the arrays grow by a quarter with every slot kept
   * where it is; the live ones are packed (every chunk's slot renumbered) only once most slots are
   * dead (renumbering a million chunks took a first save ~0.3-0.8 s at 100k files). A store is
   * loaded with spare slots, so the first saves after opening neither grow nor pack.
   */
  private grow(): void {
    if (this.slots.size * 2 < this.slotCount) return this.pack();
    const capacity = Math.max(1024, this.offsets.length + (this.offsets.length >> 2));
    const offsets = new Float64Array(capacity);
    offsets.set(this.offsets);
    const lengths = new Uint32Array(capacity);
    lengths.set(this.lengths);
    const checks = new Uint32Array(capacity);
    checks.set(this.checks);
    this.offsets = offsets;
    this.lengths = lengths;
    this.checks = checks;
  }

  /** The live slots, renumbered end to end into arrays with as many spare. */
  private pack(): void {
    const capacity = Math.max(1024, this.slots.size * 2);
    const offsets = new Float64Array(capacity);
    const lengths = new Uint32Array(capacity);
    const checks = new Uint32Array(capacity);
    let next = 0;
    for (const [id, slot] of this.slots) {
      offsets[next] = this.offsets[slot]!;
      lengths[next] = this.lengths[slot]!;
      checks[next] = this.checks[slot]!;
      this.slots.set(id, next++);
    }
    this.offsets = offsets;
    this.lengths = lengths;
    this.checks = checks;
    this.slotCount = next;
  }
}

function fileHeader(): Buffer {
  const header = Buffer.allocUnsafe(FILE_HEADER_BYTES);
  header.writeUInt32LE(MAGIC, 0);
  header.writeUInt32LE(FORMAT_VERSION, 4);
  return header;
}

function encodeRecord(chunk: StoredText): Buffer {
  const idBytes = Buffer.byteLength(chunk.id, 'utf8');
  const textBytes = Buffer.byteLength(chunk.text, 'utf8');
  const record = Buffer.allocUnsafe(RECORD_HEADER_BYTES + idBytes + textBytes);
  record.writeUInt32LE(idBytes, 0);
  record.writeUInt32LE(textBytes, 4);
  record.write(chunk.id, RECORD_HEADER_BYTES, 'utf8');
  record.write(chunk.text, RECORD_HEADER_BYTES + idBytes, 'utf8');
  record.writeUInt32LE(crc32(record.subarray(RECORD_HEADER_BYTES)), 8);
  return record;
}

/** The whole record at `at` if it lies within `limit` and matches its checksum, else null. */
function parseRecord(
  bytes: Buffer,
  at: number,
  limit: number,
): { textStart: number; end: number; check: number } | null {
  const length = recordLength(bytes.subarray(at), limit - at);
  if (length === null || at + length > limit) return null;
  const body = bytes.subarray(at + RECORD_HEADER_BYTES, at + length);
  const check = bytes.readUInt32LE(at + 8);
  if (crc32(body) !== check) return null;
  return { textStart: at + RECORD_HEADER_BYTES + bytes.readUInt32LE(at), end: at + length, check };
}

/** The length of the record starting `bytes`, from its header; null when the header is cut off. */
function recordLength(bytes: Buffer, available: number): number | null {
  if (available < RECORD_HEADER_BYTES) return null;
  return RECORD_HEADER_BYTES + bytes.readUInt32LE(0) + bytes.readUInt32LE(4);
}

function writeFully(fd: number, bytes: Buffer, position: number): void {
  let written = 0;
  while (written < bytes.length)
    written += writeSync(fd, bytes, written, bytes.length - written, position + written);
}

function roundUp(length: number): number {
  return 2 ** Math.ceil(Math.log2(Math.max(length, 64 * 1024)));
}
