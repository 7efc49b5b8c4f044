import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/**
 * Writes a file so that a crash leaves either the old or the new content, never a mix:
 * write a sibling temp file, flush it, rename over the target, flush the directory. `data` may
 * come in parts, written one after another as they are made.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array | Iterable<Uint8Array>,
): Promise<void> {
  const temp = `${target}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const handle = await fs.open(temp, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(temp, target);
  } catch (cause) {
    await fs.rm(temp, { force: true });
    throw cause;
  }
  await syncDirectory(path.dirname(target));
}

/**
 * Writes `bytes` at `offset` of an append-only log, dropping anything after it first (left by a
 * write that never committed), flushed before returning; returns the log's new length.
 */
export async function appendAt(file: string, bytes: Uint8Array, offset: number): Promise<number> {
  const handle = await fs.open(file, 'a+');
  try {
    await handle.truncate(offset);
    await handle.write(bytes, 0, bytes.length, offset);
    await handle.sync();
  } finally {
    await handle.close();
  }
  return offset + bytes.length;
}

async function syncDirectory(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
