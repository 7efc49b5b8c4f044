import type { ChunkLevel } from '../model';
import { getLogger } from '../log/logger';
import type { ChunkMeta } from '../store/tables';
import type { CountedText } from '../store/texts';
import type { ChunkTexts } from './chunk-texts';
import { codeLines, type ChunkCodeLine, type CodeLine } from './evidence';
import type { QueryMode } from './mode-router';
import type { Span } from './spans';
import { Generations } from '../util/generations';
import { countText, headerOf, numberedLineTextTokens } from '../text/text-tokens';

/**
 * What a model is shown: the spans in rank order, each preceded (once) by its parent chain —
 * the class it is in, the file, the folder — so no code is seen out of its structure; fitted to
 * a token budget per mode. Code lines carry their numbers, so answers can cite them exactly.
 */
export interface ContextItem {
  readonly chunkId: string;
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly level: ChunkLevel;
  /** Evidence is a span that answers; a parent gives its surroundings. */
  readonly role: 'evidence' | 'parent';
  readonly text: string;
  readonly tokens: number;
  readonly truncated: boolean;
}

export interface BudgetedContext {
  readonly items: readonly ContextItem[];
  readonly spans: readonly Span[];
  readonly tokens: number;
  readonly budget: number;
  readonly droppedSpans: number;
}

/** Tokens per mode: enough for a few hundred lines of code with their surroundings. */
export const MODE_BUDGETS: Readonly<Record<QueryMode, number>> = {
  conceptual: 8000,
  diagnostic: 8000,
  exploratory: 8000,
  analytical: 8000,
};
/** No single item takes more than this; longer code is cut after its first lines, with a marker. */
export const ITEM_CAP = 1500;

const log = getLogger('search.context');

/**
 * Tokens kept across searches, each store bounded: a numbered line's number (`  12 |`, by line
 * and width) and text (` text` and its line break, by the line's own characters), and whole
 * items that are not numbered lines (a parent's first lines, a folder's summary), which the next
 * question often shows again.
 */
const numberTokens = new Generations<number, number>(100_000);
const itemTokens = new Generations<string, number>(1_000_000, (text) => text.length);
/** Widths of line numbers below this are kept by line and width in one number. */
const KEPT_WIDTHS = 64;

/** Counts tokens with the cl100k encoding (see text/text-tokens). */
export function countTokens(text: string): Promise<number> {
  return Promise.resolve(countText(text));
}

/** The tokens of a numbered line's number, `${String(line).padStart(width)} |`. */
function lineNumberTokens(line: number, width: number): number {
  const count = () => countText(`${String(line).padStart(width)} |`);
  return width < KEPT_WIDTHS && Number.isSafeInteger(line * KEPT_WIDTHS + width)
    ? numberTokens.get(line * KEPT_WIDTHS + width, count)
    : count();
}

/**
 * The tokens of `${title}\n${numberedLines(lines, width)}`, without cutting that text into pieces
 * again each question. The encoding's pattern looks at no text before a piece, and no piece goes
 * past a line break followed by neither \r nor \n, nor past a `|` followed by a space. A numbered
 * line starts with a space or a digit, so the count is the title's (with its line break) plus,
 * per line, its number's (`  12 |`) and its text's (` text` and its line break, none after the
 * last): line counts are kept across questions, which show the same code again.
 */
export function numberedItemTokens(
  title: string,
  lines: readonly CodeLine[],
  width: number,
): Promise<number> {
  return Promise.resolve(numberedTokens(title, lines, width));
}

function numberedTokens(title: string, lines: readonly CodeLine[], width: number): number {
  let total = countText(`${title}\n`);
  lines.forEach((line, i) => {
    total += lineNumberTokens(line.line, width);
    total +=
      i + 1 < lines.length
        ? numberedLineTextTokens(line.text, 0, line.text.length)
        : countText(` ${line.text}`);
  });
  return total;
}

/**
 * The tokens of `${title}\n${numberedLines(lines, width)}\n${marker}`, an item cut short, from the
 * kept line counts as numberedItemTokens takes them: every line ends in a line break here, and
 * the marker starts with neither \r nor \n, so no piece crosses into it.
 */
export function cutItemTokens(
  title: string,
  lines: readonly CodeLine[],
  width: number,
  marker: string,
): Promise<number> {
  return Promise.resolve(cutTokens(title, lines, width, marker));
}

function cutTokens(
  title: string,
  lines: readonly CodeLine[],
  width: number,
  marker: string,
): number {
  let total = countText(`${title}\n`) + countText(marker);
  for (const line of lines) {
    total += lineNumberTokens(line.line, width);
    total += numberedLineTextTokens(line.text, 0, line.text.length);
  }
  return total;
}

/**
 * numberedItemTokens and cutItemTokens (`marker` given) from the counts the store keeps of the
 * text `lines` are of: a run of its lines' texts is a difference of two sums. Null when `lines`
 * are not one run of the text's lines.
 */
export function storedItemTokens(
  title: string,
  lines: readonly ChunkCodeLine[],
  width: number,
  counted: CountedText,
  marker?: string,
): number | null {
  const sums = counted.lineSums;
  const first = lines[0]?.at ?? 0;
  const last = lines.length ? lines[lines.length - 1]!.at : -1;
  if (!sums || last - first !== lines.length - 1 || last >= sums.length - 1) return null;
  let total = countText(`${title}\n`);
  for (const line of lines) total += lineNumberTokens(line.line, width);
  if (marker !== undefined) return total + countText(marker) + sums[last + 1]! - sums[first]!;
  // the last line has no line break after it
  if (!lines.length) return total;
  return total + sums[last]! - sums[first]! + countText(` ${lines[lines.length - 1]!.text}`);
}

/**
 * The tokens of `${title}\n${text}`, `textTokens` being those of `text` when known. The piece of
 * the encoding that takes the title's line break ends after it when the title ends in a sign
 * (its pattern's ` ?[^\s\p{L}\p{N}]+[\r\n]*`) and `text` starts with no line break.
 */
export function titledTextTokens(title: string, text: string, textTokens: number | null): number {
  const start = text.charCodeAt(0);
  if (textTokens !== null && ENDS_IN_SIGN.test(title) && start !== 10 && start !== 13)
    return countText(`${title}\n`) + textTokens;
  return itemTextTokens(`${title}\n${text}`);
}

/** A title whose last character is neither whitespace, a letter nor a digit. */
const ENDS_IN_SIGN = /[^\s\p{L}\p{N}]$/u;

/** The tokens of a whole item's text, kept across questions. */
function itemTextTokens(text: string): number {
  return itemTokens.get(text, countText);
}

export async function buildContext(
  spans: readonly Span[],
  catalog: ReadonlyMap<string, ChunkMeta>,
  texts: ChunkTexts,
  budget: number,
): Promise<BudgetedContext> {
  const parentIds = spans.flatMap((span) => parentsOf(catalog, span.chunkId));
  const bodies = await texts.counted([...spans.map((span) => span.chunkId), ...parentIds]);
  const items: ContextItem[] = [];
  const kept: Span[] = [];
  const included = new Set<string>();
  let used = 0;
  let dropped = 0;
  for (const span of spans) {
    const meta = catalog.get(span.chunkId);
    if (!meta) continue;
    const shown = spanBody(meta, bodies.get(span.chunkId), span);
    // a span too large for what is left, whatever its exact count, is not counted (nor its parents)
    const title = titleOf(meta, 'evidence', span.startLine, span.endLine);
    if (shown.kind === 'numbered' && used + evidenceTokensAtLeast(title, shown) > budget) {
      dropped++;
      continue;
    }
    const pending: ContextItem[] = [];
    for (const parentId of parentsOf(catalog, span.chunkId)) {
      if (included.has(parentId)) continue;
      const parent = catalog.get(parentId);
      const body = bodies.get(parentId);
      if (parent && body?.text)
        pending.push(item(parent, 'parent', parent.startLine, parent.endLine, headerBody(body)));
    }
    const evidence = item(meta, 'evidence', span.startLine, span.endLine, shown);
    const cost = pending.reduce((sum, entry) => sum + entry.tokens, evidence.tokens);
    if (used + cost > budget) {
      dropped++;
      continue;
    }
    for (const entry of pending) included.add(entry.chunkId);
    items.push(...pending, evidence);
    kept.push(span);
    used += cost;
  }
  log.info('context_expansion', {
    chunks_before_expansion: spans.length,
    chunks_after_expansion: spans.length + parentIds.length,
    chunks_after_dedup: items.length,
    estimated_context_tokens: used,
    budget,
    dropped_spans: dropped,
  });
  return { items, spans: kept, tokens: used, budget, droppedSpans: dropped };
}

/**
 * What an item shows: plain text (with its tokens when the store keeps them), or a chunk's code
 * lines numbered to `width` digits, with the counts the store keeps of the chunk's text.
 */
type ItemBody =
  | { readonly kind: 'text'; readonly text: string; readonly tokens: number | null }
  | {
      readonly kind: 'numbered';
      readonly lines: readonly ChunkCodeLine[];
      readonly width: number;
      readonly counted: CountedText;
    };

/** The numbered lines of a span; directories and files without code show their summary. */
function spanBody(meta: ChunkMeta, body: CountedText | undefined, span: Span): ItemBody {
  if (!body?.text) return { kind: 'text', text: '', tokens: null };
  if (meta.level === 'directory') return { kind: 'text', text: body.text, tokens: null };
  const lines = codeLines(meta, body.text).filter(
    (line) => line.line >= span.startLine && line.line <= span.endLine,
  );
  if (!lines.length) return headerBody(body);
  return { kind: 'numbered', lines, width: String(span.endLine).length, counted: body };
}

/** A text's first lines, with their tokens as the store keeps them. */
function headerBody(body: CountedText): ItemBody {
  return { kind: 'text', text: headerOf(body.text), tokens: body.headerTokens };
}

/** Code lines as models read and cite them: `number | text`, the numbers right-aligned to `width` digits. */
export function numberedLines(lines: readonly CodeLine[], width: number): string {
  return lines.map((line) => `${String(line.line).padStart(width)} | ${line.text}`).join('\n');
}

/**
 * How many of `lineCount` lines, which came to `tokens`, to keep so they fit `budget`: in
 * proportion, one less to make room for the marker, and never fewer than `minimum`.
 */
export function linesToKeep(
  lineCount: number,
  tokens: number,
  budget: number,
  minimum: number,
): number {
  return Math.max(minimum, Math.floor((lineCount * budget) / tokens) - 1);
}

/** The marker after code cut short, so the model knows there is more it did not see. */
export function linesNotShown(omitted: number): string {
  return `… (${omitted} more lines not shown)`;
}

/**
 * The fewest tokens an evidence item of numbered `lines` under `title` can come to, known from its
 * size without counting it: the title takes one at least, and each line three (its number, the
 * ` |` after it, its text). An item is cut to ITEM_CAP only when it has more UTF-8 bytes than
 * that (no token is shorter than a byte); then each line it keeps still takes two.
 */
export function evidenceTokensAtLeast(
  title: string,
  { lines, width }: { readonly lines: readonly CodeLine[]; readonly width: number },
): number {
  const whole = 1 + 3 * lines.length;
  // `${title}\n`, then `${number} | ${text}\n` per line, the number padded to `width` digits
  let bytes = Buffer.byteLength(title) + 1;
  for (const line of lines)
    bytes += Math.max(width, String(line.line).length) + 4 + Buffer.byteLength(line.text);
  if (bytes <= ITEM_CAP) return whole;
  const kept = Math.min(lines.length, linesToKeep(lines.length, bytes, ITEM_CAP, 3));
  return Math.min(whole, 1 + 2 * kept);
}

/** An item's heading: where its lines are and what they are. */
function titleOf(
  meta: ChunkMeta,
  role: ContextItem['role'],
  startLine: number,
  endLine: number,
): string {
  return `### ${meta.filePath ?? `${meta.directoryPath}/`}${meta.level === 'directory' ? '' : `:${startLine}-${endLine}`} (${meta.level}${meta.className || meta.functionName ? ` ${[meta.className, meta.functionName].filter(Boolean).join('.')}` : ''}${role === 'parent' ? ', surroundings' : ''})`;
}

function item(
  meta: ChunkMeta,
  role: ContextItem['role'],
  startLine: number,
  endLine: number,
  shown: ItemBody,
): ContextItem {
  const title = titleOf(meta, role, startLine, endLine);
  const { body, tokens, truncated } =
    shown.kind === 'numbered' ? numberedBody(title, shown) : textBody(title, shown);
  return {
    chunkId: meta.id,
    path: meta.filePath ?? meta.directoryPath,
    startLine,
    endLine,
    level: meta.level,
    role,
    text: `${title}\n${body}`,
    tokens,
    truncated,
  };
}

/** What an item shows under its title, its tokens with the title's, and whether it was cut. */
interface FittedBody {
  readonly body: string;
  readonly tokens: number;
  readonly truncated: boolean;
}

/**
 * Numbered lines under `title`, cut after their first lines (with a marker) when they come to
 * more than ITEM_CAP, counted from the store's counts of the chunk's text.
 */
function numberedBody(
  title: string,
  { lines, width, counted }: Extract<ItemBody, { kind: 'numbered' }>,
): FittedBody {
  const tokens =
    storedItemTokens(title, lines, width, counted) ?? numberedTokens(title, lines, width);
  if (tokens <= ITEM_CAP) return { body: numberedLines(lines, width), tokens, truncated: false };
  const keep = linesToKeep(lines.length, tokens, ITEM_CAP, 3);
  const marker = linesNotShown(lines.length - keep);
  const shown = lines.slice(0, keep);
  return {
    body: `${numberedLines(shown, width)}\n${marker}`,
    tokens:
      storedItemTokens(title, shown, width, counted, marker) ??
      cutTokens(title, shown, width, marker),
    truncated: true,
  };
}

/** Plain text under `title`, cut after its first lines (with a marker) beyond ITEM_CAP. */
function textBody(
  title: string,
  { text, tokens: textTokens }: Extract<ItemBody, { kind: 'text' }>,
): FittedBody {
  const tokens = titledTextTokens(title, text, textTokens);
  if (tokens <= ITEM_CAP) return { body: text, tokens, truncated: false };
  const lines = text.split('\n');
  const keep = linesToKeep(lines.length, tokens, ITEM_CAP, 3);
  const body = `${lines.slice(0, keep).join('\n')}\n${linesNotShown(lines.length - keep)}`;
  return { body, tokens: itemTextTokens(`${title}\n${body}`), truncated: true };
}

/** Class, then file, then folder: outermost last, so the reader climbs from the code outwards. */
function parentsOf(catalog: ReadonlyMap<string, ChunkMeta>, chunkId: string): string[] {
  const meta = catalog.get(chunkId);
  if (!meta) return [];
  const chain: string[] = [];
  if (meta.parentClassId) chain.push(meta.parentClassId);
  const fileId = meta.level === 'file' ? null : meta.parentFileId;
  if (fileId) chain.push(fileId);
  const file = catalog.get(fileId ?? chunkId);
  if (file?.parentDirectoryId) chain.push(file.parentDirectoryId);
  return chain.filter((id) => catalog.has(id)).reverse();
}
