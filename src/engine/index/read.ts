import { promises as fs } from 'node:fs';
import { contentHash } from '../util/hash';
import { describeError } from '../util/result';
import type { SkipReason } from './walk';

/**
 * Reads one file for indexing and decides whether it is source text: no NUL bytes, valid UTF-8,
 * not minified. A BOM is dropped; CRLF is kept so lines and offsets match the editor.
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

export async function readSourceFile(absolute: string, maxBytes: number): Promise<ReadOutcome> {
  let bytes: Buffer;
  try {
    const stat = await fs.stat(absolute);
    if (stat.size > maxBytes) return { kind: 'skip', reason: 'too_large' };
    bytes = await fs.readFile(absolute);
  } catch (cause) {
    return { kind: 'skip', reason: 'unreadable', detail: describeError(cause) };
  }
  return classifyBytes(bytes, maxBytes);
}

export function classifyBytes(bytes: Uint8Array, maxBytes: number): ReadOutcome {
  const hash = contentHash(bytes);
  if (bytes.length > maxBytes) return { kind: 'skip', reason: 'too_large', hash };
  if (bytes.subarray(0, BINARY_PROBE_BYTES).includes(0))
    return { kind: 'skip', reason: 'binary', hash };
  let source: string;
  try {
    source = decoder.decode(bytes);
  } catch {
    return { kind: 'skip', reason: 'utf8_decode_failed', hash };
  }
  if (looksMinified(source)) return { kind: 'skip', reason: 'minified', hash };
  return { kind: 'text', source, hash, size: bytes.length };
}

function looksMinified(source: string): boolean {
  if (source.length < MINIFIED_MIN_BYTES) return false;
  let lines = 1;
  let longest = 0;
  let lineStart = 0;
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) {
    longest = Math.max(longest, i - lineStart);
    lineStart = i + 1;
    lines++;
  }
  longest = Math.max(longest, source.length - lineStart);
  return longest > MINIFIED_LONGEST_LINE || source.length / lines > MINIFIED_AVERAGE_LINE;
}
