import { BLOCK_ROWS, int8Matrix, type Int8Matrix } from './int8-dots';

/**
 * The rows of a matrix of unit vectors nearest a query by dot product, exactly as a plain float
 * scan finds them (the same float sums, ties to the earlier row), keeping only an int8 copy of
 * the rows (a quarter of the float matrix): the int8 rows are scanned (WebAssembly SIMD) to pick
 * the few rows that can be among the best, and the caller gives those rows' float vectors again
 * (a static model embeds a word in microseconds) for the exact ranking. With c the int8 values
 * divided by 127 and e = x − c a vector's rounding (each |eᵢ| ≤ 0.5/127), the exact product
 * differs from the int8 one by q·e_v + e_q·c_v: at most (0.5/127)|q|₁ for the first term, and for
 * the second, the query's own rounding (known exactly) against the rows' largest int8 vector,
 * min(|e_q|₂ max |c_v|₂, max |e_q| max |c_v|₁). A row whose int8 product is more than twice that
 * below the k-th best accepted row's cannot beat it.
 */
const SCALE = 127;
const HALF_STEP = 0.5 / SCALE;
/** The int8 values of the unit vector at `vector[from …]`, as a NearestRows keeps its row, into `into`. */
export function quantiseRow(vector: ArrayLike<number>, from: number, into: Int8Array): void {
  for (let d = 0; d < into.length; d++) into[d] = Math.round(vector[from + d]! * SCALE);
}

/** Rows ranked by their int8 product before the exact ones are taken: grows when too few are accepted. */
const FIRST_LOOK = 64;

export class NearestRows {
  private rows = 0;
  private codes: Int8Matrix;
  /** The largest |v|₁ of any row's int8 values, over 127. */
  private maxRowL1 = 0;
  /** The largest |v|₂ of any row's int8 values, over 127. */
  private maxRowL2 = 0;
  /** The first look's rows of one query: reused by every query (no array per query). */
  private readonly firstLook = new Int32Array(FIRST_LOOK);

  constructor(private readonly dimensions: number) {
    this.codes = int8Matrix(0, dimensions);
  }

  get size(): number {
    return this.rows;
  }

  /** The int8 values of `row`, as kept (a view: copied by whoever keeps them). */
  rowCodes(row: number): Int8Array {
    return this.codes.row(row);
  }

  /**
   * Adds `added` rows after the present ones, in their int8 values (quantiseRow's, or rowCodes'
   * of an earlier NearestRows), given in batches of whole rows (the `i`-th of a batch at
   * `batch[i × dimensions …]`): a saved row is taken back as it was kept.
   */
  async append(added: number, batches: AsyncIterable<Int8Array>): Promise<void> {
    const codes = int8Matrix(this.rows + added, this.dimensions);
    for (let row = 0; row < this.rows; row++) codes.setRow(row, this.codes.row(row));
    let maxRowL1 = this.maxRowL1;
    let maxRowL2 = this.maxRowL2;
    let row = this.rows;
    for await (const batch of batches) {
      if (batch.length % this.dimensions)
        throw new Error(`a batch of ${batch.length} values holds part of a row`);
      const first = row;
      for (let at = 0; at < batch.length; at += this.dimensions, row++) {
        if (row === this.rows + added)
          throw new Error(`expected ${added} rows to append, got more`);
        let l1 = 0;
        let squares = 0;
        for (let d = at; d < at + this.dimensions; d++) {
          l1 += Math.abs(batch[d]!) / SCALE;
          squares += (batch[d]! / SCALE) ** 2;
        }
        maxRowL1 = Math.max(maxRowL1, l1);
        maxRowL2 = Math.max(maxRowL2, Math.sqrt(squares));
      }
      codes.setRows(first, batch);
    }
    if (row !== this.rows + added)
      throw new Error(`expected ${added} rows to append, got ${row - this.rows}`);
    this.codes = codes;
    this.rows = row;
    this.maxRowL1 = maxRowL1;
    this.maxRowL2 = maxRowL2;
  }

  /**
   * For each of `queries` (unit vectors), the rows `accept` takes that may be among its `count`
   * best by exact product with it, in row order: every row the exact ranking (`nearestExactly`)
   * needs. The int8 products of all the queries are taken in one pass over the rows.
   */
  candidates(
    queries: readonly Float32Array[],
    count: number,
    accept: (row: number) => boolean,
  ): number[][] {
    if (!this.rows || count <= 0) return queries.map(() => []);
    const quantised = queries.map((query) => this.quantise(query));
    const out: number[][] = [];
    this.codes.dotsEach(
      quantised.map((query) => query.codes),
      (approximate, i, maxima) =>
        out.push(this.reaching(approximate, maxima, quantised[i]!.bound, count, accept)),
    );
    return out;
  }

  /**
   * The query's int8 values, and how far any row's int8 product with them (over 127²) can be
   * from its exact product with the query (see the top of this file; 1e-9 covers float sums).
   */
  private quantise(query: Float32Array): { codes: Int8Array; bound: number } {
    const codes = new Int8Array(this.dimensions);
    let l1 = 0;
    let errorSquares = 0;
    let largestError = 0;
    for (let d = 0; d < this.dimensions; d++) {
      codes[d] = Math.round(query[d]! * SCALE);
      const error = Math.abs(query[d]! - codes[d]! / SCALE);
      l1 += Math.abs(query[d]!);
      errorSquares += error * error;
      largestError = Math.max(largestError, error);
    }
    const queryRounding = Math.min(
      Math.sqrt(errorSquares) * this.maxRowL2,
      largestError * this.maxRowL1,
    );
    return { codes, bound: HALF_STEP * l1 + queryRounding + 1e-9 };
  }

  /** The candidates of one query from its int8 products with every row (and their block maxima). */
  private reaching(
    approximate: Int32Array,
    maxima: Int32Array,
    bound: number,
    count: number,
    accept: (row: number) => boolean,
  ): number[] {
    const margin = 2 * bound * SCALE * SCALE;
    const top = topRows(approximate, maxima, Math.min(FIRST_LOOK, this.rows), this.firstLook);
    const floor = kthAccepted(approximate, top, count, accept);
    if (floor !== null) return rowsReaching(approximate, maxima, floor - margin, accept);
    // too few accepted among the first look: wider looks, every row checked against them, and
    // when fewer than `count` rows are accepted at all, every accepted row is a candidate
    const wider =
      this.rows > FIRST_LOOK ? this.widerFloor(approximate, maxima, count, accept) : null;
    return rowsReaching(approximate, maxima, wider === null ? -Infinity : wider - margin, accept);
  }

  /** The int8 product of the `count`-th best accepted row in ever wider looks; null when fewer are accepted. */
  private widerFloor(
    approximate: Int32Array,
    maxima: Int32Array,
    count: number,
    accept: (row: number) => boolean,
  ): number | null {
    for (let look = FIRST_LOOK * 4; ; look *= 4) {
      const limit = Math.min(look, this.rows);
      const top = topRows(approximate, maxima, limit, new Int32Array(limit));
      const floor = kthAccepted(approximate, top, count, accept);
      if (floor !== null || look >= this.rows) return floor;
    }
  }
}

/**
 * The `count` rows of `rows` (ascending) with the highest exact product with `query`, highest
 * first, ties to the earlier row; `vectors[i]` is row `rows[i]`'s unit vector. The product is
 * summed dimension by dimension, as a plain scan does.
 */
export function nearestExactly(
  query: Float32Array,
  rows: readonly number[],
  vectors: readonly Float32Array[],
  count: number,
): number[] {
  const best: { row: number; similarity: number }[] = [];
  rows.forEach((row, i) => {
    const vector = vectors[i]!;
    let similarity = 0;
    for (let d = 0; d < query.length; d++) similarity += query[d]! * vector[d]!;
    if (best.length === count && similarity <= best[count - 1]!.similarity) return;
    let at = best.length;
    while (at > 0 && best[at - 1]!.similarity < similarity) at--;
    best.splice(at, 0, { row, similarity });
    if (best.length > count) best.pop();
  });
  return best.map((entry) => entry.row);
}

/**
 * The rows, in row order, whose int8 product reaches `cutoff` and that `accept` takes; `maxima`
 * are the products' block maxima (blockMaxima): a block whose highest is below `cutoff` is passed.
 */
export function rowsReaching(
  approximate: Int32Array,
  maxima: Int32Array,
  cutoff: number,
  accept: (row: number) => boolean,
): number[] {
  const out: number[] = [];
  for (let block = 0; block < maxima.length; block++) {
    if (maxima[block]! < cutoff) continue;
    const end = Math.min(approximate.length, (block + 1) * BLOCK_ROWS);
    for (let row = block * BLOCK_ROWS; row < end; row++)
      if (approximate[row]! >= cutoff && accept(row)) out.push(row);
  }
  return out;
}

/** The int8 product of the `count`-th row of `top` that `accept` takes, or null when fewer are. */
export function kthAccepted(
  approximate: Int32Array,
  top: ArrayLike<number>,
  count: number,
  accept: (row: number) => boolean,
): number | null {
  let accepted = 0;
  for (let i = 0; i < top.length; i++)
    if (accept(top[i]!) && ++accepted === count) return approximate[top[i]!]!;
  return null;
}

/**
 * The `limit` rows with the highest values, highest first (ties to the earlier row), as the start
 * of `into` (at least `limit` long). Once `limit` rows are held, most rows are passed with one
 * comparison against the lowest of them, and most blocks of rows with one comparison of their
 * highest value (`maxima`, see blockMaxima): a row no higher than the lowest held changes nothing.
 */
export function topRows(
  values: Int32Array,
  maxima: Int32Array,
  limit: number,
  into: Int32Array,
): Int32Array {
  let held = 0;
  let floor = -Infinity;
  if (limit <= 0) return into.subarray(0, 0);
  for (let block = 0; block < maxima.length; block++) {
    if (maxima[block]! <= floor) continue;
    const end = Math.min(values.length, (block + 1) * BLOCK_ROWS);
    for (let row = block * BLOCK_ROWS; row < end; row++) {
      const value = values[row]!;
      if (value <= floor) continue;
      // when full, the lowest row held gives way
      let at = held < limit ? held++ : limit - 1;
      for (; at > 0 && values[into[at - 1]!]! < value; at--) into[at] = into[at - 1]!;
      into[at] = row;
      if (held === limit) floor = values[into[limit - 1]!]!;
    }
  }
  return into.subarray(0, held);
}
