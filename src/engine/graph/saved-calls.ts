import { crc32 } from 'node:zlib';
import { fnv1a } from '../util/hash';
import {
  lengthPrefixed,
  readSavedFile,
  savedFileHeader,
  writeChecksummed,
  type SavedFileKind,
} from '../util/checksummed-file';
import { fail, ok, type Result } from '../util/result';

/**
 * The graph's resolved calls, kept on disk beside the index so that opening it does not resolve
 * every call again (at 10k files ~4 s of the opening's CPU). They hold for exactly one state of
 * the facts: `key` names it (the store's facts version, and the resolver's), and calls saved
 * under another key are not taken.
 *
 * Facts are numbered in the order the saving graph listed them and named by two hashes of their
 * id, so the file holds no ids: the graph that opens maps each number to its own slot through the
 * same hashes (see CodeGraph.open). Each fact's calls out are pairs (target's number, stored call)
 * and its calls in pairs (caller's number, stored call), in the order the saving graph held them.
 *
 * Layout: a header (magic, format version, facts, numbers out, numbers in), the key (length,
 * UTF-8), padding to a multiple of 8 bytes, the facts' hashes (64-bit floats), then 32-bit words:
 * the sizes of their lists out, the lists out, the sizes of their lists in, the lists in (all
 * little-endian); and a CRC-32 of all of it.
 */
const HEADER_BYTES = 20;
const KIND: SavedFileKind = {
  magic: 0x4c43434f /* 'OCCL' */,
  version: 1,
  headerBytes: HEADER_BYTES + 4,
};

export interface SavedCalls {
  /** Each fact's id as `factHash` hashes it, fact after fact. */
  readonly hashes: Float64Array;
  /** How many numbers each fact's list of calls out holds (two per call). */
  readonly outgoingSizes: Int32Array;
  /** Every fact's calls out, list after list: target's number, stored call. */
  readonly outgoing: Int32Array;
  readonly incomingSizes: Int32Array;
  /** Every fact's calls in, list after list: caller's number, stored call. */
  readonly incoming: Int32Array;
}

/**
 * A fact's id as the file names it: two hashes, FNV-1a of its UTF-16 units and CRC-32 of its
 * UTF-8, as one number below 2^53 (all of the first, the top 21 bits of the second). Two of 200k
 * facts share one by chance about once in 10^5 openings; the graph then resolves afresh.
 */
export function factHash(id: string): number {
  return (fnv1a(id) >>> 0) * 2 ** 21 + (crc32(id) >>> 11);
}

/** Writes `calls`, resolved for the facts `key` names, to `file`, whole or not at all. */
export async function writeSavedCalls(file: string, key: string, calls: SavedCalls): Promise<void> {
  const facts = calls.outgoingSizes.length;
  const header = savedFileHeader(KIND, [facts, calls.outgoing.length, calls.incoming.length]);
  const keyBytes = Buffer.from(key, 'utf8');
  const padding = Buffer.alloc(paddingAfter(HEADER_BYTES + 4 + keyBytes.length));
  await writeChecksummed(file, [
    header,
    ...lengthPrefixed(keyBytes),
    padding,
    ...[calls.hashes, calls.outgoingSizes, calls.outgoing, calls.incomingSizes, calls.incoming].map(
      (words) => new Uint8Array(words.buffer, words.byteOffset, words.byteLength),
    ),
  ]);
}

/**
 * The calls saved in `file` for the facts `key` names: null when there is no file or it was saved
 * for other facts; an error saying what is wrong when it is damaged or of another format.
 */
export async function readSavedCalls(
  file: string,
  key: string,
): Promise<Result<SavedCalls | null>> {
  const read = await readSavedFile(file, 'resolved calls', KIND);
  if (!read.ok) return read;
  if (!read.value) return ok(null);
  const body = read.value;
  const facts = body.readUInt32LE(8);
  const outgoing = body.readUInt32LE(12);
  const incoming = body.readUInt32LE(16);
  const keyLength = body.readUInt32LE(HEADER_BYTES);
  const keyEnd = HEADER_BYTES + 4 + keyLength;
  if (keyEnd > body.length) return fail('index_corrupt', 'The saved resolved calls are damaged.');
  if (body.toString('utf8', HEADER_BYTES + 4, keyEnd) !== key) return ok(null);
  const wordsAt = keyEnd + paddingAfter(keyEnd);
  const words = facts * 2 + facts * 2 + outgoing + incoming;
  if (body.length - wordsAt !== words * 4)
    return fail('index_corrupt', 'The saved resolved calls are damaged.');
  // copied out of the file's buffer: its place in a pooled buffer need not be a multiple of 8
  const all = new ArrayBuffer(words * 4);
  new Uint8Array(all).set(body.subarray(wordsAt));
  let at = facts * 8;
  const take = (count: number): Int32Array => {
    const list = new Int32Array(all, at, count);
    at += count * 4;
    return list;
  };
  const calls: SavedCalls = {
    hashes: new Float64Array(all, 0, facts),
    outgoingSizes: take(facts),
    outgoing: take(outgoing),
    incomingSizes: take(facts),
    incoming: take(incoming),
  };
  const sum = (sizes: Int32Array) => sizes.reduce((total, size) => total + size, 0);
  if (sum(calls.outgoingSizes) !== outgoing || sum(calls.incomingSizes) !== incoming)
    return fail('index_corrupt', 'The saved resolved calls are damaged.');
  return ok(calls);
}

/** Zero bytes that bring `length` to a multiple of 8. */
function paddingAfter(length: number): number {
  return (8 - (length % 8)) % 8;
}
