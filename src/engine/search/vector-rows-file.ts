import {
  lengthPrefixed,
  readSavedFile,
  savedFileHeader,
  writeChecksummed,
  type SavedFileKind,
} from '../util/checksummed-file';
import { fail, ok, type Result } from '../util/result';

/**
 * The chunks' int8 vectors as the search holds them, kept on disk beside the index so that an
 * opening does not read every vector from the table and quantise it again (at 10k files ~3 s of
 * the opening's thread, which the first question waited on). They belong to one commit of the
 * index, named by a key; rows saved under another key are not taken.
 * Layout: a header (magic, format version, dimensions, rows), the key (length, UTF-8), each row's
 * chunk id (the end of each id's bytes, 32-bit, then the ids' UTF-8 bytes end to end), the rows
 * (int8, one after another) and a CRC-32 of all of it.
 */
const HEADER_BYTES = 16;
const KIND: SavedFileKind = {
  magic: 0x52564f43 /* 'COVR' */,
  version: 1,
  headerBytes: HEADER_BYTES + 4,
};

export interface VectorRows {
  readonly ids: readonly string[];
  /** `ids.length × dimensions` int8 values, the rows in the ids' order. */
  readonly codes: Int8Array;
}

/** Rows as read back: each row's id decoded when asked (a million ids are a second of work). */
export interface SavedVectorRows {
  readonly count: number;
  idAt(row: number): string;
  /** `count × dimensions` int8 values, the rows in order. */
  readonly codes: Int8Array;
}

/** Writes `rows` of `dimensions` under `key` to `file`, whole or not at all. */
export async function writeVectorRows(
  file: string,
  key: string,
  dimensions: number,
  rows: VectorRows,
): Promise<void> {
  const header = savedFileHeader(KIND, [dimensions, rows.ids.length]);
  const ids = rows.ids.map((id) => Buffer.from(id, 'utf8'));
  const ends = new Uint32Array(ids.length);
  ids.reduce((end, id, row) => (ends[row] = end + id.length), 0);
  const parts = [
    header,
    ...lengthPrefixed(Buffer.from(key, 'utf8')),
    new Uint8Array(ends.buffer),
    ...ids,
    new Uint8Array(rows.codes.buffer, rows.codes.byteOffset, rows.codes.byteLength),
  ];
  await writeChecksummed(file, parts);
}

/**
 * The rows saved in `file` under `key` at `dimensions`: null when there is no file or it holds
 * other rows (another commit's, another model's); an error saying what is wrong when it is
 * damaged or of another format.
 */
export async function readVectorRows(
  file: string,
  key: string,
  dimensions: number,
): Promise<Result<SavedVectorRows | null>> {
  const read = await readSavedFile(file, 'chunk vectors', KIND);
  if (!read.ok) return read;
  if (!read.value) return ok(null);
  const body = read.value;
  const keyLength = body.readUInt32LE(HEADER_BYTES);
  const savedKey = body.toString('utf8', HEADER_BYTES + 4, HEADER_BYTES + 4 + keyLength);
  if (savedKey !== key || body.readUInt32LE(8) !== dimensions) return ok(null);
  const count = body.readUInt32LE(12);
  const endsAt = HEADER_BYTES + 4 + keyLength;
  const idsAt = endsAt + count * 4;
  if (idsAt > body.length) return fail('index_corrupt', 'The saved chunk vectors are damaged.');
  const ends = new Uint32Array(
    body.buffer.slice(body.byteOffset + endsAt, body.byteOffset + idsAt),
  );
  const codesAt = idsAt + (count ? ends[count - 1]! : 0);
  if (body.length - codesAt !== count * dimensions)
    return fail('index_corrupt', 'The saved chunk vectors are damaged.');
  for (let row = 0, start = 0; row < count; start = ends[row++]!)
    if (ends[row]! < start) return fail('index_corrupt', 'The saved chunk vectors are damaged.');
  const codes = new Int8Array(body.buffer, body.byteOffset + codesAt, count * dimensions).slice();
  const idAt = (row: number) =>
    body.toString('utf8', idsAt + (row ? ends[row - 1]! : 0), idsAt + ends[row]!);
  return ok({ count, idAt, codes });
}
