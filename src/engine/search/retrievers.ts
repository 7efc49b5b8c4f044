import type { Embedder } from '../embed/embedder';
import type { CodeGraph } from '../graph/code-graph';
import type { ChunkLevel, CodeFact } from '../model';
import { getLogger } from '../log/logger';
import type { LexicalIndex } from '../store/lexical';
import type { ChunkCatalog } from '../store/catalog';
import type { Tables } from '../store/tables';
import type { TextsFile } from '../store/texts';
import { indexTerms, normalizeIdentifier } from '../text/tokenize';
import { bm25Search, type Bm25Options } from './bm25';
import type { ChunkTexts } from './chunk-texts';
import { assignmentLine, codeLines, matchMessage, messageFragments, trigrams } from './evidence';
import { queryTerms, type ParsedQuery } from './preprocess';
import type { VectorScan } from './vectors';

/**
 * The retrievers: each returns chunks ranked best first, with the evidence of why, to be fused.
 * Lexical and semantic search look at the routed levels; the others follow what the question
 * points at directly: symbols it names, the errors it quotes, the files it mentions.
 */
export interface Hit {
  readonly chunkId: string;
  readonly score: number;
  /** Words for the `why` of a span: which terms, which symbol, which message. */
  readonly evidence: string;
  /** Lines inside the chunk the evidence sits on, when known (1-based file lines). */
  readonly lines?: readonly number[];
  /** For code holding a message the question quotes: the message and the line it is on. */
  readonly message?: QuotedMessage;
}

export interface QuotedMessage {
  readonly text: string;
  readonly line: number;
}

export interface RankedHits {
  readonly source:
    'lexical' | 'semantic' | 'symbol' | 'message' | 'raises' | 'path' | 'graph' | 'neighbours';
  readonly hits: readonly Hit[];
}

export interface SearchIndex {
  readonly catalog: ChunkCatalog;
  readonly lexical: LexicalIndex;
  readonly tables: Tables;
  readonly texts: TextsFile;
  readonly graph: CodeGraph;
  readonly embedder: Embedder | null;
  readonly vectors: VectorScan;
}

const log = getLogger('search.retrieve');

export function lexicalHits(
  index: SearchIndex,
  terms: readonly string[],
  levels: readonly ChunkLevel[],
  limit: number,
  weights: Bm25Options = {},
): RankedHits {
  const hits: Hit[] = [];
  for (const level of levels) {
    const found = bm25Search(index.lexical, level, terms, limit, weights);
    log.info('bm25_retrieve', {
      query_tokens: terms,
      level,
      top_k: limit,
      results_returned: found.length,
    });
    if (log.enabled('debug'))
      log.debug('bm25_top_results', {
        level,
        results: found
          .slice(0, 3)
          .map((hit) => ({ chunk_id: hit.chunkId, score: round(hit.score) })),
      });
    for (const hit of found)
      hits.push({
        chunkId: hit.chunkId,
        score: hit.score,
        evidence: `matches ${hit.matched.slice(0, 5).join(', ')}`,
      });
  }
  return { source: 'lexical', hits: sortByScore(hits) };
}

export async function semanticHits(
  index: SearchIndex,
  text: string,
  levels: readonly ChunkLevel[],
  limit: number,
): Promise<RankedHits> {
  if (!index.embedder || !text.trim()) return { source: 'semantic', hits: [] };
  const [vector] = await index.embedder.embed([text]);
  const found = await index.vectors.nearest(vector!, limit * levels.length, levels);
  log.info('semantic_retrieve', {
    query_text_length: text.length,
    level: levels,
    top_k: limit,
    results_returned: found.length,
  });
  if (log.enabled('debug'))
    log.debug('semantic_top_results', {
      results: found
        .slice(0, 3)
        .map((hit) => ({ chunk_id: hit.id, distance: round(hit.distance) })),
    });
  return {
    source: 'semantic',
    hits: found.map((hit) => ({
      chunkId: hit.id,
      score: 1 - hit.distance,
      evidence: `similar in meaning (${(1 - hit.distance).toFixed(2)})`,
    })),
  };
}

/**
 * Definitions the question names. An exact-case name match ranks first, a qualified match
 * (`Class.method`, `module.function`) above a bare one, and rarer names above common ones.
 */
export function symbolHits(
  index: Pick<SearchIndex, 'graph' | 'catalog'>,
  query: ParsedQuery,
): RankedHits {
  const hits: Hit[] = [];
  const seen = new Set<string>();
  const receivers = variableReceivers(query.extractedIdentifiers);
  for (const identifier of query.extractedIdentifiers) {
    const parts = identifier.split('.');
    const name = parts[parts.length - 1]!;
    if (receivers.has(identifier)) continue;
    const candidates = index.graph.definitionsNamed(name).filter((fact) => fact.kind !== 'module');
    const normalized = normalizeIdentifier(name);
    const loose = candidates.length ? candidates : looseMatches(index.graph, normalized);
    const rarity = 1 / Math.sqrt(Math.max(1, loose.length));
    for (const fact of loose) {
      const chunkId = fact.chunkId;
      if (!chunkId || !index.catalog.has(chunkId)) continue;
      const exactCase = fact.name === name;
      const qualified =
        parts.length > 1 &&
        fact.qualifiedName
          .toLowerCase()
          .endsWith(identifier.toLowerCase().split('.').slice(-2).join('.'));
      const score = (exactCase ? 1 : 0.6) * (qualified ? 1.5 : 1) * rarity;
      const key = `${chunkId}\u0000${fact.id}`;
      if (seen.has(key)) continue;
      seen.add(key);
      hits.push({
        chunkId,
        score,
        evidence: `defines ${fact.qualifiedName}`,
        lines: [fact.startLine],
      });
    }
  }
  return { source: 'symbol', hits: sortByScore(hits) };
}

/**
 * Lower-case names the question only uses before a dot (`app` in `@app.errorhandler`, `res` in
 * `res.sendFile()`): variables of the asker's code, whose namesakes in the codebase (a nested
 * `def app`) are rarely what is asked about. A capitalised receiver (`Session.request`) names a
 * class and counts fully.
 */
function variableReceivers(identifiers: readonly string[]): Set<string> {
  const dotted = identifiers
    .filter((identifier) => identifier.includes('.'))
    .map((identifier) => identifier.split('.'));
  const last = new Set(dotted.map((parts) => parts[parts.length - 1]!));
  return new Set(
    dotted
      .flatMap((parts) => parts.slice(0, -1))
      .filter((part) => /^[a-z_$]/.test(part) && !last.has(part)),
  );
}

const ASSIGNMENT_CANDIDATES = 20;

/**
 * Module-level names the question names (`DEFAULT_TIMEOUT`, `config`): they are no definitions
 * in the graph, so the files whose module code holds the name are read for the line assigning it.
 */
export async function assignmentHits(
  index: SearchIndex,
  query: ParsedQuery,
  texts: ChunkTexts,
): Promise<RankedHits> {
  const hits: Hit[] = [];
  for (const identifier of query.extractedIdentifiers) {
    const name = identifier.slice(identifier.lastIndexOf('.') + 1);
    if (name.length < 3) continue;
    const assigns = assignmentLine(escapeRegExp(name));
    const candidates = bm25Search(
      index.lexical,
      'file',
      indexTerms(name),
      ASSIGNMENT_CANDIDATES,
    ).map((hit) => hit.chunkId);
    for (const [chunkId, text] of await texts.get(candidates)) {
      const meta = index.catalog.get(chunkId);
      if (!meta) continue;
      const line = codeLines(meta, text).find((entry) => assigns.test(entry.text));
      if (line)
        hits.push({
          chunkId,
          score: 1,
          evidence: `assigns ${name} at line ${line.line}`,
          lines: [line.line],
        });
    }
  }
  return { source: 'symbol', hits };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `getuserbyid` finds `get_user_by_id` and `getUserById` when no definition has the exact name. */
function looseMatches(graph: CodeGraph, normalized: string): CodeFact[] {
  if (normalized.length < 4) return [];
  const found = graph.definitionsLooselyNamed(normalized).filter((fact) => fact.kind !== 'module');
  return found.length <= 8 ? found : [];
}

/** Chunks whose text must hold at least this share of a quoted message to count as its source. */
const MESSAGE_COVERAGE = 0.5;
const ANCHOR_CANDIDATES = 20;

/**
 * Where the message the question quotes comes from: code holding it (found through the message's
 * words, then checked by trigrams), ranked by how much of it they hold.
 */
export async function messageHits(
  index: SearchIndex,
  query: ParsedQuery,
  texts: ChunkTexts,
): Promise<RankedHits> {
  const anchors = query.errorAnchors;
  const hits: Hit[] = [];
  for (const message of anchors.messages) {
    const fragments = messageFragments(message).map((text) => ({
      text,
      grams: trigrams(text),
      words: [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])],
    }));
    const terms = [...new Set(fragments.flatMap((fragment) => queryTerms(fragment.text)))];
    if (!terms.length) continue;
    const candidates = new Map<string, number>();
    for (const level of ['function', 'class', 'file'] as const) {
      for (const hit of bm25Search(index.lexical, level, terms, ANCHOR_CANDIDATES))
        candidates.set(hit.chunkId, hit.score);
    }
    const bodies = await texts.get(candidates.keys());
    for (const [chunkId, text] of bodies) {
      const meta = index.catalog.get(chunkId);
      if (!meta) continue;
      // Trigram coverage needs most of a fragment's words in the text: a cheap test first.
      const lower = text.toLowerCase();
      const plausible = fragments.filter(
        (fragment) =>
          fragment.words.filter((word) => lower.includes(word)).length >=
          fragment.words.length * MESSAGE_COVERAGE,
      );
      if (!plausible.length) continue;
      const lines = codeLines(meta, text);
      const match = plausible
        .map((fragment) => matchMessage(fragment.grams, lines))
        .reduce((best, next) => (next.coverage > best.coverage ? next : best));
      if (match.coverage < MESSAGE_COVERAGE) continue;
      const quoted = shorten(message);
      hits.push({
        chunkId,
        score: match.coverage,
        evidence: `holds the message "${quoted}"`,
        lines: match.lines.slice(0, 3),
        ...(match.lines.length ? { message: { text: quoted, line: match.lines[0]! } } : {}),
      });
    }
  }
  return { source: 'message', hits: sortByScore(dedupe(hits)) };
}

/**
 * Definitions raising the exception types the question names: weaker evidence than a message,
 * since a common type is raised in many places.
 */
export function raiseHits(index: SearchIndex, query: ParsedQuery): RankedHits {
  const hits: Hit[] = [];
  for (const type of query.errorAnchors.exceptionTypes) {
    const name = type.slice(type.lastIndexOf('.') + 1);
    for (const fact of index.graph.factsRaising(name)) {
      if (!fact.chunkId || !index.catalog.has(fact.chunkId)) continue;
      hits.push({
        chunkId: fact.chunkId,
        score: 1,
        evidence: `raises ${name} (in ${fact.qualifiedName})`,
      });
    }
  }
  return { source: 'raises', hits: dedupe(hits) };
}

function dedupe(hits: Hit[]): Hit[] {
  const best = new Map<string, Hit>();
  for (const hit of hits)
    if (!best.has(hit.chunkId) || best.get(hit.chunkId)!.score < hit.score)
      best.set(hit.chunkId, hit);
  return sortByScore([...best.values()]);
}

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** Chunks of the files the question names, and of the frames of a pasted stack trace. */
export function pathHits(index: SearchIndex, query: ParsedQuery): RankedHits {
  const hits: Hit[] = [];
  // most questions name no file: the index's file list is not gathered for them
  if (!query.extractedFilePaths.length && !query.errorAnchors.frames.length)
    return { source: 'path', hits };
  const files = new Set(index.graph.files());
  for (const mentioned of query.extractedFilePaths) {
    for (const file of files) {
      if (file === mentioned || file.endsWith(`/${mentioned}`))
        hits.push({
          chunkId: `${file}::None::None::file`,
          score: 1,
          evidence: `the file ${mentioned} is named`,
        });
    }
  }
  for (const frame of query.errorAnchors.frames) {
    const file = [...files].find(
      (candidate) => frame.file === candidate || frame.file.endsWith(`/${candidate}`),
    );
    if (!file) continue;
    const containing = index.graph.innermostAt(file, frame.line);
    const chunkId = containing?.chunkId ?? `${file}::None::None::file`;
    hits.push({
      chunkId,
      score: 2,
      evidence: `the stack trace passes ${file}:${frame.line}`,
      lines: [frame.line],
    });
  }
  return { source: 'path', hits: hits.filter((hit) => index.catalog.has(hit.chunkId)) };
}

function sortByScore(hits: Hit[]): Hit[] {
  return hits.sort(
    (a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : a.chunkId > b.chunkId ? 1 : 0),
  );
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
