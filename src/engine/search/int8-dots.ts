import { getLogger } from '../log/logger';
import { describeError } from '../util/result';

/**
 * Dot products of one int8 query with every row of an int8 matrix, in WebAssembly SIMD: sixteen
 * bytes at a time, widened to 16 bits and multiplied pairwise into 32-bit sums (`i32x4.dot`).
 * The sums are exact integers, the same a plain loop gives, so rankings do not change; a pass
 * over 192k rows of 64 dimensions takes 1–2 ms instead of a JavaScript loop's 10–20.
 *
 * The module is a dozen instructions, written here as bytes (no WebAssembly toolchain is needed
 * to build the extension). The matrix lives in the module's memory, rows padded to a multiple of
 * sixteen bytes with zeros (which add nothing to a dot product). Where WebAssembly SIMD is not
 * available, the same sums are computed in JavaScript.
 */
export interface Int8Matrix {
  readonly rows: number;
  readonly dimensions: number;
  /** Row `row` as a view on the matrix's bytes (its first `dimensions` bytes). */
  row(row: number): Int8Array;
  /** Writes row `row` (`dimensions` signed bytes). */
  setRow(row: number, values: Int8Array): void;
  /**
   * The dot product of `query` (`dimensions` bytes) with every row, in row order: a view the next
   * call overwrites (a copy per call was megabytes per question for the collector).
   */
  dots(query: Int8Array): Int32Array;
}

const log = getLogger('search.vectors');

/** The part of the WebAssembly API used here (the project's type libraries do not declare it). */
interface WasmApi {
  readonly Module: new (bytes: Uint8Array) => WasmModule;
  readonly Instance: new (
    module: WasmModule,
    imports: Record<string, Record<string, unknown>>,
  ) => { readonly exports: Record<string, unknown> };
  readonly Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
}
type WasmModule = { readonly kind: 'wasm-module' };

const wasm = (globalThis as unknown as { WebAssembly?: WasmApi }).WebAssembly;
const LANES = 16;
const PAGE = 65536;

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

  constructor(
    readonly rows: number,
    readonly dimensions: number,
  ) {
    this.codes = new Int8Array(rows * dimensions);
    this.out = new Int32Array(rows);
  }

  row(row: number): Int8Array {
    return this.codes.subarray(row * this.dimensions, (row + 1) * this.dimensions);
  }

  setRow(row: number, values: Int8Array): void {
    this.codes.set(values.subarray(0, this.dimensions), row * this.dimensions);
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
}

/**
 * Memory layout: the query widened to 16 bits (2 × stride bytes) at 0, the matrix after it, the
 * output (4 bytes per row) after the matrix.
 */
class SimdMatrix implements Int8Matrix {
  private readonly stride: number;
  private readonly bytes: Int8Array;
  private readonly query: Int16Array;
  private readonly out: Int32Array;
  private readonly matrixAt: number;
  private readonly outAt: number;
  private readonly run: (
    rows: number,
    stride: number,
    matrix: number,
    query: number,
    out: number,
  ) => void;

  constructor(
    module: WasmModule,
    readonly rows: number,
    readonly dimensions: number,
  ) {
    this.stride = Math.ceil(Math.max(1, dimensions) / LANES) * LANES;
    this.matrixAt = 2 * this.stride;
    this.outAt = this.matrixAt + rows * this.stride;
    const size = this.outAt + rows * 4;
    const memory = new wasm!.Memory({ initial: Math.max(1, Math.ceil(size / PAGE)) });
    const instance = new wasm!.Instance(module, { env: { memory } });
    this.run = instance.exports.dots as SimdMatrix['run'];
    this.bytes = new Int8Array(memory.buffer);
    this.query = new Int16Array(memory.buffer, 0, this.stride);
    this.out = new Int32Array(memory.buffer, this.outAt, rows);
  }

  row(row: number): Int8Array {
    const at = this.matrixAt + row * this.stride;
    return this.bytes.subarray(at, at + this.dimensions);
  }

  setRow(row: number, values: Int8Array): void {
    this.bytes.set(values.subarray(0, this.dimensions), this.matrixAt + row * this.stride);
  }

  dots(query: Int8Array): Int32Array {
    for (let i = 0; i < this.dimensions; i++) this.query[i] = query[i]!;
    this.run(this.rows, this.stride, this.matrixAt, 0, this.outAt);
    return this.out;
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
const QUERY = 3;
const OUT = 4;
const ROW = 5;
const AT = 6;
const COLUMN = 7;
const SUM = 8;
const BLOCK = 9;

const get = (local: number) => [0x20, local];
const set = (local: number) => [0x21, local];
const tee = (local: number) => [0x22, local];
/** A constant below 64 (one byte of signed LEB128). */
const i32 = (value: number) => [0x41, value];
const add = [0x6a];
const shl = [0x74];
const below = [0x49];
const atLeast = [0x4f];
const loop = [0x03, EMPTY];
const block = [0x02, EMPTY];
const end = [0x0b];
const branch = (depth: number) => [0x0c, depth];
const branchIf = (depth: number) => [0x0d, depth];
const store32 = [0x36, 2, 0];
/** SIMD instructions: the 0xfd prefix, the opcode as unsigned LEB128, then any immediates. */
const loadV128 = (offset: number) => [0xfd, 0x00, 0, offset];
const zeroV128 = [0xfd, 0x0c, ...new Array<number>(16).fill(0)];
const lane = (index: number) => [0xfd, 0x1b, index];
const widenLow = [0xfd, 0x87, 0x01];
const widenHigh = [0xfd, 0x88, 0x01];
const addV128 = [0xfd, 0xae, 0x01];
const dot16 = [0xfd, 0xba, 0x01];
/** The query's 16-bit values for the current column: query + 2 × column. */
const queryBlock = (offset: number) => [
  ...get(QUERY),
  ...get(COLUMN),
  ...i32(1),
  ...shl,
  ...add,
  ...loadV128(offset),
];

/** `dots(rows, stride, matrix, query, out)`: out[row] = Σ matrix[row][i] × query[i]. */
const DOTS_BODY = [
  [2, 3, I32, 2, V128], // locals: row, at, column (i32); sum, block (v128)
  get(MATRIX),
  set(AT),
  block,
  loop, // over rows
  get(ROW),
  get(ROWS),
  atLeast,
  branchIf(1),
  zeroV128,
  set(SUM),
  i32(0),
  set(COLUMN),
  loop, // over the row's 16-byte blocks
  get(AT),
  get(COLUMN),
  add,
  loadV128(0),
  set(BLOCK),
  get(SUM),
  get(BLOCK),
  widenLow,
  queryBlock(0),
  dot16,
  addV128,
  get(BLOCK),
  widenHigh,
  queryBlock(16),
  dot16,
  addV128,
  set(SUM),
  get(COLUMN),
  i32(16),
  add,
  tee(COLUMN),
  get(STRIDE),
  below,
  branchIf(0),
  end,
  get(OUT), // out + 4 × row ← the four lanes of sum added up
  get(ROW),
  i32(2),
  shl,
  add,
  get(SUM),
  lane(0),
  ...[1, 2, 3].flatMap((index) => [get(SUM), lane(index), add]),
  store32,
  get(AT),
  get(STRIDE),
  add,
  set(AT),
  get(ROW),
  i32(1),
  add,
  set(ROW),
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
  ...section(1, [1, 0x60, 5, I32, I32, I32, I32, I32, 0]),
  ...section(2, [1, ...name('env'), ...name('memory'), 0x02, 0x00, 0x01]),
  ...section(3, [1, 0]),
  ...section(7, [1, ...name('dots'), 0x00, 0]),
  ...section(10, [1, ...uleb(DOTS_BODY.length), ...DOTS_BODY]),
]);
