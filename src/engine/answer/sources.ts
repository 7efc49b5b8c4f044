import type { CodeGraph } from '../graph/code-graph';
import type { BudgetedContext, ContextItem } from '../search/context';
import type { SearchRequest, SearchResult } from '../search/pipeline';
import type { ChunkCatalog } from '../store/catalog';
import type { Result } from '../util/result';
import type { Evidence } from './model';

/**
 * What answering needs from the engine: search, the facts graph, chunk metadata and texts, and
 * files of the workspace. The engine provides it; tests can too.
 */
export interface AnswerSources {
  /** The workspace folder (absolute); every path in and out is relative to it. */
  readonly root: string;
  readonly graph: CodeGraph;
  readonly catalog: ChunkCatalog;
  search(request: SearchRequest): Promise<Result<SearchResult>>;
  chunkTexts(ids: Iterable<string>): Promise<Map<string, string>>;
}

/** The citable items of a search's context: the spans themselves (not their surroundings), with their numbered lines. */
export function citableItems(context: BudgetedContext): ContextItem[] {
  return context.items.filter((item) => item.role === 'evidence' && item.level !== 'directory');
}

/** The citable part of a search's context as evidence. */
export function evidenceOf(context: BudgetedContext): Evidence[] {
  return citableItems(context).map((item) => ({
    path: item.path,
    startLine: item.startLine,
    endLine: item.endLine,
    text: item.text,
    tokens: item.tokens,
    source: 'search' as const,
  }));
}

/** The context as the model reads it: every item (surroundings included) in order. */
export function contextText(context: BudgetedContext, extra: readonly Evidence[] = []): string {
  return [...context.items.map((item) => item.text), ...extra.map((item) => item.text)].join(
    '\n\n',
  );
}
