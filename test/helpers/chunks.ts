import type { Chunk } from '../../src/engine/model';
import type { ChunkMeta } from '../../src/engine/store/tables';

/**
 * A chunk's metadata for tests: a Python function at the top of the workspace with no parents,
 * names or segments, with `fields` put over it (a test names only what it is about).
 */
export function chunkMeta(fields: Partial<ChunkMeta> & Pick<ChunkMeta, 'id'>): ChunkMeta {
  return {
    level: 'function',
    filePath: null,
    directoryPath: '.',
    language: 'python',
    className: null,
    functionName: null,
    startLine: 1,
    endLine: 2,
    parentDirectoryId: null,
    parentFileId: null,
    parentClassId: null,
    isSummarized: false,
    originalLineCount: null,
    segments: null,
    ...fields,
  };
}

/** A chunk for tests: `chunkMeta`'s defaults, its text `content` and no summarised text. */
export function chunkOf(fields: Partial<Chunk> & Pick<Chunk, 'id' | 'content'>): Chunk {
  return { ...chunkMeta(fields), fullContent: null, ...fields };
}
