import {
  readSavedFile,
  savedFileHeader,
  writeChecksummed,
  type SavedFileKind,
} from '../util/checksummed-file';
import { fail, ok, type Result } from '../util/result';

/**
 * The token counts of a texts file's records, kept on disk beside it so that opening an index
 * does not count every chunk again (at 10k files that pass took ~20 s of a core after each
 * opening). Per record: its offset and checksum in the texts file (a record is taken back only
 * where the texts file holds a live record with both: a checksum covers the chunk's id and text),
 * its header's count and where its line counts start. Layout: a header (magic, format version,
 * records, lines), the arrays in that order as the machine lays them out (little-endian on every
 * platform Node runs on here), and a CRC-32 of all of it. The format version changes whenever
 * what is counted or how does: a file of another version is counted again.
 */
const HEADER_BYTES = 16;
const KIND: SavedFileKind = {
  magic: 0x43544f43 /* 'COTC' */,
  version: 1,
  headerBytes: HEADER_BYTES,
};

/** Counted records in offset order; `starts` has one more entry than the others. */
export interface SavedCounts {
  readonly offsets: Float64Array;
  readonly checks: Uint32Array;
  readonly starts: Uint32Array;
  readonly headers: Uint16Array;
  readonly lines: Uint8Array;
}

/** Writes the first `size` records of `counts` (and their lines) to `file`, whole or not at all. */
export async function writeCounts(file: string, counts: SavedCounts, size: number): Promise<void> {
  const lineCount = counts.starts[size]!;
  const header = savedFileHeader(KIND, [size, lineCount]);
  const parts = [
    header,
    bytesOf(counts.offsets.subarray(0, size)),
    bytesOf(counts.checks.subarray(0, size)),
    bytesOf(counts.starts.subarray(0, size + 1)),
    bytesOf(counts.headers.subarray(0, size)),
    bytesOf(counts.lines.subarray(0, lineCount)),
  ];
  await writeChecksummed(file, parts);
}

/**
 * The counts saved in `file`: null when there is none, an error saying what is wrong when it is
 * damaged or of another format version (either is counted again).
 */
export async function readCounts(file: string): Promise<Result<SavedCounts | null>> {
  const read = await readSavedFile(file, 'token counts', KIND);
  if (!read.ok) return read;
  if (!read.value) return ok(null);
  const bytes = read.value;
  const size = bytes.readUInt32LE(8);
  const lineCount = bytes.readUInt32LE(12);
  if (bytes.length !== HEADER_BYTES + size * (8 + 4 + 4 + 2) + 4 + lineCount)
    return fail('index_corrupt', 'The saved token counts are damaged.');
  let at = HEADER_BYTES;
  const take = <Values extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(
    values: Values,
  ): Values => {
    bytesOf(values).set(bytes.subarray(at, at + values.byteLength));
    at += values.byteLength;
    return values;
  };
  return ok({
    offsets: take(new Float64Array(size)),
    checks: take(new Uint32Array(size)),
    starts: take(new Uint32Array(size + 1)),
    headers: take(new Uint16Array(size)),
    lines: take(new Uint8Array(lineCount)),
  });
}

function bytesOf(values: Float64Array | Uint32Array | Uint16Array | Uint8Array): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}
