import { existsSync } from 'node:fs';
import * as path from 'node:path';

/**
 * Turns text into vectors. Two kinds: a static Model2Vec table (microseconds per text, runs in
 * every parse worker) and a transformer through transformers.js (runs once, on the engine thread).
 */
export interface Embedder {
  /** Stable identity stored in the manifest; a different id means the vectors must be rebuilt. */
  readonly id: string;
  readonly dimensions: number;
  readonly kind: 'static' | 'transformer';
  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]>;
  dispose(): void;
}

export interface EmbedOptions {
  /**
   * The texts are not expected again (an index's vocabulary, taken in once): a static model keeps
   * no token ids of their words for later texts, so a vocabulary does not fill its word cache.
   */
  readonly once?: boolean;
}

/** What the index knows about its vectors, shown by `stats` and the status bar. */
export interface EmbeddingStatus {
  readonly available: boolean;
  readonly modelId: string | null;
  readonly dimensions: number;
  /** Why the index is lexical-only, when it is. */
  readonly reason: string | null;
  /** Why the index uses another model than the one asked for (the shipped one, offline). */
  readonly note: string | null;
}

/** The model a workspace asks for: a local folder, a hub repository, or none at all. */
export type ModelRequest =
  | { readonly kind: 'directory'; readonly path: string }
  | { readonly kind: 'hub'; readonly repo: string }
  | { readonly kind: 'none' };

export const DEFAULT_MODEL_REPO = 'minishlab/potion-code-16M';

/**
 * A model flag or setting: `none`, a hub repository (`owner/name`), or a local folder, relative to
 * `base`. `models/potion-base-2M` looks like a repository name too: an existing folder wins.
 */
export function parseModelSetting(value: string, base: string): ModelRequest {
  if (value === 'none') return { kind: 'none' };
  const looksLikeRepo = /^[\w.-]+\/[\w.-]+$/.test(value) && !value.startsWith('.');
  if (looksLikeRepo && !existsSync(path.join(path.resolve(base, value), 'config.json')))
    return { kind: 'hub', repo: value };
  return { kind: 'directory', path: path.resolve(base, value) };
}

/** The text embedded for a chunk: where it lives and what it is named, then its content. */
export function embeddingText(chunk: {
  filePath: string | null;
  directoryPath: string;
  className: string | null;
  functionName: string | null;
  content: string;
}): string {
  const name = [chunk.className, chunk.functionName].filter(Boolean).join('.');
  return `${chunk.filePath ?? chunk.directoryPath}${name ? ` ${name}` : ''}\n${chunk.content}`;
}

export function l2Normalize(vector: Float32Array): Float32Array {
  let norm = 0;
  for (let i = 0; i < vector.length; i++) norm += vector[i]! * vector[i]!;
  norm = Math.sqrt(norm);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i]! /= norm;
  return vector;
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
