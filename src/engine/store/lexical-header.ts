import { z } from 'zod';
import { CHUNK_LEVELS } from '../model';
import { parseJsonOrNull } from '../util/json';
import type { Strings } from './columns';
import type { WordFile } from './snapshot-file';

/**
 * The part of a lexical snapshot before its body: the vocabulary and the chunks' columns. Layout
 * (version 4): the byte length of a small JSON header (`Header`: counts and byte sizes), the
 * header, padding to a multiple of 4 bytes, then the columns as 32-bit little-endian words (per
 * chunk: doc id, level, length, term count, name count, path number) and three string columns
 * (the terms, the chunks' ids, the distinct paths), each the byte end of every value then the
 * values' UTF-8 bytes end to end, padded to a multiple of 4. Then, in 32-bit words, the body
 * (each chunk's run, as `ChunkTerms` keeps it: term ids, their counts, name ids) and, per level in
 * CHUNK_LEVELS order, each term's posting list in term order (its chunk ids ascending, then their
 * payloads).
 *
 * Version 3 held the columns in the JSON header itself: 31 MB of JSON at 10k files and 156 MB at
 * 100k, decoded and parsed at every opening, a path written once per chunk, and a string that
 * would pass V8's longest at about 350k files. A version 3 snapshot is still read.
 */
export const SNAPSHOT_VERSION = 4;
const JSON_HEADER_VERSION = 3;

/** A snapshot's vocabulary and chunks, chunk `i` in each per-chunk column. */
export interface SnapshotColumns {
  readonly nextDocId: number;
  readonly terms: readonly string[];
  readonly ids: Int32Array;
  /** Each chunk's level, by its place in CHUNK_LEVELS. */
  readonly levels: Int32Array;
  readonly lengths: Int32Array;
  readonly termCounts: Int32Array;
  readonly nameCounts: Int32Array;
  readonly chunkIds: readonly string[];
  readonly paths: readonly string[];
  /** Postings per level, in CHUNK_LEVELS order. */
  readonly postings: readonly number[];
}

/** Where a snapshot's parts are, in bytes (the body also in words), and its length. */
export interface SnapshotLayout {
  readonly bodyOffset: number;
  readonly bodyWords: number;
  readonly postingsOffset: number;
  readonly bytes: number;
}

const Header = z.object({
  version: z.literal(SNAPSHOT_VERSION),
  nextDocId: z.number().int().nonnegative(),
  docs: z.number().int().nonnegative(),
  terms: z.number().int().nonnegative(),
  paths: z.number().int().nonnegative(),
  bytes: z.object({
    terms: z.number().int().nonnegative(),
    chunkIds: z.number().int().nonnegative(),
    paths: z.number().int().nonnegative(),
  }),
  postings: z.array(z.number().int().nonnegative()).length(CHUNK_LEVELS.length),
});
type Header = z.infer<typeof Header>;

/** The six per-chunk number columns, in their order in the file. */
const NUMBER_COLUMNS = 6;

/** The snapshot's bytes before its body, and its layout once `columns`' body and lists follow. */
export function snapshotPrefix(columns: SnapshotColumns): {
  prefix: Buffer;
  layout: SnapshotLayout;
} {
  const paths = new Map<string, number>();
  const pathNumbers = Int32Array.from(columns.paths, (filePath) => {
    let number = paths.get(filePath);
    if (number === undefined) paths.set(filePath, (number = paths.size));
    return number;
  });
  const strings = [columns.terms, columns.chunkIds, [...paths.keys()]].map(stringColumnBytes);
  const [terms, chunkIds, distinctPaths] = strings as [StringBytes, StringBytes, StringBytes];
  const header: Header = {
    version: SNAPSHOT_VERSION,
    nextDocId: columns.nextDocId,
    docs: columns.ids.length,
    terms: columns.terms.length,
    paths: paths.size,
    bytes: { terms: terms.bytes, chunkIds: chunkIds.bytes, paths: distinctPaths.bytes },
    postings: [...columns.postings],
  };
  const json = Buffer.from(JSON.stringify(header), 'utf8');
  const columnsOffset = padded(4 + json.length);
  const layout = layoutAfter(columnsOffset + columnsBytes(header), columns);
  const prefix = Buffer.alloc(layout.bodyOffset);
  prefix.writeUInt32LE(json.length, 0);
  json.copy(prefix, 4);
  let at = columnsOffset;
  const numbers = [
    columns.ids,
    columns.levels,
    columns.lengths,
    columns.termCounts,
    columns.nameCounts,
    pathNumbers,
  ];
  for (const column of numbers) at = putWords(prefix, at, column);
  for (const column of strings) {
    at = putWords(prefix, at, column.ends);
    at = padded(at + column.write(prefix, at));
  }
  return { prefix, layout };
}

/**
 * A snapshot's columns and layout, checked against themselves and the file's length. Chunk ids
 * and paths are kept through `strings` (see LexicalIndex.readSnapshot).
 */
export function readSnapshotHeader(
  snapshot: WordFile,
  strings: Strings,
): { columns: SnapshotColumns; layout: SnapshotLayout } {
  if (snapshot.bytes < 4) throw new Error('the lexical snapshot is truncated');
  const length = Buffer.alloc(4);
  snapshot.readBytes(length, 0, 4, 0);
  const headerLength = length.readUInt32LE(0);
  if (4 + headerLength > snapshot.bytes) throw new Error('the lexical snapshot is truncated');
  const headerBytes = Buffer.alloc(headerLength);
  snapshot.readBytes(headerBytes, 0, headerLength, 4);
  const json = parseJsonOrNull(headerBytes.toString('utf8'));
  const version = (json as { version?: unknown } | null)?.version;
  if (version === JSON_HEADER_VERSION) return readJsonHeader(json, headerLength, snapshot, strings);
  if (typeof version === 'number' && version !== SNAPSHOT_VERSION)
    throw new Error(
      `the lexical snapshot has format version ${version}, this version reads ${SNAPSHOT_VERSION}`,
    );
  const parsed = Header.safeParse(json);
  if (!parsed.success) throw new Error('the lexical snapshot header is damaged');
  const header = parsed.data;
  const columnsOffset = padded(4 + headerLength);
  const size = columnsBytes(header);
  if (columnsOffset + size > snapshot.bytes) throw new Error('the lexical snapshot is truncated');
  const bytes = Buffer.alloc(size);
  snapshot.readBytes(bytes, 0, size, columnsOffset);
  const columns = decodeColumns(header, bytes, strings);
  return { columns, layout: checkedLayout(columnsOffset + size, columns, snapshot) };
}

/** The columns of a version 4 snapshot from their bytes (`columnsBytes(header)` of them). */
function decodeColumns(header: Header, bytes: Buffer, strings: Strings): SnapshotColumns {
  const words = (at: number, count: number) =>
    new Int32Array(bytes.buffer, bytes.byteOffset + at, count);
  const n = header.docs;
  const [ids, levels, lengths, termCounts, nameCounts, pathNumbers] = Array.from(
    { length: NUMBER_COLUMNS },
    (_, column) => words(column * n * 4, n),
  ) as [Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array];
  let at = NUMBER_COLUMNS * n * 4;
  const stringColumn = (count: number, blobBytes: number, take: StringTaker) => {
    const ends = words(at, count);
    const blob = bytes.subarray(at + count * 4, at + count * 4 + blobBytes);
    at = padded(at + count * 4 + blobBytes);
    const out = new Array<string>(count);
    let start = 0;
    for (let i = 0; i < count; i++) {
      const end = ends[i]!;
      if (end < start || end > blob.length)
        throw new Error('the lexical snapshot has a damaged string column');
      out[i] = take(blob, start, end);
      start = end;
    }
    if (start !== blob.length) throw new Error('the lexical snapshot has a damaged string column');
    return out;
  };
  const decode: StringTaker = (blob, start, end) => blob.toString('utf8', start, end);
  const intern: StringTaker = (blob, start, end) => strings.internBytes(blob, start, end);
  const terms = stringColumn(header.terms, header.bytes.terms, decode);
  const chunkIds = stringColumn(n, header.bytes.chunkIds, intern);
  const distinctPaths = stringColumn(header.paths, header.bytes.paths, intern);
  const paths = Array.from(pathNumbers, (number) => {
    const filePath = distinctPaths[number];
    if (filePath === undefined) throw new Error('the lexical snapshot names a path it lacks');
    return filePath;
  });
  for (const level of levels)
    if (level < 0 || level >= CHUNK_LEVELS.length)
      throw new Error('the lexical snapshot names a level it does not know');
  return {
    nextDocId: header.nextDocId,
    terms,
    ids,
    levels,
    lengths,
    termCounts,
    nameCounts,
    chunkIds,
    paths,
    postings: header.postings,
  };
}

type StringTaker = (blob: Buffer, start: number, end: number) => string;

/** A column of strings as written: each value's byte end, and a writer of the values' bytes. */
interface StringBytes {
  readonly ends: Int32Array;
  readonly bytes: number;
  write(into: Buffer, at: number): number;
}

function stringColumnBytes(values: readonly string[]): StringBytes {
  const ends = new Int32Array(values.length);
  let bytes = 0;
  values.forEach((value, i) => (ends[i] = bytes += Buffer.byteLength(value, 'utf8')));
  return {
    ends,
    bytes,
    write: (into, at) => {
      let written = 0;
      for (const value of values) written += into.write(value, at + written, 'utf8');
      return written;
    },
  };
}

/** The bytes of a version 4 snapshot's columns, padding included. */
function columnsBytes(header: Header): number {
  return (
    NUMBER_COLUMNS * header.docs * 4 +
    padded(header.terms * 4 + header.bytes.terms) +
    padded(header.docs * 4 + header.bytes.chunkIds) +
    padded(header.paths * 4 + header.bytes.paths)
  );
}

function putWords(into: Buffer, at: number, words: Int32Array): number {
  into.set(new Uint8Array(words.buffer, words.byteOffset, words.byteLength), at);
  return at + words.byteLength;
}

function padded(bytes: number): number {
  return bytes + ((4 - (bytes % 4)) % 4);
}

/** The layout of a snapshot whose body starts at `bodyOffset`, holding `columns`' chunks and lists. */
function layoutAfter(bodyOffset: number, columns: SnapshotColumns): SnapshotLayout {
  const { termCounts, nameCounts } = columns;
  let bodyWords = 0;
  for (let i = 0; i < termCounts.length; i++) bodyWords += termCounts[i]! * 2 + nameCounts[i]!;
  const postingsOffset = bodyOffset + bodyWords * 4;
  const postings = columns.postings.reduce((sum, count) => sum + count, 0);
  return { bodyOffset, bodyWords, postingsOffset, bytes: postingsOffset + postings * 8 };
}

function checkedLayout(
  bodyOffset: number,
  columns: SnapshotColumns,
  snapshot: WordFile,
): SnapshotLayout {
  const layout = layoutAfter(bodyOffset, columns);
  if (layout.bytes !== snapshot.bytes)
    throw new Error('the lexical snapshot body does not match its header');
  return layout;
}

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number';

/**
 * Arrays of hundreds of thousands of values (a term or a chunk each), checked by a plain loop:
 * a schema's check of each element took about as long as parsing the header's JSON.
 */
function arrayOf<T>(isElement: (value: unknown) => value is T, what: string) {
  return z.custom<T[]>(
    (value) => Array.isArray(value) && value.every((element) => isElement(element)),
    `expected an array of ${what}`,
  );
}
const manyStrings = arrayOf(isString, 'strings');
const manyNumbers = arrayOf(isNumber, 'numbers');

/** A version 3 header: the columns in the JSON itself. */
const JsonHeader = z.object({
  version: z.literal(JSON_HEADER_VERSION),
  nextDocId: z.number().int(),
  terms: manyStrings,
  docs: z.object({
    ids: manyNumbers,
    chunkIds: manyStrings,
    paths: manyStrings,
    levels: manyNumbers,
    lengths: manyNumbers,
    termCounts: manyNumbers,
    nameCounts: manyNumbers,
  }),
  postings: z.array(z.number()).length(CHUNK_LEVELS.length),
});

/** The columns of a version 3 snapshot, whose body starts after the JSON header (padded). */
function readJsonHeader(
  json: unknown,
  headerLength: number,
  snapshot: WordFile,
  strings: Strings,
): { columns: SnapshotColumns; layout: SnapshotLayout } {
  const parsed = JsonHeader.safeParse(json);
  if (!parsed.success) throw new Error('the lexical snapshot header is damaged');
  const { docs, ...header } = parsed.data;
  for (const column of [
    docs.chunkIds,
    docs.paths,
    docs.levels,
    docs.lengths,
    docs.termCounts,
    docs.nameCounts,
  ]) {
    if (column.length !== docs.ids.length)
      throw new Error('the lexical snapshot has columns of different lengths');
  }
  // a file's chunks are listed together: its path is interned once for the run of them
  let listedPath = '';
  let keptPath = '';
  const columns: SnapshotColumns = {
    nextDocId: header.nextDocId,
    terms: header.terms,
    ids: Int32Array.from(docs.ids),
    levels: Int32Array.from(docs.levels),
    lengths: Int32Array.from(docs.lengths),
    termCounts: Int32Array.from(docs.termCounts),
    nameCounts: Int32Array.from(docs.nameCounts),
    chunkIds: docs.chunkIds.map((id) => strings.intern(id)),
    paths: docs.paths.map((filePath) => {
      if (filePath !== listedPath) keptPath = strings.intern((listedPath = filePath));
      return keptPath;
    }),
    postings: header.postings,
  };
  return { columns, layout: checkedLayout(padded(4 + headerLength), columns, snapshot) };
}
