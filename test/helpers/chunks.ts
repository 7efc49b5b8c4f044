import type { Chunk, CodeFact } from '../../src/engine/model';
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

/**
 * A fact for tests: a Python function `f` at the top of `a.py` (its id `a.py::f`) that calls,
 * raises, mutates and imports nothing, with `fields` put over it.
 */
export function factOf(fields: Partial<CodeFact> = {}): CodeFact {
  return {
    id: 'a.py::f',
    path: 'a.py',
    language: 'python',
    qualifiedName: 'f',
    name: 'f',
    kind: 'function',
    className: null,
    parent: null,
    startLine: 1,
    endLine: 2,
    signature: 'def f()',
    docstring: null,
    calls: [],
    raises: [],
    errorStrings: [],
    mutates: [],
    imports: [],
    bases: [],
    chunkId: null,
    ...fields,
  };
}
