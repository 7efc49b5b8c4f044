import type { ChunkLevel } from '../model';
import { getLogger } from '../log/logger';
import type { ChunkMeta } from '../store/tables';
import type { ChunkTexts } from './chunk-texts';
import { codeLines, type ChunkLine, type CodeLine } from './evidence';
import type { QueryMode } from './mode-router';
import type { Span } from './spans';
import type { StoredTokenCounts } from './stored-counts';
import { Generations } from '../util/generations';
import { KeptTextCounts, TokenCounter } from './token-count';

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
const PARENT_LINES = 10;

const log = getLogger('search.context');

let counter: Promise<TokenCounter> | undefined;
/** Tokens per piece of text, kept across searches: code is made of the same few pieces. */
const pieceTokens = new KeptTextCounts(65_536, 1 << 20);
/**
 * Tokens kept across searches, each store bounded: a numbered line's number (`  12 |`, by line
 * and width) and text (` text` and its line break, by the line's own characters), and whole
 * items that are not numbered lines (a parent's first lines, a folder's summary), which the next
 * question often shows again.
 */
const numberTokens = new Generations<number, number>(100_000);
const lineTextTokens = new KeptTextCounts(65_536, 1_000_000);
const itemTokens = new Generations<string, number>(1_000_000, (text) => text.length);
/** Widths of line numbers below this are kept by line and width in one number. */
const KEPT_WIDTHS = 64;

function loadCounter(): Promise<TokenCounter> {
  counter ??= import('js-tiktoken/ranks/cl100k_base').then(
    (ranks) => new TokenCounter(ranks.default),
  );
  return counter;
}

/**
 * Counts tokens with the cl100k encoding, its ranks loaded once. The encoding first cuts text
 * into pieces by its pattern and encodes each piece on its own, so the count of a text is the sum
 * of its pieces' counts: pieces are counted once and kept, and a search only looks them up.
 */
export async function countTokens(text: string): Promise<number> {
  return countWith(await loadCounter(), text);
}

function countWith(counter: TokenCounter, text: string, pieces = pieceTokens): number {
  let total = 0;
  // special-token names are ordinary text here, as in the whole-text encoding
  const countPiece = (piece: string) => counter.countPiece(piece);
  counter.eachPiece(text, (start, end) => {
    total += pieces.count(text, start, end, countPiece);
  });
  return total;
}

/** What a context can take from a chunk's text without counting it (see `chunkTextCounter`). */
export interface ChunkTextCounts {
  /** The tokens of `headerOf` the text; undefined when they cannot stand apart from its title. */
  readonly header: number | undefined;
  /** The tokens of ` ${line}\n` for each of the text's lines (split at `\n`). */
  readonly lines: readonly number[];
}

/**
 * Counts a chunk's text as a context counts the parts it shows, ahead of any question, with its
 * own piece memo (a pass over every chunk would push out the pieces questions use). A header
 * follows its title's `)` and line break, which a piece of the pattern extends over further line
 * breaks only: a text starting with one has no header count apart from its title.
 */
export async function chunkTextCounter(): Promise<(text: string) => ChunkTextCounts> {
  const counter = await loadCounter();
  const pieces = new KeptTextCounts(65_536, 1 << 20);
  return (text) => ({
    header: /^[\r\n]/.test(text) ? undefined : countWith(counter, headerOf(text), pieces),
    lines: text.split('\n').map((line) => countWith(counter, ` ${line}\n`, pieces)),
  });
}

/** The tokens of a numbered line's number, `${String(line).padStart(width)} |`. */
function lineNumberTokens(line: number, width: number, counter: TokenCounter): number {
  const count = () => countWith(counter, `${String(line).padStart(width)} |`);
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
export async function numberedItemTokens<Line extends CodeLine>(
  title: string,
  lines: readonly Line[],
  width: number,
  stored?: StoredLineTokens<Line>,
): Promise<number> {
  const counter = await loadCounter();
  let total = countWith(counter, `${title}\n`);
  lines.forEach((line, i) => {
    total += lineNumberTokens(line.line, width, counter);
    total +=
      i + 1 < lines.length
        ? lineTokens(line, counter, stored)
        : countWith(counter, ` ${line.text}`);
  });
  return total;
}

/**
 * The tokens of `${title}\n${numberedLines(lines, width)}\n${marker}`, an item cut short, from the
 * kept line counts as numberedItemTokens takes them: every line ends in a line break here, and
 * the marker starts with neither \r nor \n, so no piece crosses into it.
 */
export async function cutItemTokens<Line extends CodeLine>(
  title: string,
  lines: readonly Line[],
  width: number,
  marker: string,
  stored?: StoredLineTokens<Line>,
): Promise<number> {
  const counter = await loadCounter();
  let total = countWith(counter, `${title}\n`) + countWith(counter, marker);
  for (const line of lines) {
    total += lineNumberTokens(line.line, width, counter);
    total += lineTokens(line, counter, stored);
  }
  return total;
}

/** The stored tokens of ` ${line.text}\n`, undefined when not stored. */
export type StoredLineTokens<Line extends CodeLine> = (line: Line) => number | undefined;

/** The tokens of ` ${line.text}\n`: stored for the chunk's line, or kept across questions. */
function lineTokens<Line extends CodeLine>(
  line: Line,
  counter: TokenCounter,
  stored?: StoredLineTokens<Line>,
): number {
  return (
    stored?.(line) ??
    lineTextTokens.count(line.text, 0, line.text.length, (text) => countWith(counter, ` ${text}\n`))
  );
}

/**
 * The tokens of `${title}\n`, which a header's count is added to: the title ends in `)`, whose
 * piece takes the line break and stops there unless the text goes on with another.
 */
async function titleTokens(title: string): Promise<number> {
  return countWith(await loadCounter(), `${title}\n`);
}

/** The tokens of a whole item's text, kept across questions. */
async function itemTextTokens(text: string): Promise<number> {
  const counter = await loadCounter();
  return itemTokens.get(text, (key) => countWith(counter, key));
}

export async function buildContext(
  spans: readonly Span[],
  catalog: ReadonlyMap<string, ChunkMeta>,
  texts: ChunkTexts,
  budget: number,
  stored?: StoredTokenCounts,
): Promise<BudgetedContext> {
  const parentIds = spans.flatMap((span) => parentsOf(catalog, span.chunkId));
  const ids = [...spans.map((span) => span.chunkId), ...parentIds];
  const reading = texts.get(ids);
  // the stored counts' records are looked up in the turn that read the texts (the reads are
  // synchronous), so a save landing while this context awaits cannot pair a text with newer counts
  const entries = new Map(ids.map((id) => [id, stored?.entryOf(id) ?? -1]));
  const bodies = await reading;
  const countsOf = (id: string): StoredEntry | undefined => {
    const entry = entries.get(id) ?? -1;
    return stored && entry >= 0 ? { stored, entry } : undefined;
  };
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
    if (shown.numbered && used + evidenceTokensAtLeast(title, shown.numbered) > budget) {
      dropped++;
      continue;
    }
    const pending: ContextItem[] = [];
    for (const parentId of parentsOf(catalog, span.chunkId)) {
      if (included.has(parentId)) continue;
      const parent = catalog.get(parentId);
      const body = bodies.get(parentId);
      if (parent && body)
        pending.push(
          await item(
            parent,
            'parent',
            parent.startLine,
            parent.endLine,
            { text: headerOf(body), header: true },
            countsOf(parentId),
          ),
        );
    }
    const evidence = await item(
      meta,
      'evidence',
      span.startLine,
      span.endLine,
      shown,
      countsOf(span.chunkId),
    );
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

/** The stored counts of the text an item shows: its record's entry among them. */
interface StoredEntry {
  readonly stored: StoredTokenCounts;
  readonly entry: number;
}

/** What an item shows: plain text (its chunk's header, or not), or code lines numbered to `width` digits. */
interface ItemBody {
  readonly text: string;
  /** Whether the text is `headerOf` the chunk's text. */
  readonly header?: boolean;
  readonly numbered?: { readonly lines: readonly ChunkLine[]; readonly width: number };
}

/** The numbered lines of a span; directories and files without code show their summary. */
function spanBody(meta: ChunkMeta, body: string | undefined, span: Span): ItemBody {
  if (!body) return { text: '' };
  if (meta.level === 'directory') return { text: body };
  const lines = codeLines(meta, body).filter(
    (line) => line.line >= span.startLine && line.line <= span.endLine,
  );
  if (!lines.length) return { text: headerOf(body), header: true };
  const width = String(span.endLine).length;
  return { text: numberedLines(lines, width), numbered: { lines, width } };
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

async function item(
  meta: ChunkMeta,
  role: ContextItem['role'],
  startLine: number,
  endLine: number,
  shown: ItemBody,
  counts: StoredEntry | undefined,
): Promise<ContextItem> {
  const title = titleOf(meta, role, startLine, endLine);
  const storedLine = counts
    ? (line: ChunkLine) => counts.stored.lineTokens(counts.entry, line.index)
    : undefined;
  const storedHeader =
    counts && shown.header ? counts.stored.headerTokens(counts.entry) : undefined;
  let body = shown.text;
  let tokens = shown.numbered
    ? await numberedItemTokens(title, shown.numbered.lines, shown.numbered.width, storedLine)
    : storedHeader !== undefined
      ? (await titleTokens(title)) + storedHeader
      : await itemTextTokens(`${title}\n${body}`);
  let truncated = false;
  if (tokens > ITEM_CAP) {
    const lines = body.split('\n');
    const keep = linesToKeep(lines.length, tokens, ITEM_CAP, 3);
    const marker = linesNotShown(lines.length - keep);
    body = `${lines.slice(0, keep).join('\n')}\n${marker}`;
    // numbered lines are counted from the kept line counts: a long item is rarely shown twice
    tokens = shown.numbered
      ? await cutItemTokens(
          title,
          shown.numbered.lines.slice(0, keep),
          shown.numbered.width,
          marker,
          storedLine,
        )
      : await itemTextTokens(`${title}\n${body}`);
    truncated = true;
  }
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

/** A parent's first lines: a class's header and docstring, a file's imports, a folder's summary. */
export function headerOf(body: string): string {
  // the end of the first PARENT_LINES lines, found without splitting a long file's whole text
  let end = -1;
  for (let line = 0; line < PARENT_LINES; line++) {
    end = body.indexOf('\n', end + 1);
    if (end < 0) return body;
  }
  return `${body.slice(0, end)}\n…`;
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
