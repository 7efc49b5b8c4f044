import type { ChunkMeta } from '../store/tables';
import { codeLines, scoreLines, windowsAround, type CodeLine } from './evidence';
import type { Span } from './spans';

/**
 * Turns ranked chunks into the spans a reader (or a model) is shown, citing as few lines as
 * carry the answer: a short function whole; a long one as windows around its evidence (call
 * sites, message lines, the question's words) after its signature; a class as its header and
 * the class-body lines that matter; a file as the module-level lines that matter.
 */
export interface RankedChunk {
  readonly chunkId: string;
  readonly score: number;
  readonly why: string;
  /** Lines the retrievers tied to the question (call sites, messages, named symbols). */
  readonly lines: readonly number[];
}

/** Functions up to this many lines are cited whole. */
const WHOLE_FUNCTION_LINES = 60;
const WINDOW_RADIUS = 6;
const WINDOWS_PER_CHUNK = 3;
const SIGNATURE_LINES = 3;
const HEADER_LINES = 12;
/** A line must hold at least this share of the best line's weight to be a focus. */
const FOCUS_SHARE = 0.6;

export function shapeSpans(
  ranked: readonly RankedChunk[],
  catalog: ReadonlyMap<string, ChunkMeta>,
  texts: ReadonlyMap<string, string>,
  termWeights: ReadonlyMap<string, number>,
): Span[] {
  const spans: Span[] = [];
  for (const chunk of ranked) {
    const meta = catalog.get(chunk.chunkId);
    if (!meta) continue;
    for (const [startLine, endLine] of rangesOf(meta, texts.get(chunk.chunkId), chunk.lines, termWeights)) {
      spans.push({ path: meta.filePath ?? meta.directoryPath, startLine, endLine, level: meta.level, score: chunk.score, why: chunk.why, chunkId: chunk.chunkId });
    }
  }
  return dropContained(spans);
}

function rangesOf(meta: ChunkMeta, text: string | undefined, evidence: readonly number[], weights: ReadonlyMap<string, number>): [number, number][] {
  if (meta.level === 'directory') return [[0, 0]];
  const lines = text ? codeLines(meta, text) : [];
  if (meta.level === 'function') {
    if (meta.endLine - meta.startLine + 1 <= WHOLE_FUNCTION_LINES) return [[meta.startLine, meta.endLine]];
    const focus = focusLines(lines, evidence, weights);
    if (!focus.length) return [[meta.startLine, meta.startLine + WHOLE_FUNCTION_LINES - 1]];
    const signature: [number, number] = [meta.startLine, meta.startLine + SIGNATURE_LINES - 1];
    return mergeRanges([signature, ...windowsAround(focus, WINDOW_RADIUS, [meta.startLine, meta.endLine], WINDOWS_PER_CHUNK)]);
  }
  const segments = meta.segments ?? [];
  const focus = focusLines(lines, evidence, weights);
  const chosen = segments.filter(([start, end]) => focus.some((line) => start <= line && line <= end));
  const picked = chosen.length ? chosen : segments.slice(0, 1);
  // A long segment (imports, a table) is cut to its header or to windows around its focus.
  return mergeRanges(
    picked.flatMap(([start, end]): [number, number][] => {
      if (end - start + 1 <= WHOLE_FUNCTION_LINES / 2) return [[start, end]];
      const inside = focus.filter((line) => start <= line && line <= end);
      return inside.length ? windowsAround(inside, WINDOW_RADIUS, [start, end], WINDOWS_PER_CHUNK) : [[start, Math.min(end, start + HEADER_LINES - 1)]];
    }),
  );
}

/** Evidence lines first, then the lines that carry most of the question's weight. */
function focusLines(lines: readonly CodeLine[], evidence: readonly number[], weights: ReadonlyMap<string, number>): number[] {
  const scored = scoreLines(lines, weights).filter((entry) => entry.score > 0);
  const best = Math.max(0, ...scored.map((entry) => entry.score));
  const strong = scored.filter((entry) => entry.score >= best * FOCUS_SHARE).sort((a, b) => b.score - a.score);
  return [...new Set([...evidence, ...strong.map((entry) => entry.line)])];
}

function mergeRanges(ranges: [number, number][]): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const range of sorted) {
    const last = out[out.length - 1];
    if (last && range[0] <= last[1] + 1) last[1] = Math.max(last[1], range[1]);
    else out.push([...range]);
  }
  return out;
}

/** A span wholly inside an earlier (better-ranked) span of the same file adds nothing. */
function dropContained(spans: Span[]): Span[] {
  const kept: Span[] = [];
  for (const span of spans) {
    const covered = kept.some((other) => other.path === span.path && other.startLine <= span.startLine && span.endLine <= other.endLine && !(span.startLine === 0 && span.level !== other.level));
    if (!covered) kept.push(span);
  }
  return kept;
}
