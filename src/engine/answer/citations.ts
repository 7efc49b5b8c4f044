import { getLogger } from '../log/logger';
import type { Citation, Evidence } from './model';

/**
 * An answer never cites a line it did not see: each citation must lie inside a piece of evidence
 * that was in the model's context. Others are dropped, logged, and cost confidence.
 */
const PENALTY_PER_DROP = 0.15;

const log = getLogger('answer.citations');

export interface CheckedCitations {
  readonly kept: Citation[];
  readonly dropped: Citation[];
}

export function checkCitations(
  citations: readonly Citation[],
  evidence: readonly Evidence[],
): CheckedCitations {
  const kept: Citation[] = [];
  const dropped: Citation[] = [];
  const seen = new Set<string>();
  for (const raw of citations) {
    const citation = { ...raw, path: normalizePath(raw.path) };
    const key = rangeKey(citation);
    if (seen.has(key)) continue;
    seen.add(key);
    const inside =
      citation.startLine <= citation.endLine &&
      evidence.some(
        (item) =>
          item.path === citation.path &&
          item.startLine <= citation.startLine &&
          citation.endLine <= item.endLine,
      );
    if (inside) kept.push(citation);
    else {
      dropped.push(citation);
      log.warn('citation_dropped', {
        path: citation.path,
        start_line: citation.startLine,
        end_line: citation.endLine,
        reason: 'not inside any evidence shown to the model',
      });
    }
  }
  return { kept, dropped };
}

/** A range of lines as `path:start-end`, the form answers cite it in: one key per range, to tell ranges apart. */
export function rangeKey(range: Pick<Citation, 'path' | 'startLine' | 'endLine'>): string {
  return `${range.path}:${range.startLine}-${range.endLine}`;
}

/** Confidence after checking: each invented citation lowers it. */
export function adjustedConfidence(confidence: number, dropped: number): number {
  return Math.max(0, Math.min(1, confidence - dropped * PENALTY_PER_DROP));
}

/** Models write `./a/b.py` or `a\\b.py`; the index writes `a/b.py`. */
function normalizePath(path: string): string {
  return path.trim().replace(/\\/g, '/').replace(/^\.\//, '').replace(/^\/+/, '');
}
