import { promises as fs } from 'node:fs';
import { crc32 } from 'node:zlib';
import { writeFileAtomic } from './atomic-file';
import { fail, ok, type Result } from './result';

/**
 * A file the index can rebuild, kept so that it need not: written whole or not at all, its parts
 * followed by a CRC-32 of all of them, so that a damaged one is told apart from a good one.
 */
export async function writeChecksummed(file: string, parts: readonly Uint8Array[]): Promise<void> {
  let check = 0;
  for (const part of parts) check = crc32(part, check);
  const trailer = Buffer.allocUnsafe(4);
  trailer.writeUInt32LE(check, 0);
  await writeFileAtomic(file, [...parts, trailer]);
}

/**
 * What `writeChecksummed` wrote to `file` (without the checksum): null when there is no file, an
 * error naming `what` the file holds when it cannot be read or its checksum does not hold.
 */
export async function readChecksummed(file: string, what: string): Promise<Result<Buffer | null>> {
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return ok(null);
    return fail('io_error', `The saved ${what} could not be read: ${String(cause)}`);
  }
  const body = bytes.subarray(0, Math.max(0, bytes.length - 4));
  if (bytes.length < 4 || crc32(body) !== bytes.readUInt32LE(bytes.length - 4))
    return fail('index_corrupt', `The saved ${what} are damaged.`);
  return ok(body);
}

/**
 * How a saved file begins: a 32-bit magic number saying what it holds, then its format version;
 * its header takes at least `headerBytes`.
 */
export interface SavedFileKind {
  readonly magic: number;
  readonly version: number;
  readonly headerBytes: number;
}

/**
 * What `writeChecksummed` wrote to `file` (without the checksum), once its header says it is of
 * `kind`: null when there is no file; an error naming `what` the file holds when it cannot be
 * read, is damaged, holds something else or is of another format version.
 */
export async function readSavedFile(
  file: string,
  what: string,
  kind: SavedFileKind,
): Promise<Result<Buffer | null>> {
  const read = await readChecksummed(file, what);
  if (!read.ok || !read.value) return read;
  const body = read.value;
  if (body.length < kind.headerBytes || body.readUInt32LE(0) !== kind.magic)
    return fail('index_corrupt', `The saved ${what} have an unknown header.`);
  if (body.readUInt32LE(4) !== kind.version)
    return fail('unsupported', `The saved ${what} are of format ${body.readUInt32LE(4)}.`);
  return ok(body);
}

/**
 * The header `readSavedFile` checks: `kind`'s magic number and format version, then `fields`,
 * each a 32-bit number.
 */
export function savedFileHeader(kind: SavedFileKind, fields: readonly number[]): Buffer {
  const header = Buffer.allocUnsafe(8 + fields.length * 4);
  header.writeUInt32LE(kind.magic, 0);
  header.writeUInt32LE(kind.version, 4);
  fields.forEach((field, i) => header.writeUInt32LE(field, 8 + i * 4));
  return header;
}

/** `bytes` after their length (32-bit), as the saved files keep a text of any length. */
export function lengthPrefixed(bytes: Buffer): Buffer[] {
  const length = Buffer.allocUnsafe(4);
  length.writeUInt32LE(bytes.length, 0);
  return [length, bytes];
}
