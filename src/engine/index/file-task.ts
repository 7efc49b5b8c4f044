import * as path from 'node:path';
import { embeddingText } from '../embed/embedder';
import type { StaticModel } from '../embed/static-model';
import { loadGrammar } from '../lang/grammars';
import { languageById, languageForPath } from '../lang/registry';
import { describeError } from '../util/result';
import { indexTermCounts, indexTerms } from '../text/tokenize';
import { buildFileChunks } from './chunks';
import { extractDefinitions } from './extract';
import type { Chunk, CodeFact, LanguageId, ParseAnomaly } from '../model';
import { readSourceFile } from './read';
import type { SkipReason } from './walk';

/**
 * Everything done for one file, in whichever thread runs it: read and classify, parse, extract,
 * chunk, count terms and (with a static model) embed. The result is plain data.
 */
export interface FileTask {
  readonly root: string;
  readonly path: string;
  readonly language: LanguageId;
  readonly maxFileBytes: number;
  /** The hash the manifest holds; an equal hash means only the timestamp changed. */
  readonly previousHash: string | null;
}

/**
 * A chunk's terms, packed to cross from a worker thread cheaply: one string and one typed array
 * per chunk instead of an array per distinct term.
 */
export interface LexicalTerms {
  readonly chunkId: string;
  /** The distinct terms of the chunk's text, in order of first use, joined by spaces … */
  readonly terms: string;
  /** … and how often each occurs. */
  readonly counts: Uint32Array;
  readonly nameTerms: string[];
}

export type FileOutcome =
  | {
      readonly kind: 'indexed';
      readonly path: string;
      readonly hash: string;
      readonly size: number;
      readonly language: LanguageId;
      readonly lineCount: number;
      readonly chunks: Chunk[];
      readonly facts: CodeFact[];
      readonly anomalies: readonly ParseAnomaly[];
      readonly flagged: { chunkId: string; functionName: string; lineCount: number }[];
      /** One entry per chunk, in chunk order; null when the task left the terms to the receiver. */
      readonly lexical: LexicalTerms[] | null;
      /** One vector per chunk, in chunk order, when a static model ran in this thread. */
      readonly vectors: Float32Array[] | null;
      readonly parseMs: number;
    }
  | {
      readonly kind: 'unchanged';
      readonly path: string;
      readonly hash: string;
      readonly size: number;
    }
  | {
      readonly kind: 'skipped';
      readonly path: string;
      readonly reason: SkipReason;
      readonly detail?: string;
      readonly hash?: string;
      readonly size: number;
    }
  | {
      readonly kind: 'failed';
      readonly path: string;
      readonly error: string;
      readonly size: number;
    };

/**
 * Runs one file task. With `finish`, the chunks' terms are counted and (given a static model)
 * embedded here; without, that is left to whoever receives the outcome (`finishChunks`), so a
 * parse worker can hand it to a thread with time to spare.
 */
export async function runFileTask(
  task: FileTask,
  embedder: StaticModel | null,
  finish = true,
): Promise<FileOutcome> {
  const read = await readSourceFile(path.join(task.root, task.path), task.maxFileBytes);
  if (read.kind === 'skip') {
    return {
      kind: 'skipped',
      path: task.path,
      reason: read.reason,
      ...(read.detail ? { detail: read.detail } : {}),
      ...(read.hash ? { hash: read.hash } : {}),
      size: 0,
    };
  }
  if (read.hash === task.previousHash)
    return { kind: 'unchanged', path: task.path, hash: read.hash, size: read.size };
  try {
    const started = performance.now();
    const spec = languageById(task.language);
    const extraction = extractDefinitions(task.path, read.source, spec, await loadGrammar(spec));
    const built = buildFileChunks(task.path, task.language, read.source, extraction);
    const parseMs = performance.now() - started;
    return {
      kind: 'indexed',
      path: task.path,
      hash: read.hash,
      size: read.size,
      language: task.language,
      lineCount: extraction.lineCount,
      chunks: built.chunks,
      facts: built.facts,
      anomalies: extraction.anomalies,
      flagged: built.flagged,
      lexical: finish ? packedLexicalTerms(built.chunks) : null,
      vectors: finish && embedder ? packedVectors(built.chunks, embedder) : null,
      parseMs,
    };
  } catch (cause) {
    return { kind: 'failed', path: task.path, error: describeError(cause), size: read.size };
  }
}

/** Small enough to cost a few milliseconds, large enough to hold definitions of several kinds. */
const WARM_FILE_BYTES = 4096;

/**
 * Tasks that ready this thread for the files of each language `files` are written in: one small
 * file (nearest WARM_FILE_BYTES) per language, the languages with most files first. Running one
 * loads the grammar and runs the code that reads, parses, chunks, counts and embeds, so the next
 * file of that language does not pay for that first run.
 */
export function warmingTasks(
  root: string,
  files: Iterable<{ path: string; size: number }>,
  maxFileBytes: number,
): FileTask[] {
  const chosen = new Map<LanguageId, { path: string; size: number; files: number }>();
  const distance = (file: { size: number }) => Math.abs(file.size - WARM_FILE_BYTES);
  for (const file of files) {
    const language = languageForPath(file.path)?.id;
    if (!language) continue;
    const held = chosen.get(language);
    const count = (held?.files ?? 0) + 1;
    chosen.set(
      language,
      !held || distance(file) < distance(held)
        ? { ...file, files: count }
        : { ...held, files: count },
    );
  }
  return [...chosen]
    .sort(([, a], [, b]) => b.files - a.files)
    .map(([language, file]) => ({
      root,
      path: file.path,
      language,
      maxFileBytes,
      previousHash: null,
    }));
}

/** The terms of a chunk's text, and the terms of its names: symbol, file stem and nearby folders. */
export function chunkTerms(chunk: Chunk): { counts: Map<string, number>; nameTerms: string[] } {
  const location = chunk.filePath ?? chunk.directoryPath;
  const names = [
    chunk.className,
    chunk.functionName,
    location
      .split('/')
      .slice(-3)
      .join(' ')
      .replace(/\.[^.\s]+$/, ''),
  ]
    .filter(Boolean)
    .join(' ');
  return {
    counts: indexTermCounts(chunk.content),
    nameTerms: [...new Set(indexTerms(names))],
  };
}

/** A chunk's terms (see chunkTerms), packed to cross between threads. */
export function lexicalTerms(chunk: Chunk): LexicalTerms {
  const terms = chunkTerms(chunk);
  return packedTerms(chunk, terms, Uint32Array.from(terms.counts.values()));
}

/** A chunk's terms packed to cross between threads, `counts` holding their counts in order. */
function packedTerms(
  chunk: Chunk,
  { counts: terms, nameTerms }: ReturnType<typeof chunkTerms>,
  counts: Uint32Array,
): LexicalTerms {
  return { chunkId: chunk.id, terms: [...terms.keys()].join(' '), counts, nameTerms };
}

/**
 * Each chunk's terms (see lexicalTerms), their counts views of one array: a worker posts a file's
 * counts as one transfer, not one buffer per chunk (each made, moved and collected on its own).
 */
function packedLexicalTerms(chunks: readonly Chunk[]): LexicalTerms[] {
  const counted = chunks.map(chunkTerms);
  const counts = new Uint32Array(counted.reduce((sum, terms) => sum + terms.counts.size, 0));
  let at = 0;
  return counted.map((terms, i) => {
    const from = at;
    for (const count of terms.counts.values()) counts[at++] = count;
    return packedTerms(chunks[i]!, terms, counts.subarray(from, at));
  });
}

/** The chunks' vectors as views of one array, posted as one transfer (see packedLexicalTerms). */
function packedVectors(chunks: readonly Chunk[], embedder: StaticModel): Float32Array[] {
  const { dimensions } = embedder;
  const vectors = new Float32Array(chunks.length * dimensions);
  return chunks.map((chunk, i) => {
    const vector = vectors.subarray(i * dimensions, (i + 1) * dimensions);
    vector.set(embedder.embedOne(embeddingText(chunk)));
    return vector;
  });
}

/** The term counts a packed LexicalTerms holds, in their first-use order. */
export function unpackTerms(packed: LexicalTerms): Map<string, number> {
  const counts = new Map<string, number>();
  if (!packed.terms) return counts;
  packed.terms.split(' ').forEach((term, i) => counts.set(term, packed.counts[i]!));
  return counts;
}
