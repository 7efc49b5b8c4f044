import type { Segment } from '../model';
import type { ChunkMeta } from '../store/tables';
import type { TextLookup } from './chunk-texts';
import {
  codeLines,
  documentationLines,
  lineScore,
  lineScores,
  linesThatCanScore,
  windowsAround,
  type CodeLine,
} from './evidence';
import type { QuotedMessage } from './retrievers';
import type { Span } from './spans';

/**
 * Turns ranked chunks into the spans a reader (or a model) is shown, citing the lines that carry
 * the answer: a function's code whole (long runs of comments and docstrings left out) when it
 * fits the allowance of its rank — the best-ranked chunks get more — otherwise its signature and
 * windows around its evidence (call sites, message lines, the question's words); a class as its
 * header and the class-body lines that matter; a file as the module-level lines that matter.
 */
export interface RankedChunk {
  readonly chunkId: string;
  readonly score: number;
  readonly why: string;
  /** Lines the retrievers tied to the question (call sites, messages, named symbols). */
  readonly lines: readonly number[];
  readonly message?: QuotedMessage;
}

/** Functions up to this many code lines are cited whole; the first chunks get the larger allowance. */
const WHOLE_FUNCTION_LINES = 60;
const LEADING_FUNCTION_LINES = 150;
const LEADING_CHUNKS = 5;
/** A function is cited in at most this many pieces: each piece takes a place in the ranking. */
const RANGES_PER_FUNCTION = 2;
/** A run of documentation lines longer than this (a doc block, not a comment on the code) is left out. */
const DOC_GAP = 3;
const WINDOW_RADIUS = 6;
const WINDOWS_PER_CHUNK = 3;
const SIGNATURE_LINES = 3;
const HEADER_LINES = 12;
/** A line must hold at least this share of the best line's weight to be a focus. */
export const FOCUS_SHARE = 0.6;
/** Module and class-body lines must hold a term weighing at least this share of the rarest term's. */
const STRONG_TERM_SHARE = 0.5;
/**
 * A line's score and a chunk's reach (see TextReach) are sums of the same weights in different
 * orders: their rounding differs by far less than this share.
 */
const SUM_ROUNDING = 1e-9;

/**
 * The most any line of a chunk's text can score: the summed weight of the question's terms its
 * indexed text holds (a line holds no term its chunk does not), Infinity when that is not known.
 * Lines that cannot reach a floor are then not scored at all.
 */
export type TextReach = (meta: ChunkMeta) => number;

const UNKNOWN_REACH: TextReach = () => Infinity;

/** Whether no line of a chunk whose lines score at most `reach` scores above 0 and at least `floor`. */
function outOfReach(reach: number, floor: number): boolean {
  return reach === 0 || reach * (1 + SUM_ROUNDING) < floor;
}

export function shapeSpans(
  ranked: readonly RankedChunk[],
  catalog: ReadonlyMap<string, ChunkMeta>,
  texts: TextLookup,
  termWeights: ReadonlyMap<string, number>,
  /** The line a function's own definition starts on (after its doc comment and any overloads). */
  definitionLine: (chunkId: string) => number | undefined,
  reach: TextReach = UNKNOWN_REACH,
  /** Whether a class cited by its header shows the start of its body (the `class-bodies` stage). */
  classBodies = true,
): Span[] {
  const context = shapingContext(texts, termWeights, definitionLine, reach, classBodies);
  return dropContained(
    ranked.flatMap((chunk, rank) => {
      const meta = catalog.get(chunk.chunkId);
      return meta ? spansOf(chunk, meta, chunkRanges(chunk, rank, meta, context)) : [];
    }),
  );
}

/** What shaping any chunk of one question needs besides the chunk. */
interface ShapingContext {
  readonly texts: TextLookup;
  readonly termWeights: ReadonlyMap<string, number>;
  /** The weight a module or class-body line's best term must reach. */
  readonly strong: number;
  readonly definitionLine: (chunkId: string) => number | undefined;
  readonly reach: TextReach;
  readonly classBodies: boolean;
}

function shapingContext(
  texts: TextLookup,
  termWeights: ReadonlyMap<string, number>,
  definitionLine: (chunkId: string) => number | undefined,
  reach: TextReach,
  classBodies: boolean,
): ShapingContext {
  const strong = STRONG_TERM_SHARE * Math.max(0, ...termWeights.values());
  return { texts, termWeights, strong, definitionLine, reach, classBodies };
}

function chunkRanges(
  chunk: RankedChunk,
  rank: number,
  meta: ChunkMeta,
  { texts, termWeights, strong, definitionLine, reach, classBodies }: ShapingContext,
): [number, number][] {
  return rangesOf(
    meta,
    texts.get(chunk.chunkId),
    chunk.lines,
    { weights: termWeights, reach: reach(meta) },
    strong,
    rank < LEADING_CHUNKS,
    definitionLine(chunk.chunkId),
    classBodies,
  );
}

/** The question's term weights, and the most a line of the chunk at hand can score with them. */
interface LineWeights {
  readonly weights: ReadonlyMap<string, number>;
  readonly reach: number;
}

/** One chunk that shapeSpans cites, its spans shaped when first asked for. */
export interface CitableChunk {
  readonly chunkId: string;
  readonly path: string;
  readonly spans: () => readonly Span[];
}

/**
 * The chunks of `ranked` that shapeSpans would cite (one or more spans), each with the spans
 * shapeSpans gives it — shaped only when asked for. Whether a chunk yields a citable range rarely
 * needs its lines: a function always does, a class does when it has segments, a folder never;
 * only a file's module code must be scored to tell. So a caller that cites few of many chunks pays
 * for those few. Each chunk's spans are its own: a caller passing several chunks of one file gets
 * the spans a better-ranked chunk of the file would have covered.
 */
export function citableChunks(
  ranked: readonly RankedChunk[],
  catalog: ReadonlyMap<string, ChunkMeta>,
  texts: TextLookup,
  termWeights: ReadonlyMap<string, number>,
  definitionLine: (chunkId: string) => number | undefined,
  reach: TextReach = UNKNOWN_REACH,
  classBodies = true,
): CitableChunk[] {
  const context = shapingContext(texts, termWeights, definitionLine, reach, classBodies);
  const out: CitableChunk[] = [];
  ranked.forEach((chunk, rank) => {
    const meta = catalog.get(chunk.chunkId);
    if (!meta) return;
    const citable =
      citableByLevel(meta) ??
      moduleCodeCitable(
        meta,
        texts.get(chunk.chunkId),
        chunk.lines,
        { weights: termWeights, reach: reach(meta) },
        context.strong,
      );
    if (!citable) return;
    let spans: readonly Span[] | undefined;
    out.push({
      chunkId: chunk.chunkId,
      path: meta.filePath ?? meta.directoryPath,
      spans: () =>
        (spans ??= dropContained(spansOf(chunk, meta, chunkRanges(chunk, rank, meta, context)))),
    });
  });
  return out;
}

/**
 * Whether rangesOf yields a range for a chunk of this level, when the level alone decides: a
 * function is always cited (whole, or by its signature), a class by its header at least when it
 * has segments, a folder never. A file's module code is cited only where it holds the evidence.
 */
function citableByLevel(meta: ChunkMeta): boolean | undefined {
  if (meta.level === 'function') return true;
  if (meta.level === 'directory') return false;
  if (meta.level === 'class') return !!meta.segments?.length;
  return undefined;
}

/**
 * Whether rangesOf cites a file chunk: when one of its segments holds a focus line. Every module
 * code line lies in a segment, and the best-scoring line is a focus whenever any line above the
 * `strong` floor is, so one such line, or an evidence line inside a segment, decides it — without
 * scoring the lines after it, and without scoring any when no line can reach the floor.
 */
function moduleCodeCitable(
  meta: ChunkMeta,
  text: string | undefined,
  evidence: readonly number[],
  { weights, reach }: LineWeights,
  strong: number,
): boolean {
  const segments = meta.segments ?? [];
  if (evidence.some((line) => segments.some(([start, end]) => start <= line && line <= end)))
    return true;
  if (outOfReach(reach, strong)) return false;
  const lines = text ? codeLines(meta, text) : [];
  const scorable = linesThatCanScore(lines, weights);
  for (let i = 0; i < lines.length; i++) {
    if (scorable && !scorable[i]) continue;
    const score = lineScore(lines[i]!.text, weights);
    if (score > 0 && score >= strong) return true;
  }
  return false;
}

function spansOf(chunk: RankedChunk, meta: ChunkMeta, ranges: readonly [number, number][]): Span[] {
  const message = chunk.message;
  return ranges.map(([startLine, endLine]) => ({
    path: meta.filePath ?? meta.directoryPath,
    startLine,
    endLine,
    level: meta.level,
    score: chunk.score,
    why: chunk.why,
    chunkId: chunk.chunkId,
    // the quoted message goes with the span that shows its line
    ...(message && startLine <= message.line && message.line <= endLine ? { message } : {}),
  }));
}

function rangesOf(
  meta: ChunkMeta,
  text: string | undefined,
  evidence: readonly number[],
  weights: LineWeights,
  strong: number,
  leading: boolean,
  definitionLine: number | undefined,
  classBodies: boolean,
): [number, number][] {
  // A folder has no lines to cite; its summary reaches the reader as the parent of its files' spans.
  if (meta.level === 'directory') return [];
  const lines = text ? codeLines(meta, text) : [];
  if (meta.level === 'function')
    return functionRanges(
      meta,
      lines,
      evidence,
      weights,
      leading ? LEADING_FUNCTION_LINES : WHOLE_FUNCTION_LINES,
      definitionLine,
    );
  const segments = meta.segments ?? [];
  const focus = focusLines(lines, evidence, weights.weights, strong, weights.reach);
  const chosen = segments.filter(([start, end]) =>
    focus.some((line) => start <= line && line <= end),
  );
  // A file's module code is cited only where it holds the evidence (its imports answer nothing);
  // a class without it is cited by its header.
  if (!chosen.length && meta.level === 'file') return [];
  const picked = chosen.length ? chosen : segments.slice(0, 1);
  // A long segment (imports, a table) is cut to its header or to windows around its focus: one
  // window past the leading chunks, whose budget is better spent on the code of functions.
  return mergeRanges(
    picked.flatMap((segment): [number, number][] => {
      const [start, end] = segment;
      if (end - start + 1 <= WHOLE_FUNCTION_LINES / 2) {
        const header = classBodies && meta.level === 'class' && segment === segments[0];
        return [[start, header ? headerEnd(meta, segment) : end]];
      }
      const inside = focus.filter((line) => start <= line && line <= end);
      return inside.length
        ? windowsAround(inside, WINDOW_RADIUS, [start, end], leading ? WINDOWS_PER_CHUNK : 1)
        : [[start, Math.min(end, start + HEADER_LINES - 1)]];
    }),
  );
}

/**
 * Where a class's first segment (its doc comment, declaration and first attributes) is cited
 * to: at least HEADER_LINES lines from its start, the start of the class body after it (the
 * constructor, the first members) when it is shorter, so that a class cited by its header shows
 * how it begins and not its declaration alone.
 */
function headerEnd(meta: ChunkMeta, [start, end]: Segment): number {
  return Math.min(meta.endLine, Math.max(end, start + HEADER_LINES - 1));
}

function functionRanges(
  meta: ChunkMeta,
  lines: readonly CodeLine[],
  evidence: readonly number[],
  weights: LineWeights,
  allowance: number,
  definitionLine: number | undefined,
): [number, number][] {
  const whole: [number, number][] = [
    [meta.startLine, Math.min(meta.endLine, meta.startLine + allowance - 1)],
  ];
  const docs = documentationLines(lines, meta.language);
  const code = lines.filter((line) => !docs.has(line.line));
  if (!code.length) return whole;
  const ranges = fewest(
    keepDocstring(
      bridge(
        code.map((line) => line.line),
        DOC_GAP,
      ),
      meta.language,
    ),
    RANGES_PER_FUNCTION,
  );
  const focus = focusLines(code, evidence, weights.weights, 0, weights.reach);
  // Code before the definition's own first line (TypeScript overload signatures) is preamble.
  const preamble =
    definitionLine === undefined ? [] : ranges.filter(([, end]) => end < definitionLine);
  if (code.length <= allowance)
    return preamble.length
      ? [...ranges.filter((range) => !preamble.includes(range)), ...preamble]
      : focusFirst(ranges, focus);
  // the implementation's signature, not the first overload's
  const first = preamble.length
    ? (code.find((line) => line.line >= definitionLine!)?.line ?? code[0]!.line)
    : code[0]!.line;
  const signature: [number, number] = [first, Math.min(meta.endLine, first + SIGNATURE_LINES - 1)];
  if (!focus.length) return mergeRanges([signature, ...clip(ranges, first + allowance - 1)]);
  const radius = Math.max(WINDOW_RADIUS, Math.floor(allowance / (2 * WINDOWS_PER_CHUNK)) - 1);
  return mergeRanges([
    signature,
    ...windowsAround(focus, radius, [meta.startLine, meta.endLine], WINDOWS_PER_CHUNK),
  ]);
}

/** The range holding most focus lines leads (overloads and preambles follow it). */
function focusFirst(ranges: [number, number][], focus: readonly number[]): [number, number][] {
  const held = ranges.map(
    ([start, end]) => focus.filter((line) => start <= line && line <= end).length,
  );
  const lead = held.indexOf(Math.max(...held));
  return lead <= 0 || !held[lead]
    ? ranges
    : [ranges[lead]!, ...ranges.filter((_, i) => i !== lead)];
}

/**
 * A Python docstring sits between the signature and the body; cutting it out would leave the
 * signature as a range of its own. Up to this many docstring lines are cited with the code.
 */
const DOCSTRING_KEPT = 12;

function keepDocstring(ranges: [number, number][], language: string | null): [number, number][] {
  const [signature, body] = ranges;
  if (language !== 'python' || !signature || !body || body[0] - signature[1] - 1 > DOCSTRING_KEPT)
    return ranges;
  return [[signature[0], body[1]], ...ranges.slice(2)];
}

/** Joins the ranges across their smallest gaps until at most `count` remain. */
function fewest(ranges: [number, number][], count: number): [number, number][] {
  const out = ranges.map(([start, end]): [number, number] => [start, end]);
  while (out.length > count) {
    let best = 1;
    for (let i = 2; i < out.length; i++)
      if (out[i]![0] - out[i - 1]![1] < out[best]![0] - out[best - 1]![1]) best = i;
    out[best - 1] = [out[best - 1]![0], out[best]![1]];
    out.splice(best, 1);
  }
  return out;
}

/** Consecutive line numbers as ranges, bridging gaps of up to `gap` lines. */
function bridge(numbers: readonly number[], gap: number): [number, number][] {
  const out: [number, number][] = [];
  for (const line of numbers) {
    const last = out[out.length - 1];
    if (last && line - last[1] - 1 <= gap) last[1] = line;
    else out.push([line, line]);
  }
  return out;
}

/** The ranges cut at `last`. */
function clip(ranges: readonly [number, number][], last: number): [number, number][] {
  return ranges
    .filter(([start]) => start <= last)
    .map(([start, end]): [number, number] => [start, Math.min(end, last)]);
}

/**
 * Evidence lines first, then the lines that carry most of the question's weight (and at least
 * `floor`, so a line holding only common words is no focus). No line scores more than `reach`
 * (see TextReach): when that cannot reach the floor, the lines are not scored.
 */
export function focusLines(
  lines: readonly CodeLine[],
  evidence: readonly number[],
  weights: ReadonlyMap<string, number>,
  floor: number,
  reach = Infinity,
): number[] {
  if (outOfReach(reach, floor)) return [...new Set(evidence)];
  // Scores in a typed array and line positions sorted by score: no object per line, and no
  // spread of every score into Math.max (a long chunk's lines are scored for every question).
  const scores = lineScores(lines, weights);
  let best = 0;
  for (let i = 0; i < lines.length; i++) if (scores[i]! > best) best = scores[i]!;
  const threshold = Math.max(best * FOCUS_SHARE, floor);
  const strong: number[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (scores[i]! > 0 && scores[i]! >= threshold) strong.push(i);
  }
  // A stable sort keeps lines of equal score in line order.
  strong.sort((a, b) => scores[b]! - scores[a]!);
  const focus = new Set(evidence);
  for (const i of strong) focus.add(lines[i]!.line);
  return [...focus];
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
    const covered = kept.some(
      (other) =>
        other.path === span.path &&
        other.startLine <= span.startLine &&
        span.endLine <= other.endLine &&
        !(span.startLine === 0 && span.level !== other.level),
    );
    if (!covered) kept.push(span);
  }
  return kept;
}
