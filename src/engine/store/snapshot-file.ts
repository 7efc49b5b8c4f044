import {
  closeSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readSync,
  rmSync,
  unlinkSync,
  writeSync,
} from 'node:fs';

/**
 * A file of 32-bit words read by offset through the descriptor opened with it, immutable once
 * opened (but for a `ScratchFile`, which its owner appends to). A newer generation of a snapshot
 * is written beside it and renamed over its name: this descriptor keeps reading the
 * generation it opened (Node opens files sharing deletion on every platform), never a
 * half-written one. What the reads bring in stays in the operating system's page cache, which is
 * not the worker's memory.
 */
export class WordFile {
  protected constructor(
    protected fd: number | null,
    /** The file's length in bytes. */
    protected length: number,
  ) {}

  /** The file's length in bytes: fixed for a snapshot, growing as a scratch file is appended to. */
  get bytes(): number {
    return this.length;
  }

  static open(file: string): WordFile {
    const fd = openSync(file, 'r');
    try {
      return new WordFile(fd, fstatSync(fd).size);
    } catch (cause) {
      closeSync(fd);
      throw cause;
    }
  }

  /** Reads `count` bytes at byte `position` into `target` from byte `at`. */
  readBytes(target: Uint8Array, at: number, count: number, position: number): void {
    // a search that outlived the index it read
    if (this.fd === null) throw new Error('The index was closed while a search read it.');
    if (position + count > this.bytes) throw new Error('the lexical snapshot is truncated');
    let done = 0;
    while (done < count) {
      const read = readSync(this.fd, target, at + done, count - done, position + done);
      if (read === 0) throw new Error('the lexical snapshot ended early');
      done += read;
    }
  }

  /** Reads `words` 32-bit words at byte `position` into `target` from word `at`. */
  read(target: Uint32Array | Int32Array, at: number, words: number, position: number): void {
    const bytes = new Uint8Array(target.buffer, target.byteOffset, target.byteLength);
    this.readBytes(bytes, at * 4, words * 4, position);
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}

/**
 * A file of 32-bit words that one process writes at its end and reads back, for as long as it
 * holds it: what an index keeps out of memory while it grows. It is unlinked as soon as it is
 * open, so nothing is left behind however the process ends; where an open file cannot be
 * unlinked (Windows) it is removed when closed, and a crash there leaves it to the store's
 * cleanup of temporary files (its name holds `.tmp-`).
 */
export class ScratchFile extends WordFile {
  private constructor(
    fd: number,
    private readonly name: string | null,
  ) {
    super(fd, 0);
  }

  static create(file: string): ScratchFile {
    const fd = openSync(file, 'w+');
    // Windows cannot remove the name of an open file: there it goes when the file is closed
    const keepsName = process.platform === 'win32';
    try {
      if (!keepsName) unlinkSync(file);
    } catch (cause) {
      closeSync(fd);
      throw cause;
    }
    return new ScratchFile(fd, keepsName ? file : null);
  }

  /** Writes `words` (whole 32-bit words) at the end; returns the byte position they start at. */
  append(words: ArrayBufferView): number {
    if (this.fd === null) throw new Error('The scratch file was closed.');
    const at = this.length;
    const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
    let done = 0;
    while (done < bytes.length)
      done += writeSync(this.fd, bytes, done, bytes.length - done, at + done);
    this.length += bytes.length;
    return at;
  }

  /** Empties the file: what it held is no longer read. */
  clear(): void {
    if (this.fd === null) return;
    ftruncateSync(this.fd, 0);
    this.length = 0;
  }

  override close(): void {
    super.close();
    if (this.name) rmSync(this.name, { force: true });
  }
}

/** Words read per block when a file region is read from start to end. */
const SEQUENTIAL_BLOCK_WORDS = 256 * 1024;

/** Reads a region of a `WordFile` front to back in large blocks, handing out views. */
export class WordReader {
  private block = new Int32Array(SEQUENTIAL_BLOCK_WORDS);
  private blockWords = 0;
  /** Words handed out of the block so far. */
  private taken = 0;

  constructor(
    private readonly file: WordFile,
    /** The byte position of the block's first word. */
    private position: number,
  ) {}

  /** The next `words` words: a view valid until the next call. */
  take(words: number): Int32Array {
    if (this.taken + words > this.blockWords) this.refill(words);
    const from = this.taken;
    this.taken += words;
    return this.block.subarray(from, from + words);
  }

  private refill(words: number): void {
    this.position += this.taken * 4;
    this.taken = 0;
    const available = Math.floor((this.file.bytes - this.position) / 4);
    const wanted = Math.min(Math.max(words, SEQUENTIAL_BLOCK_WORDS), available);
    if (wanted < words) throw new Error('the lexical snapshot is truncated');
    if (this.block.length < wanted) this.block = new Int32Array(wanted);
    this.file.read(this.block, 0, wanted, this.position);
    this.blockWords = wanted;
  }
}

/** Words up to this many are put one by one, more through a view. */
const SHORT_PUT = 16;

/**
 * Collects 32-bit words into blocks for a file written as a sequence of them: a writer puts
 * words and hands the full blocks (`drain`) to the file, so no more than a block is held.
 */
export class BlockWriter {
  private block = new Uint32Array(SEQUENTIAL_BLOCK_WORDS);
  private used = 0;
  private readonly full: Uint8Array[] = [];
  /** Words put so far. */
  written = 0;

  /** Puts `words[start, end)`. */
  put(words: Uint32Array | Int32Array, start = 0, end = words.length): void {
    let from = start;
    while (from < end) {
      const count = Math.min(end - from, this.block.length - this.used);
      // a snapshot puts a few words per term and per chunk, hundreds of thousands of times: a
      // view to copy each through was most of the garbage writing one made
      if (count > SHORT_PUT) this.block.set(words.subarray(from, from + count), this.used);
      else for (let i = 0; i < count; i++) this.block[this.used + i] = words[from + i]!;
      this.used += count;
      from += count;
      if (this.used === this.block.length) this.seal();
    }
    this.written += end - start;
  }

  /** Whether blocks were filled since the last `drain` (a writer drains only then, without a generator). */
  get filled(): boolean {
    return this.full.length > 0;
  }

  /** The blocks filled since the last call. */
  *drain(): Generator<Uint8Array> {
    while (this.full.length) yield this.full.shift()!;
  }

  /** The last, partly filled block too. */
  *finish(): Generator<Uint8Array> {
    if (this.used) this.seal();
    yield* this.drain();
  }

  private seal(): void {
    this.full.push(new Uint8Array(this.block.buffer, 0, this.used * 4));
    this.block = new Uint32Array(SEQUENTIAL_BLOCK_WORDS);
    this.used = 0;
  }
}

/** Uses of every arena so far (see ReadArena.use). */
let arenaUses = 0;

/** Words of the blocks a `ReadArena` hands out room from, at least. */
const ARENA_BLOCK_WORDS = 256 * 1024;
/** Words an arena keeps for reuse (8 MB); what a search asks for beyond them is allocated apart. */
const ARENA_MAX_WORDS = 2 * 1024 * 1024;

/**
 * Room for what one search reads from disk, handed out from blocks kept from one search to the
 * next: a question reads about 3 MB of posting lists at 10k files, which allocated afresh is
 * that much zeroed memory per question for the collector and the allocator. Room handed out is
 * valid until `reset`, which the next search calls.
 */
export class ReadArena {
  private currentUse = ++arenaUses;
  private readonly blocks: Int32Array[] = [];
  private kept = 0;
  private block = 0;
  private used = 0;

  /** Which use of an arena this is: changes at every `reset`, and differs between arenas. */
  get use(): number {
    return this.currentUse;
  }

  take(words: number): Int32Array {
    for (; this.block < this.blocks.length; this.block++, this.used = 0) {
      const current = this.blocks[this.block]!;
      if (this.used + words <= current.length) {
        const room = current.subarray(this.used, this.used + words);
        this.used += words;
        return room;
      }
    }
    const size = Math.max(words, ARENA_BLOCK_WORDS);
    if (this.kept + size > ARENA_MAX_WORDS) return new Int32Array(words);
    this.blocks.push(new Int32Array(size));
    this.kept += size;
    this.used = words;
    return this.blocks[this.block]!.subarray(0, words);
  }

  /** Hands out the same room again: everything taken before is overwritten from now on. */
  reset(): void {
    this.block = 0;
    this.used = 0;
    this.currentUse = ++arenaUses;
  }
}
