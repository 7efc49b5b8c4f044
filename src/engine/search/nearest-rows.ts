import { int8Matrix, type Int8Matrix } from './int8-dots';

/**
 * The rows of a float matrix nearest a query by dot product, exactly as a plain scan finds them
 * (the same float sums, ties to the earlier row), without computing every exact product: an int8
 * copy of the rows is scanned first (WebAssembly SIMD), and only rows whose int8 product comes
 * within twice its error bound of the best ones are scored exactly. Rounding a value in [-1, 1]
 * to n/127 moves it by at most 0.5/127, so an int8 product differs from the exact one by at most
 * (0.5/127)(|q|₁ + max |v|₁) + d (0.5/127)², with |x|₁ taken over the int8 values divided by 127:
 * a row whose int8 product is more than twice that below the k-th best accepted row's cannot
 * beat it. Rows are unit vectors, as similarity search uses them.
 */
const SCALE = 127;
const HALF_STEP = 0.5 / SCALE;
/** Rows ranked by their int8 product before the exact ones are taken: grows when too few are accepted. */
const FIRST_LOOK = 64;

export class NearestRows {
  private rows = 0;
  private rowValues: Float32Array = new Float32Array(0);
  private codes: Int8Matrix;
  /** The largest |v|₁ of any row's int8 values, over 127. */
  private maxRowL1 = 0;

  constructor(private readonly dimensions: number) {
    this.codes = int8Matrix(0, dimensions);
  }

  get size(): number {
    return this.rows;
  }

  /** The rows, row `i` at `values[i × dimensions …]`. */
  get values(): Float32Array {
    return this.rowValues;
  }

  /** Replaces the rows (row `i` at `values[i × dimensions …]`). */
  reset(values: Float32Array): void {
    this.rowValues = values;
    this.rows = values.length / this.dimensions;
    this.rebuild();
  }

  /** The exact product of `query` and row `row`, summed dimension by dimension as a plain scan does. */
  exact(query: Float32Array, row: number): number {
    let similarity = 0;
    for (let d = 0, at = row * this.dimensions; d < this.dimensions; d++, at++)
      similarity += query[d]! * this.rowValues[at]!;
    return similarity;
  }

  /**
   * Up to `count` rows `accept` takes, by exact product with `query` (a unit vector), highest
   * first, ties to the earlier row: what scanning every row in order and keeping the best gives.
   */
  nearest(query: Float32Array, count: number, accept: (row: number) => boolean): number[] {
    if (!this.rows || count <= 0) return [];
    const q8 = new Int8Array(this.dimensions);
    let queryL1 = 0;
    for (let d = 0; d < this.dimensions; d++) {
      q8[d] = Math.round(query[d]! * SCALE);
      queryL1 += Math.abs(q8[d]!) / SCALE;
    }
    const approximate = this.codes.dots(q8);
    const bound =
      HALF_STEP * (queryL1 + this.maxRowL1) + this.dimensions * HALF_STEP * HALF_STEP + 1e-9;
    const margin = 2 * bound * SCALE * SCALE;
    // one pass finds the first look's rows and every row that may come near them
    const first = topAndNear(approximate, Math.min(FIRST_LOOK, this.rows), margin);
    const floor = kthAccepted(approximate, first.top, count, accept);
    if (floor !== null)
      return this.best(query, count, accept, approximate, first.near, floor - margin);
    // too few accepted among the first look: wider looks, every row scored against them, and
    // when fewer than `count` rows are accepted at all, every accepted row is an answer
    const wider = this.rows > FIRST_LOOK ? this.widerFloor(approximate, count, accept) : null;
    const cutoff = wider === null ? -Infinity : wider - margin;
    return this.best(query, count, accept, approximate, null, cutoff);
  }

  /**
   * The `count` best rows `accept` takes by exact product, among `rows` (in row order; every row
   * when null) whose int8 product reaches `cutoff`.
   */
  private best(
    query: Float32Array,
    count: number,
    accept: (row: number) => boolean,
    approximate: Int32Array,
    rows: readonly number[] | null,
    cutoff: number,
  ): number[] {
    const best: { row: number; similarity: number }[] = [];
    const consider = (row: number) => {
      if (approximate[row]! < cutoff) return;
      const similarity = this.exact(query, row);
      if (best.length === count && similarity <= best[count - 1]!.similarity) return;
      if (!accept(row)) return;
      let at = best.length;
      while (at > 0 && best[at - 1]!.similarity < similarity) at--;
      best.splice(at, 0, { row, similarity });
      if (best.length > count) best.pop();
    };
    if (rows) for (const row of rows) consider(row);
    else for (let row = 0; row < this.rows; row++) consider(row);
    return best.map((entry) => entry.row);
  }

  /** The int8 product of the `count`-th best accepted row in ever wider looks; null when fewer are accepted. */
  private widerFloor(
    approximate: Int32Array,
    count: number,
    accept: (row: number) => boolean,
  ): number | null {
    for (let look = FIRST_LOOK * 4; ; look *= 4) {
      const top = topAndNear(approximate, Math.min(look, this.rows), null).top;
      const floor = kthAccepted(approximate, top, count, accept);
      if (floor !== null || look >= this.rows) return floor;
    }
  }

  private rebuild(): void {
    this.codes = int8Matrix(this.rows, this.dimensions);
    this.maxRowL1 = 0;
    const row8 = new Int8Array(this.dimensions);
    for (let row = 0; row < this.rows; row++) {
      let l1 = 0;
      for (let d = 0; d < this.dimensions; d++) {
        row8[d] = Math.round(this.rowValues[row * this.dimensions + d]! * SCALE);
        l1 += Math.abs(row8[d]!) / SCALE;
      }
      this.codes.setRow(row, row8);
      if (l1 > this.maxRowL1) this.maxRowL1 = l1;
    }
  }
}

/** The int8 product of the `count`-th row of `top` that `accept` takes, or null when fewer are. */
function kthAccepted(
  approximate: Int32Array,
  top: readonly number[],
  count: number,
  accept: (row: number) => boolean,
): number | null {
  let accepted = 0;
  for (const row of top) if (accept(row) && ++accepted === count) return approximate[row]!;
  return null;
}

/**
 * The `limit` rows with the highest values, highest first (ties to the earlier row), and, in row
 * order, every row whose value came within `margin` of the `limit`-th highest seen before it:
 * since that only rises, `near` holds every row within `margin` of any value of `top` (none are
 * gathered when `margin` is null).
 */
function topAndNear(
  values: Int32Array,
  limit: number,
  margin: number | null,
): { top: number[]; near: number[] } {
  const top: number[] = [];
  const near: number[] = [];
  const gather = margin !== null;
  let floor = -Infinity;
  // rows below this are neither near nor top: most rows, passed with one comparison
  let passed = -Infinity;
  for (let row = 0; row < values.length; row++) {
    const value = values[row]!;
    if (value < passed) continue;
    if (gather) near.push(row);
    if (value <= floor) continue;
    let at = top.length;
    while (at > 0 && values[top[at - 1]!]! < value) at--;
    top.splice(at, 0, row);
    if (top.length > limit) top.pop();
    if (top.length === limit) {
      floor = values[top[limit - 1]!]!;
      passed = gather ? floor - margin : floor;
    }
  }
  return { top, near };
}
