import { readFileSync, statSync } from 'node:fs';
import { contentHash } from '../util/hash';
import { describeError } from '../util/result';
import type { SkipReason } from './walk';

/**
 * Reads one file for indexing and decides whether it is source text: no NUL bytes, valid UTF-8
 * (or UTF-16 with its byte order mark), not minified. A BOM is dropped; CRLF is kept so lines and
 * offsets match the editor, and a lone CR (old Mac line endings) becomes LF, one character for
 * one, so the parser counts the lines the editor shows.
 */
export type ReadOutcome =
  | { readonly kind: 'text'; readonly source: string; readonly hash: string; readonly size: number }
  | {
      readonly kind: 'skip';
      readonly reason: SkipReason;
      readonly detail?: string;
      readonly hash?: string;
    };

const BINARY_PROBE_BYTES = 8000;
const MINIFIED_MIN_BYTES = 2000;
const MINIFIED_AVERAGE_LINE = 300;
const MINIFIED_LONGEST_LINE = 10_000;

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads synchronously: it runs on a parse worker (or inline for a handful of files), where four
 * awaited calls per file cost more than the read itself.
 */
export async function readSourceFile(absolute: string, maxBytes: number): Promise<ReadOutcome> {
  let bytes: Buffer;
  try {
    const stat = statSync(absolute);
    if (stat.size > maxBytes) return { kind: 'skip', reason: 'too_large' };
    bytes = readFileSync(absolute);
  } catch (cause) {
    return { kind: 'skip', reason: 'unreadable', detail: describeError(cause) };
  }
  return classifyBytes(bytes, maxBytes);
}

export function classifyBytes(bytes: Uint8Array, maxBytes: number): ReadOutcome {
  const hash = contentHash(bytes);
  if (bytes.length > maxBytes) return { kind: 'skip', reason: 'too_large', hash };
  const utf16 = utf16Encoding(bytes);
  if (utf16) {
    let text: string;
    try {
      text = new TextDecoder(utf16, { fatal: true }).decode(bytes);
    } catch {
      return { kind: 'skip', reason: 'utf8_decode_failed', hash };
    }
    return textOutcome(text, hash, bytes.length);
  }
  if (bytes.subarray(0, BINARY_PROBE_BYTES).includes(0))
    return { kind: 'skip', reason: 'binary', hash };
  let source: string;
  try {
    source = decoder.decode(bytes);
  } catch {
    return { kind: 'skip', reason: 'utf8_decode_failed', hash };
  }
  return textOutcome(source, hash, bytes.length);
}

function textOutcome(decoded: string, hash: string, size: number): ReadOutcome {
  const source = decoded.includes('\r') ? decoded.replace(/\r(?!\n)/g, '\n') : decoded;
  if (looksMinified(source)) return { kind: 'skip', reason: 'minified', hash };
  return { kind: 'text', source, hash, size };
}

/** UTF-16 announced by its byte order mark (the decoder drops the mark). */
function utf16Encoding(bytes: Uint8Array): 'utf-16le' | 'utf-16be' | null {
  if (bytes.length < 2) return null;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  return null;
}

/**
 * Long lines of code, not of indentation: deeply nested code has long lines that are mostly
 * leading whitespace, and is not minified.
 */
function looksMinified(source: string): boolean {
  if (source.length < MINIFIED_MIN_BYTES) return false;
  let lines = 0;
  let longest = 0;
  let content = 0;
  for (let start = 0; start <= source.length;) {
    const end = source.indexOf('\n', start);
    const stop = end < 0 ? source.length : end;
    let first = start;
    while (first < stop && (source[first] === ' ' || source[first] === '\t')) first++;
    longest = Math.max(longest, stop - first);
    content += stop - first;
    lines++;
    if (end < 0) break;
    start = end + 1;
  }
  return longest > MINIFIED_LONGEST_LINE || content / lines > MINIFIED_AVERAGE_LINE;
}
