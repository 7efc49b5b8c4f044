import type { QuotedMessage } from './retrievers';
import type { ChunkLevel } from '../model';

/** One place in the code a result points at: what the model is shown and what a citation opens. */
export interface Span {
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly level: ChunkLevel;
  readonly score: number;
  /** Why this span was chosen, in words. */
  readonly why: string;
  readonly chunkId: string;
  /** A message the question quotes, when this span shows the line holding it. */
  readonly message?: QuotedMessage;
}
