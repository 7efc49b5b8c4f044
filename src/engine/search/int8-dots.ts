import { getLogger } from '../log/logger';
import { describeError } from '../util/result';

/**
 * Dot products of one int8 query with every row of an int8 matrix, in WebAssembly SIMD: sixteen
 * bytes at a time, widened to 16 bits and multiplied pairwise into 32-bit sums (`i32x4.dot`).
 * The sums are exact integers, the same a plain loop gives, so rankings do not change; a pass
 * over 182k rows of 64 dimensions takes about 0.5 ms per query instead of a JavaScript loop's
 * 10–20 (1.2 ms when the module took one row at a time).
 *
 * Several queries are taken in one pass: each row is read from memory once and multiplied with
 * every query while it sits in the cache. The sums dominate a pass, so this saves only the
 * repeated reads.
 *
 * Each query's products come with their maxima over blocks of BLOCK_ROWS rows (taken in SIMD
 * too), so that a caller looking for the few highest products passes most rows a block at a time.
 *
 * The module is a few dozen instructions, written here as bytes (no WebAssembly toolchain is
 * needed to build the extension). The matrix lives in the module's memory, rows padded to a
 * multiple of sixteen bytes with zeros (which add nothing to a dot product). Where WebAssembly
 * SIMD is not available, the same sums are computed in JavaScript.
 */
export interface Int8Matrix {
  readonly rows: number;
  readonly dimensions: number;
  /** Row `row` as a view on the matrix's bytes (its first `dimensions` bytes). */
  row(row: number): Int8Array;
  /** Writes row `row` (`dimensions` signed bytes). */
  setRow(row: number, values: Int8Array): void;
  /**
   * Writes rows `first`, `first + 1` … from `values`, whole rows of `dimensions` signed bytes one
   * after another: a batch of saved rows in one copy, where a view and a copy per row left the
   * collector hundreds of thousands of views.
   */
  setRows(first: number, values: Int8Array): void;
  /**
   * The dot product of `query` (`dimensions` bytes) with every row, in row order: a view the next
   * call overwrites (a copy per call was megabytes per question for the collector).
   */
  dots(query: Int8Array): Int32Array;
  /**
   * The dot products of each of `queries` with every row, as `dots` gives them, handed to `visit`
   * one query at a time (in order) with their block maxima (see blockMaxima), both views valid
   * only during that call.
   */
  dotsEach(queries: readonly Int8Array[], visit: VisitDots): void;
}

/** How many whole rows `values` holds; throws unless they fit from row `first` of `rows`. */
function checkRows(first: number, values: Int8Array, rows: number, dimensions: number): number {
  const count = values.length / dimensions;
  if (!Number.isInteger(count) || first < 0 || first + count > rows)
    throw new RangeError(`${values.length} values are not whole rows from row ${first} of ${rows}`);
  return count;
}

/** Receives one query's products and their block maxima. */
export type VisitDots = (dots: Int32Array, index: number, maxima: Int32Array) => void;

/** Rows per block of the products' maxima. */
export const BLOCK_ROWS = 16;

/** How many blocks the products of `rows` rows make (the last one may be short). */
export function blockCount(rows: number): number {
  return Math.ceil(rows / BLOCK_ROWS);
}

/**
 * Writes into `into` (at least blockCount(values.length) long) the highest of each BLOCK_ROWS
 * values, from block `firstBlock` on, and returns its first blockCount(values.length) entries.
 */
export function blockMaxima(values: Int32Array, into: Int32Array, firstBlock = 0): Int32Array {
  const blocks = blockCount(values.length);
  for (let block = firstBlock; block < blocks; block++) {
    const end = Math.min(values.length, (block + 1) * BLOCK_ROWS);
    let best = values[block * BLOCK_ROWS]!;
    for (let row = block * BLOCK_ROWS + 1; row < end; row++)
      if (values[row]! > best) best = values[row]!;
    into[block] = best;
  }
  return into.subarray(0, blocks);
}

const log = getLogger('search.vectors');

/** The part of the WebAssembly API used here (the project's type libraries do not declare it). */
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => WasmModule;
  readonly Instance: new (
    module: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ) => { readonly exports: Record<string, unknown> };
  readonly Memory: new (descriptor: { initial: number }) => WasmMemory;
}
interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}
type WasmModule = { readonly kind: 'wasm-module' };

const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
const LANES = 16;
const PAGE = 65536;
/** Queries taken in one pass: their products (4 bytes a row each) are kept in the module's memory. */
const QUERIES_PER_PASS = 4;

/** Which implementation `int8Matrix` gives on this runtime. */
export function int8DotsBackend(): 'simd' | 'javascript' {
  return simdModule() ? 'simd' : 'javascript';
}

/** Creates a matrix of `rows` rows, zeroed. */
export function int8Matrix(rows: number, dimensions: number): Int8Matrix {
  const module = simdModule();
  return module ? new SimdMatrix(module, rows, dimensions) : new PlainMatrix(rows, dimensions);
}

/** The JavaScript form: also the reference the SIMD form is tested against. */
export class PlainMatrix implements Int8Matrix {
  private readonly codes: Int8Array;
  private readonly out: Int32Array;
  private readonly maxima: Int32Array;

  constructor(
    readonly rows: number,
    readonly dimensions: number,
  ) {
    this.codes = new Int8Array(rows * dimensions);
    this.out = new Int32Array(rows);
    this.maxima = new Int32Array(blockCount(rows));
  }

  row(row: number): Int8Array {
    return this.codes.subarray(row * this.dimensions, (row + 1) * this.dimensions);
  }

  setRow(row: number, values: Int8Array): void {
    this.codes.set(values.subarray(0, this.dimensions), row * this.dimensions);
  }

  setRows(first: number, values: Int8Array): void {
    checkRows(first, values, this.rows, this.dimensions);
    this.codes.set(values, first * this.dimensions);
  }

  dots(query: Int8Array): Int32Array {
    const { codes, dimensions, rows, out } = this;
    for (let row = 0, offset = 0; row < rows; row++, offset += dimensions) {
      let dot = 0;
      for (let i = 0; i < dimensions; i++) dot += codes[offset + i]! * query[i]!;
      out[row] = dot;
    }
    return out;
  }

  dotsEach(queries: readonly Int8Array[], visit: VisitDots): void {
    queries.forEach((query, index) => {
      const dots = this.dots(query);
      visit(dots, index, blockMaxima(dots, this.maxima));
    });
  }
}

/**
 * Memory layout: the matrix at 0; after it, the queries of one pass widened to 16 bits (2 × stride
 * bytes each), then their products (4 bytes per row each, one query's after the other), then
 * their block maxima (4 bytes per block each). The room for more than one query is taken when
 * first asked for.
 */
class SimdMatrix implements Int8Matrix {
  private readonly stride: number;
  private readonly memory: WasmMemory;
  private bytes: Int8Array;
  /** Queries the memory holds room for in one pass. */
  private room = 0;
  private readonly queriesAt: number;
  private readonly run: (
    rows: number,
    stride: number,
    matrix: number,
    queries: number,
    out: number,
    count: number,
  ) => void;
  private readonly maxima: (values: number, blocks: number, out: number) => void;
  private readonly blocks: number;

  constructor(
    module: WasmModule,
    readonly rows: number,
    readonly dimensions: number,
  ) {
    this.stride = Math.ceil(Math.max(1, dimensions) / LANES) * LANES;
    this.queriesAt = rows * this.stride;
    this.blocks = blockCount(rows);
    this.memory = new wasm!.Memory({ initial: Math.max(1, Math.ceil(this.sizeFor(1) / PAGE)) });
    const instance = new wasm!.Instance(module, { env: { memory: this.memory } });
    this.run = instance.exports.dots as SimdMatrix['run'];
    this.maxima = instance.exports.maxima as SimdMatrix['maxima'];
    this.bytes = new Int8Array(this.memory.buffer);
    this.room = 1;
    this.touch(this.queriesAt);
  }

  row(row: number): Int8Array {
    const at = row * this.stride;
    return this.bytes.subarray(at, at + this.dimensions);
  }

  setRow(row: number, values: Int8Array): void {
    this.bytes.set(values.subarray(0, this.dimensions), row * this.stride);
  }

  setRows(first: number, values: Int8Array): void {
    const count = checkRows(first, values, this.rows, this.dimensions);
    if (this.stride === this.dimensions) return this.bytes.set(values, first * this.stride);
    for (let i = 0; i < count; i++)
      this.setRow(first + i, values.subarray(i * this.dimensions, (i + 1) * this.dimensions));
  }

  dots(query: Int8Array): Int32Array {
    let out: Int32Array | undefined;
    this.dotsEach([query], (dots) => (out = dots));
    return out!;
  }

  dotsEach(queries: readonly Int8Array[], visit: VisitDots): void {
    const fullBlocks = Math.floor(this.rows / BLOCK_ROWS);
    for (let first = 0; first < queries.length; first += QUERIES_PER_PASS) {
      const pass = queries.slice(first, first + QUERIES_PER_PASS);
      this.makeRoom(pass.length);
      const outAt = this.outAt();
      pass.forEach((query, i) => {
        const widened = new Int16Array(this.memory.buffer, this.queryAt(i), this.stride);
        for (let d = 0; d < this.dimensions; d++) widened[d] = query[d]!;
      });
      this.run(this.rows, this.stride, 0, this.queryAt(0), outAt, pass.length);
      pass.forEach((query, i) => {
        const dotsAt = outAt + i * this.rows * 4;
        const dots = new Int32Array(this.memory.buffer, dotsAt, this.rows);
        this.sumLastRows(query, dots);
        const maximaAt = this.maximaAt(i);
        this.maxima(dotsAt, fullBlocks, maximaAt);
        const maxima = new Int32Array(this.memory.buffer, maximaAt, this.blocks);
        // a last block shorter than BLOCK_ROWS is taken here
        blockMaxima(dots, maxima, fullBlocks);
        visit(dots, first + i, maxima);
      });
    }
  }

  /** The products of the rows after the last multiple of four, which the module leaves. */
  private sumLastRows(query: Int8Array, dots: Int32Array): void {
    for (let row = this.rows & ~3; row < this.rows; row++) {
      const at = row * this.stride;
      let dot = 0;
      for (let d = 0; d < this.dimensions; d++) dot += this.bytes[at + d]! * query[d]!;
      dots[row] = dot;
    }
  }

  private queryAt(index: number): number {
    return this.queriesAt + index * 2 * this.stride;
  }

  private outAt(): number {
    return this.queriesAt + this.room * 2 * this.stride;
  }

  private maximaAt(index: number): number {
    return this.outAt() + this.room * this.rows * 4 + index * this.blocks * 4;
  }

  private sizeFor(queries: number): number {
    return this.queriesAt + queries * (2 * this.stride + this.rows * 4 + this.blocks * 4);
  }

  private makeRoom(queries: number): void {
    if (queries <= this.room) return;
    const pages = Math.ceil(this.sizeFor(queries) / PAGE) - this.memory.buffer.byteLength / PAGE;
    const grownFrom = this.memory.buffer.byteLength;
    if (pages > 0) this.memory.grow(pages);
    this.bytes = new Int8Array(this.memory.buffer);
    this.room = queries;
    this.touch(grownFrom);
  }

  /**
   * Writes the memory from byte `from` on once, so that its pages are mapped before a question
   * needs them. The products of a scan go there, and a scan's first writes to fresh pages cost
   * ~20 ms at 953k rows (4 MB), where a scan otherwise takes 4 ms: the first question after the
   * vectors were read, or after a save packed them, paid for it.
   */
  private touch(from: number): void {
    this.bytes.fill(0, from);
  }
}

let compiled: WasmModule | null | undefined;

/** The compiled module, or null where WebAssembly SIMD is not supported. */
function simdModule(): WasmModule | null {
  if (compiled === undefined) {
    try {
      compiled = wasm ? new wasm.Module(DOTS_WASM) : null;
    } catch (cause) {
      // an engine without SIMD refuses the module; the JavaScript loop gives the same sums
      log.info('int8_simd_unavailable', { error: describeError(cause) });
      compiled = null;
    }
  }
  return compiled;
}

const I32 = 0x7f;
const V128 = 0x7b;
const EMPTY = 0x40;

/** Parameters and locals of `dots`, by index. */
const ROWS = 0;
const STRIDE = 1;
const MATRIX = 2;
const QUERIES = 3;
const OUT = 4;
const COUNT = 5;
const ROW = 6;
const AT = 7;
const COLUMN = 8;
const QUERY = 9;
const QUERY_AT = 10;
const PLACE = 11;
const GROUPS_END = 12;
const TWO_STRIDES = 13;
const THREE_STRIDES = 14;
/** The four rows' sums, lane by lane (v128). */
const SUMS = [15, 16, 17, 18] as const;
const QUERY_LOW = 19;
const QUERY_HIGH = 20;
const BLOCK = 21;
const PAIRS = 22;

const get = (local: number) => [0x20, local];
const set = (local: number) => [0x21, local];
const tee = (local: number) => [0x22, local];
/** A constant below 64 (one byte of signed LEB128). */
const i32 = (value: number) => [0x41, value];
/** The constant -4 (signed LEB128): a mask that rounds down to a multiple of four. */
const minusFour = [0x41, 0x7c];
const add = [0x6a];
const mul = [0x6c];
const and = [0x71];
const shl = [0x74];
const below = [0x49];
const atLeast = [0x4f];
const loop = [0x03, EMPTY];
const block = [0x02, EMPTY];
const end = [0x0b];
const branch = (depth: number) => [0x0c, depth];
const branchIf = (depth: number) => [0x0d, depth];
const greater = [0x4a];
const select = [0x1b];
const store32 = [0x36, 2, 0];
/** SIMD instructions: the 0xfd prefix, the opcode as unsigned LEB128, then any immediates. */
const loadV128 = (offset: number) => [0xfd, 0x00, 0, offset];
const storeV128 = [0xfd, 0x0b, 0, 0];
const zeroV128 = [0xfd, 0x0c, ...new Array<number>(16).fill(0)];
const lane = (index: number) => [0xfd, 0x1b, index];
const widenLow = [0xfd, 0x87, 0x01];
const widenHigh = [0xfd, 0x88, 0x01];
const addV128 = [0xfd, 0xae, 0x01];
const dot16 = [0xfd, 0xba, 0x01];
const maxV128 = [0xfd, 0xb8, 0x01];
/** Picks four 32-bit lanes of two vectors: 0–3 name the first's, 4–7 the second's. */
const shuffle32 = (lanes: readonly number[]) => [
  0xfd,
  0x0d,
  ...lanes.flatMap((lane) => [0, 1, 2, 3].map((byte) => lane * 4 + byte)),
];
/** The current query's 16-bit values for the current column: query + 2 × column. */
const queryBlock = (offset: number) => [
  ...get(QUERY_AT),
  ...get(COLUMN),
  ...i32(1),
  ...shl,
  ...add,
  ...loadV128(offset),
];
/** sum ← sum + the 16-byte block at PLACE + `rowOffset` times the query's values (two dots). */
const accumulate = (sum: number, rowOffset: readonly number[]) => [
  ...get(PLACE),
  ...rowOffset,
  ...loadV128(0),
  ...set(BLOCK),
  ...get(sum),
  ...get(BLOCK),
  ...widenLow,
  ...get(QUERY_LOW),
  ...dot16,
  ...addV128,
  ...get(BLOCK),
  ...widenHigh,
  ...get(QUERY_HIGH),
  ...dot16,
  ...addV128,
  ...set(sum),
];
/** Two vectors' lanes added pairwise across them: [a0+a2, a1+a3, b0+b2, b1+b3]. */
const foldPair = (a: number[], b: number[]) => [
  ...a,
  ...b,
  ...shuffle32([0, 1, 4, 5]),
  ...a,
  ...b,
  ...shuffle32([2, 3, 6, 7]),
  ...addV128,
];

/**
 * `dots(rows, stride, matrix, queries, out, count)`: out[q × rows + row] = Σ matrix[row][i] ×
 * queries[q][i], for each of `count` queries (16-bit, 2 × stride bytes apart), for the rows up to
 * the last multiple of four (the caller sums the others). Four rows are taken at once: each
 * query block is loaded once for the four, and their four sums are folded into one vector and
 * stored together, where a row at a time folded and stored each sum alone (three times slower).
 */
const DOTS_BODY = [
  [2, 9, I32, 8, V128], // locals: row … three strides (i32); sums, query halves, block, pairs (v128)
  get(MATRIX),
  set(AT),
  get(ROWS),
  minusFour,
  and,
  set(GROUPS_END),
  get(STRIDE),
  i32(1),
  shl,
  set(TWO_STRIDES),
  get(TWO_STRIDES),
  get(STRIDE),
  add,
  set(THREE_STRIDES),
  block,
  loop, // over groups of four rows
  get(ROW),
  get(GROUPS_END),
  atLeast,
  branchIf(1),
  i32(0),
  set(QUERY),
  get(QUERIES),
  set(QUERY_AT),
  loop, // over the queries, the rows still in the cache
  SUMS.flatMap((sum) => [...zeroV128, ...set(sum)]),
  i32(0),
  set(COLUMN),
  loop, // over the rows' 16-byte blocks
  queryBlock(0),
  set(QUERY_LOW),
  queryBlock(16),
  set(QUERY_HIGH),
  get(AT),
  get(COLUMN),
  add,
  set(PLACE),
  accumulate(SUMS[0], []),
  accumulate(SUMS[1], [...get(STRIDE), ...add]),
  accumulate(SUMS[2], [...get(TWO_STRIDES), ...add]),
  accumulate(SUMS[3], [...get(THREE_STRIDES), ...add]),
  get(COLUMN),
  i32(16),
  add,
  tee(COLUMN),
  get(STRIDE),
  below,
  branchIf(0),
  end,
  get(OUT), // out + 4 × (query × rows + row) ← the four rows' sums
  get(QUERY),
  get(ROWS),
  mul,
  get(ROW),
  add,
  i32(2),
  shl,
  add,
  foldPair(get(SUMS[0]), get(SUMS[1])),
  set(PAIRS),
  foldPair(get(SUMS[2]), get(SUMS[3])),
  set(BLOCK), // free once the sums are made: it holds the other two rows' pairs
  // [a0+a2, b0+b2, c0+c2, d0+d2] + [a1+a3, b1+b3, c1+c3, d1+d3]: each row's whole sum
  get(PAIRS),
  get(BLOCK),
  shuffle32([0, 2, 4, 6]),
  get(PAIRS),
  get(BLOCK),
  shuffle32([1, 3, 5, 7]),
  addV128,
  storeV128,
  get(QUERY_AT),
  get(STRIDE),
  i32(1),
  shl,
  add,
  set(QUERY_AT),
  get(QUERY),
  i32(1),
  add,
  tee(QUERY),
  get(COUNT),
  below,
  branchIf(0),
  end,
  get(AT),
  get(STRIDE),
  i32(2),
  shl,
  add,
  set(AT),
  get(ROW),
  i32(4),
  add,
  set(ROW),
  branch(0),
  end,
  end,
  end,
].flat();

/** Parameters and locals of `maxima`, by index. */
const VALUES = 0;
const BLOCKS = 1;
const MAXIMA = 2;
const BLOCK_AT = 3;
const VALUE_AT = 4;
const BEST = 5;
const LANE = 6;
const HIGHEST = 7;

/**
 * `maxima(values, blocks, out)`: out[block] = the highest of the sixteen 32-bit values at
 * values + 64 × block, for each of `blocks` blocks: four lanes' maxima, then the highest lane.
 */
const MAXIMA_BODY = [
  [2, 4, I32, 1, V128], // locals: block, at, best, lane (i32); highest (v128)
  block,
  loop, // over blocks
  get(BLOCK_AT),
  get(BLOCKS),
  atLeast,
  branchIf(1),
  get(VALUES),
  get(BLOCK_AT),
  i32(6),
  shl,
  add,
  set(VALUE_AT),
  get(VALUE_AT),
  loadV128(0),
  ...[16, 32, 48].flatMap((offset) => [...get(VALUE_AT), ...loadV128(offset), ...maxV128]),
  set(HIGHEST),
  get(HIGHEST),
  lane(0),
  set(BEST),
  ...[1, 2, 3].flatMap((index) => [
    ...get(HIGHEST),
    ...lane(index),
    ...set(LANE),
    // best ← lane > best ? lane : best
    ...get(LANE),
    ...get(BEST),
    ...get(LANE),
    ...get(BEST),
    ...greater,
    ...select,
    ...set(BEST),
  ]),
  get(MAXIMA), // out + 4 × block ← best
  get(BLOCK_AT),
  i32(2),
  shl,
  add,
  get(BEST),
  store32,
  get(BLOCK_AT),
  i32(1),
  add,
  set(BLOCK_AT),
  branch(0),
  end,
  end,
  end,
].flat();

function section(id: number, content: readonly number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

function uleb(value: number): number[] {
  const out: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value) byte |= 0x80;
    out.push(byte);
  } while (value);
  return out;
}

function name(text: string): number[] {
  return [text.length, ...Buffer.from(text, 'utf8')];
}

const DOTS_WASM = new Uint8Array([
  ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
  ...section(1, [2, 0x60, 6, I32, I32, I32, I32, I32, I32, 0, 0x60, 3, I32, I32, I32, 0]),
  ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 0x01]),
  ...section(3, [2, 0, 1]),
  ...section(7, [2, ...name('dots'), 0x00, 0, ...name('maxima'), 0x00, 1]),
  ...section(10, [
    2,
    ...uleb(DOTS_BODY.length),
    ...DOTS_BODY,
    ...uleb(MAXIMA_BODY.length),
    ...MAXIMA_BODY,
  ]),
]);
