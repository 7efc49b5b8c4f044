/**
 * Where the chunk vectors are searched, decided by bytes rather than by a count of chunks: while
 * the in-memory scan of every vector (an int8 matrix, search/vectors.ts) fits the budget below,
 * search reads the vectors once and scans them whole; above it they stay in the chunks table,
 * which gets an approximate nearest-neighbour index (IVF-PQ) when the index is built, so a
 * question never waits on a flat scan of the table.
 *
 * 128 MiB holds about 1.4 million chunks of 64-dimension vectors (the shipped static model),
 * 470 thousand of 256 dimensions and 320 thousand of 384.
 */
export const VECTOR_MEMORY_BYTES = 128 * 1024 * 1024;

/** The int8 kernel reads rows in 16-byte lanes: a row's codes are padded to a multiple of this. */
const ROW_ALIGNMENT = 16;
/** Queries whose 32-bit products the kernel keeps per row in one pass (at most; see int8-dots.ts). */
const PRODUCTS_PER_ROW = 4;

/**
 * What one chunk costs the in-memory scan: its int8 codes padded to the kernel's lanes, the
 * products of one pass, its level (1 byte), the number of the file or folder it belongs to (4)
 * and its reference to the chunk's id, which is the catalog's own string (a pointer, 8).
 */
export function vectorRowBytes(dimensions: number): number {
  const codes = Math.ceil(dimensions / ROW_ALIGNMENT) * ROW_ALIGNMENT;
  return codes + PRODUCTS_PER_ROW * 4 + 1 + 4 + 8;
}

/** Whether the vectors of `chunks` chunks are scanned in memory within `budget` bytes. */
export function vectorsFitInMemory(
  chunks: number,
  dimensions: number,
  budget: number = VECTOR_MEMORY_BYTES,
): boolean {
  return chunks * vectorRowBytes(dimensions) <= budget;
}
