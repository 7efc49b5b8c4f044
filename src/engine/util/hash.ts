import { createHash } from 'node:crypto';

/** Content hash used by the manifest to decide whether a file changed. */
export function contentHash(data: string | Uint8Array): string {
  return createHash('sha1').update(data).digest('hex');
}

/**
 * A 32-bit FNV-1a hash of the UTF-16 units `start`…`end` of `text` (the whole text by default):
 * the in-memory tables hash names and spans with it where they are, without cutting strings.
 */
export function fnv1a(text: string, start = 0, end = text.length): number {
  let hash = 0x811c9dc5;
  for (let at = start; at < end; at++) hash = Math.imul(hash ^ text.charCodeAt(at), 0x01000193);
  return hash | 0;
}

/** fnv1a over the bytes `start`…`end` of `bytes`: the same hash as fnv1a of an ASCII text's units. */
export function fnv1aBytes(bytes: Uint8Array, start = 0, end = bytes.length): number {
  let hash = 0x811c9dc5;
  for (let at = start; at < end; at++) hash = Math.imul(hash ^ bytes[at]!, 0x01000193);
  return hash | 0;
}

export function shortHash(text: string, length = 16): string {
  return contentHash(text).slice(0, length);
}
