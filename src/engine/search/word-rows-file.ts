import {
  lengthPrefixed,
  readSavedFile,
  savedFileHeader,
  writeChecksummed,
  type SavedFileKind,
} from '../util/checksummed-file';
import { fail, ok, type Result } from '../util/result';

/**
 * The nearest words' int8 rows, kept on disk beside the index so that opening it does not embed
 * every index word again (at 10k files ~3 s of the first question, or of the warm-up). A row
 * belongs to its word and the model alone: a static model embeds a word the same way whatever the
 * index holds, so the file names words, not term ids, and serves every generation of the index.
 * Layout: a header (magic, format version, dimensions, rows), the model's id (length, UTF-8), the
 * words (length, UTF-8, one per line: index words are letters only), the rows (int8, one after
 * another) and a CRC-32 of all of it. Rows of another model or dimension are not taken.
 */
const HEADER_BYTES = 16;
const KIND: SavedFileKind = {
  magic: 0x52574f43 /* 'COWR' */,
  version: 1,
  headerBytes: HEADER_BYTES + 8,
};

export interface WordRows {
  readonly words: readonly string[];
  /** `words.length × dimensions` int8 values, the rows in the words' order. */
  readonly codes: Int8Array;
}

/** Writes `rows` of `modelId`'s `dimensions` to `file`, whole or not at all. */
export async function writeWordRows(
  file: string,
  modelId: string,
  dimensions: number,
  rows: WordRows,
): Promise<void> {
  const header = savedFileHeader(KIND, [dimensions, rows.words.length]);
  const parts = [
    header,
    ...lengthPrefixed(Buffer.from(modelId, 'utf8')),
    ...lengthPrefixed(Buffer.from(rows.words.join('\n'), 'utf8')),
    new Uint8Array(rows.codes.buffer, rows.codes.byteOffset, rows.codes.byteLength),
  ];
  await writeChecksummed(file, parts);
}

/**
 * The rows saved in `file` for `modelId` at `dimensions`: null when there is no file or it holds
 * another model's; an error saying what is wrong when it is damaged or of another format.
 */
export async function readWordRows(
  file: string,
  modelId: string,
  dimensions: number,
): Promise<Result<WordRows | null>> {
  const read = await readSavedFile(file, 'word vectors', KIND);
  if (!read.ok) return read;
  if (!read.value) return ok(null);
  const body = read.value;
  const savedDimensions = body.readUInt32LE(8);
  const count = body.readUInt32LE(12);
  let at = HEADER_BYTES;
  const text = (): string => {
    const length = body.readUInt32LE(at);
    const value = body.toString('utf8', at + 4, at + 4 + length);
    at += 4 + length;
    return value;
  };
  if (text() !== modelId || savedDimensions !== dimensions) return ok(null);
  const words = count ? text().split('\n') : (text(), []);
  if (words.length !== count || body.length - at !== count * dimensions)
    return fail('index_corrupt', 'The saved word vectors are damaged.');
  const codes = new Int8Array(body.buffer, body.byteOffset + at, count * dimensions).slice();
  return ok({ words, codes });
}
