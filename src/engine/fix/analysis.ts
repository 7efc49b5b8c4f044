import type { CodeGraph } from '../graph/code-graph';
import { elapsedMs, getLogger } from '../log/logger';
import type { SearchRequest, SearchResult } from '../search/pipeline';
import type { Span } from '../search/spans';
import type { ChunkMeta } from '../store/tables';
import { ok, type Result } from '../util/result';
import type { AnalysisChunk, DiagnosticInput, FixScope, IssueAnalysis, IssueInput } from './model';

/**
 * Issue analysis: the identifiers of the issue that the index defines, the title and those
 * identifiers searched through the same pipeline as every question (thinking mode: all the
 * levels the router allows), function hits weighted double because bugs live in function bodies,
 * the top ten with the chain of definitions each sits in. A diagnostic's own place comes first.
 */

export interface AnalysisIndex {
  readonly graph: CodeGraph;
  readonly catalog: ReadonlyMap<string, ChunkMeta>;
  search(request: SearchRequest): Promise<Result<SearchResult>>;
}

export const ANALYSIS_TOP_K = 10;
const FUNCTION_WEIGHT = 2;
const IDENTIFIER = /\b[A-Za-z_][A-Za-z0-9_]{2,}\b/g;
/** The issue body is searched too, but only its start: a pasted log must not drown the title. */
const BODY_QUERY_CHARACTERS = 600;

const TEST_FILE =
  /(^|\/)(tests?|__tests__|spec)\/|(^|\/)test_[^/]*$|[._-](test|spec)\.[^/]+$|_test\.[^/]+$/;

const log = getLogger('fix.analysis');

export function candidateIdentifiers(text: string): string[] {
  return [...new Set(text.match(IDENTIFIER) ?? [])];
}

/** Names the index defines as a function, method or class (never a bare module). */
export function definedIdentifiers(graph: CodeGraph, candidates: readonly string[]): string[] {
  return candidates.filter((name) =>
    graph.definitionsNamed(name).some((fact) => fact.kind !== 'module'),
  );
}

export async function analyzeIssue(
  index: AnalysisIndex,
  issue: IssueInput,
  diagnostic?: DiagnosticInput,
): Promise<Result<IssueAnalysis>> {
  const started = performance.now();
  log.info('issue_analysis_started', {
    issue_number: issue.number,
    issue_title_length: issue.title.length,
    issue_body_length: issue.body.length,
  });
  const raw = candidateIdentifiers(`${issue.title}\n${issue.body}\n${diagnostic?.context ?? ''}`);
  const identifiers = definedIdentifiers(index.graph, raw);
  log.info('identifiers_extracted', {
    raw_identifiers: raw.length,
    matched_in_index: identifiers.length,
    matched_identifiers: identifiers,
  });
  const query = [
    issue.title,
    diagnostic?.message ?? '',
    issue.body.slice(0, BODY_QUERY_CHARACTERS),
    identifiers.join(' '),
  ]
    .map((part) => part.trim())
    .filter(Boolean)
    .join(' ');
  const searched = await index.search({
    query,
    mode: 'thinking',
    ...(diagnostic
      ? {
          attachment: {
            path: diagnostic.path,
            content: diagnostic.context,
            startLine: diagnostic.contextStartLine,
          },
        }
      : {}),
  });
  if (!searched.ok) return searched;
  const ranked = rankSpans(searched.value.spans).map((span) => chunkOf(index.catalog, span));
  // the diagnostic's own place ranks above every search hit
  const lead = Math.max(0, ...ranked.map((chunk) => chunk.score)) + 1;
  const first = diagnostic ? diagnosticEvidence(index, diagnostic, lead) : null;
  const chunks = dedupe([...(first ? [first] : []), ...ranked]).slice(0, ANALYSIS_TOP_K);
  const relevantFiles = [...new Set(chunks.map((chunk) => chunk.path))];
  const analysis: IssueAnalysis = {
    relevantFiles,
    relevantChunks: chunks,
    identifiers,
    suggestedFixScope: fixScope(chunks, !!diagnostic),
    query,
  };
  log.info('issue_analysis_completed', {
    issue_number: issue.number,
    relevant_files: relevantFiles.length,
    relevant_chunks: chunks.length,
    suggested_fix_scope: analysis.suggestedFixScope,
    duration_ms: elapsedMs(started),
  });
  return ok(analysis);
}

/** Function spans count double, then the best first. */
function rankSpans(spans: readonly Span[]): Span[] {
  const weight = (span: Span) => span.score * (span.level === 'function' ? FUNCTION_WEIGHT : 1);
  return [...spans].sort((a, b) => weight(b) - weight(a));
}

function chunkOf(catalog: ReadonlyMap<string, ChunkMeta>, span: Span): AnalysisChunk {
  const meta = catalog.get(span.chunkId);
  return {
    path: span.path,
    startLine: span.startLine,
    endLine: span.endLine,
    level: span.level,
    chunkId: span.chunkId,
    name: meta ? nameOf(meta) : span.path,
    parents: meta ? parentChain(catalog, meta) : [],
    score: span.score * (span.level === 'function' ? FUNCTION_WEIGHT : 1),
    why: span.why,
  };
}

function nameOf(meta: ChunkMeta): string {
  if (meta.level === 'function')
    return meta.className ? `${meta.className}.${meta.functionName}` : (meta.functionName ?? '');
  if (meta.level === 'class') return meta.className ?? '';
  return meta.filePath ?? meta.directoryPath;
}

/** The folder, file and class a chunk sits in, outermost first. */
function parentChain(catalog: ReadonlyMap<string, ChunkMeta>, meta: ChunkMeta): string[] {
  const chain: string[] = [];
  for (const id of [meta.parentDirectoryId, meta.parentFileId, meta.parentClassId]) {
    const parent = id ? catalog.get(id) : undefined;
    if (parent) chain.push(parent.level === 'class' ? `class ${nameOf(parent)}` : nameOf(parent));
  }
  return chain;
}

/** The definition holding the diagnostic's lines, or the lines themselves when none does. */
function diagnosticEvidence(
  index: AnalysisIndex,
  diagnostic: DiagnosticInput,
  score: number,
): AnalysisChunk {
  const fact = index.graph.innermostAt(diagnostic.path, diagnostic.startLine, diagnostic.endLine);
  const meta = fact?.chunkId ? index.catalog.get(fact.chunkId) : undefined;
  const why = `the diagnostic: ${diagnostic.message}`;
  if (fact && meta)
    return {
      path: diagnostic.path,
      startLine: fact.startLine,
      endLine: fact.endLine,
      level: meta.level,
      chunkId: meta.id,
      name: fact.qualifiedName,
      parents: parentChain(index.catalog, meta),
      score,
      why,
    };
  const contextLines = diagnostic.context.split('\n').length;
  return {
    path: diagnostic.path,
    startLine: diagnostic.contextStartLine,
    endLine: diagnostic.contextStartLine + contextLines - 1,
    level: 'file',
    chunkId: `diagnostic:${diagnostic.path}:${diagnostic.startLine}`,
    name: diagnostic.path,
    parents: [],
    score,
    why,
  };
}

/** One place per chunk: the first, best-ranked one is kept. */
function dedupe(chunks: readonly AnalysisChunk[]): AnalysisChunk[] {
  const seen = new Set<string>();
  return chunks.filter((chunk) => !seen.has(chunk.chunkId) && !!seen.add(chunk.chunkId));
}

/**
 * One function when the evidence is led by a function (or a diagnostic sits in one) and the
 * strongest hits stay in its file; several files when they spread; unknown with no evidence.
 */
function fixScope(chunks: readonly AnalysisChunk[], fromDiagnostic: boolean): FixScope {
  const lead = chunks[0];
  if (!lead) return 'unknown';
  if (fromDiagnostic && lead.level === 'function') return 'single_function';
  // tests that show the bug are evidence, not places a fix spreads to
  const strongest = chunks.filter((chunk) => !TEST_FILE.test(chunk.path)).slice(0, 3);
  const files = new Set(strongest.map((chunk) => chunk.path));
  if (files.size > 1) return 'multiple_files';
  return lead.level === 'function' ? 'single_function' : 'unknown';
}
