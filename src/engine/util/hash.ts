import { createHash } from 'node:crypto';

/** Content hash used by the manifest to decide whether a file changed. */
export function contentHash(data: string | Uint8Array): string {
  return createHash('sha1').update(data).digest('hex');
}

export function shortHash(text: string, length = 16): string {
  return contentHash(text).slice(0, length);
}
