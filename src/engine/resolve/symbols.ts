import type { CodeGraph, PossibleCall, ResolvedCall } from '../graph/code-graph';
import { MODULE_QUALIFIED_NAME, type CodeFact, type SymbolKind } from '../model';
import { languageById } from '../lang/registry';
import { fail, ok, type Result } from '../util/result';
import type { CallerCounts } from './caller-summary';

export { callerSummary, type CallerCounts } from './caller-summary';

/**
 * Navigation over the facts graph: where a symbol is defined, who references or calls it, what
 * it calls, and the multi-hop tree of its callers.
 */
export type SymbolAction = 'definition' | 'references' | 'callers' | 'callees';
export const SYMBOL_ACTIONS: readonly SymbolAction[] = [
  'definition',
  'references',
  'callers',
  'callees',
];

export interface SymbolLocation {
  readonly id: string;
  readonly name: string;
  readonly qualifiedName: string;
  readonly kind: SymbolKind;
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly signature: string;
  readonly docstring: string | null;
}

export interface Reference {
  readonly path: string;
  readonly line: number;
  /** `value`: the function named as a value (a callback, a handler, a decorator), not called. */
  readonly kind: 'call' | 'import' | 'base' | 'value';
  /** The definition the reference sits in (the module for top-level code). */
  readonly from: SymbolLocation | null;
}

/** A call naming the symbol that resolution could not settle, with the reason. */
export interface PossibleCaller {
  readonly path: string;
  readonly line: number;
  readonly from: SymbolLocation | null;
  readonly reason: string;
}

export interface SymbolResult {
  readonly symbol: SymbolLocation;
  readonly counts?: CallerCounts;
  readonly references?: readonly Reference[];
  readonly callers?: readonly Reference[];
  /** With `callers`: places that pass the symbol as a value. */
  readonly valueReferences?: readonly Reference[];
  /** With `callers` and `references`: calls naming the symbol whose receiver could not be resolved. */
  readonly possible?: readonly PossibleCaller[];
  readonly callees?: readonly { readonly target: SymbolLocation; readonly line: number }[];
}

export interface CallerTreeNode {
  readonly symbol: SymbolLocation;
  /** Where this node's symbol calls its parent in the tree (empty for the root). */
  readonly callSites: readonly { readonly path: string; readonly line: number }[];
  readonly callers: readonly CallerTreeNode[];
  /** Why the tree stops here, when it stops before running out of callers. */
  readonly truncated?: 'cycle' | 'depth';
  /** For a node whose callers are listed: every count, and the groups beside the resolved callers. */
  readonly counts?: CallerCounts;
  readonly valueReferences?: readonly Reference[];
  readonly possible?: readonly PossibleCaller[];
}

/** The counts every surface shows (lens, tree, CLI, the agent's tools), from one place. */
export function callerCounts(graph: CodeGraph, id: string): CallerCounts {
  return {
    callers: graph.callers(id).length,
    references: graph.references(id).length,
    possible: graph.possibleCallers(id).length,
  };
}

export const MAX_TRACE_DEPTH = 8;

/** A `path:line` query: the definition at (or around) that line of that file. */
const LOCATION_QUERY = /^(.+):(\d+)$/;

/** Definitions matching `query`: `name`, `Class.method`, `path:line`, or a fact id `path::name`. */
export function findDefinitions(graph: CodeGraph, query: string): CodeFact[] {
  const trimmed = query.trim();
  if (!trimmed) return [];
  const direct = graph.fact(trimmed);
  if (direct) return [direct];
  const location = LOCATION_QUERY.exec(trimmed);
  if (location) {
    const [, file, line] = location;
    const exact = graph
      .factsInFile(file!)
      .filter((fact) => fact.kind !== 'module' && fact.startLine === Number(line));
    if (exact.length) return exact;
    const containing = graph.innermostAt(file!, Number(line));
    return containing ? [containing] : [];
  }
  return graph
    .definitionsNamed(trimmed)
    .sort((a, b) => a.path.localeCompare(b.path) || a.startLine - b.startLine);
}

export function resolveSymbol(
  graph: CodeGraph,
  query: string,
  action: SymbolAction,
): Result<SymbolResult[]> {
  if (!query.trim())
    return fail(
      'invalid_input',
      'Give a symbol name, such as `create_user` or `UserService.create`.',
    );
  const definitions = findDefinitions(graph, query);
  if (!definitions.length) return notFound(query);
  return ok(
    definitions.map((fact): SymbolResult => {
      const symbol = location(fact);
      switch (action) {
        case 'definition':
          return { symbol };
        case 'callers':
          return {
            symbol,
            counts: callerCounts(graph, fact.id),
            callers: graph.callers(fact.id).map((call) => callReference(graph, call)),
            valueReferences: graph.references(fact.id).map((call) => callReference(graph, call)),
            possible: possibleCallers(graph, fact.id),
          };
        case 'callees':
          return {
            symbol,
            callees: graph.callees(fact.id).map((call) => ({
              target: location(graph.fact(call.targetId)!),
              line: call.site.line,
            })),
          };
        case 'references':
          return {
            symbol,
            counts: callerCounts(graph, fact.id),
            references: references(graph, fact),
            possible: possibleCallers(graph, fact.id),
          };
      }
    }),
  );
}

/** The callers of `query`, then their callers, up to `depth` hops; cycles are cut and marked. */
export function traceCallers(
  graph: CodeGraph,
  query: string,
  depth: number,
): Result<CallerTreeNode[]> {
  const definitions = findDefinitions(graph, query);
  if (!definitions.length) return notFound(query);
  const limit = Math.max(1, Math.min(MAX_TRACE_DEPTH, Math.floor(depth)));
  return ok(definitions.map((fact) => callerNode(graph, fact, [], limit, new Set([fact.id]))));
}

/** A location query is not a name, and is reported as the place it is. */
function notFound(query: string): Result<never> {
  const trimmed = query.trim();
  return fail(
    'not_found',
    LOCATION_QUERY.test(trimmed)
      ? `No definition at ${trimmed} is indexed.`
      : `No definition named "${query}" is indexed.`,
  );
}

function callerNode(
  graph: CodeGraph,
  fact: CodeFact,
  callSites: CallerTreeNode['callSites'],
  remaining: number,
  path: Set<string>,
): CallerTreeNode {
  const calls = graph.callers(fact.id);
  if (remaining === 0)
    return {
      symbol: location(fact),
      callSites,
      callers: [],
      ...(calls.length ? { truncated: 'depth' as const } : {}),
    };
  const valueReferences = graph.references(fact.id).map((call) => callReference(graph, call));
  const possible = possibleCallers(graph, fact.id);
  const counts = {
    callers: calls.length,
    references: valueReferences.length,
    possible: possible.length,
  };
  const byCaller = new Map<string, { path: string; line: number }[]>();
  for (const call of calls) {
    const sites = byCaller.get(call.callerId) ?? [];
    sites.push({ path: graph.fact(call.callerId)!.path, line: call.site.line });
    byCaller.set(call.callerId, sites);
  }
  const callers: CallerTreeNode[] = [];
  for (const [callerId, sites] of byCaller) {
    const caller = graph.fact(callerId)!;
    if (path.has(callerId)) {
      callers.push({ symbol: location(caller), callSites: sites, callers: [], truncated: 'cycle' });
      continue;
    }
    path.add(callerId);
    callers.push(callerNode(graph, caller, sites, remaining - 1, path));
    path.delete(callerId);
  }
  callers.sort(
    (a, b) => a.symbol.path.localeCompare(b.symbol.path) || a.symbol.startLine - b.symbol.startLine,
  );
  return { symbol: location(fact), callSites, callers, counts, valueReferences, possible };
}

function possibleCallers(graph: CodeGraph, id: string): PossibleCaller[] {
  return graph
    .possibleCallers(id)
    .map((call: PossibleCall) => {
      const caller = graph.fact(call.callerId)!;
      return {
        path: caller.path,
        line: call.site.line,
        from: caller.kind === 'module' ? null : location(caller),
        reason: call.reason,
      };
    })
    .sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line);
}

function references(graph: CodeGraph, fact: CodeFact): Reference[] {
  const out: Reference[] = [...graph.callers(fact.id), ...graph.references(fact.id)].map((call) =>
    callReference(graph, call),
  );
  for (const file of graph.files()) {
    const module = graph.moduleFact(file);
    if (!module) continue;
    const spec = languageById(module.language);
    for (const scope of graph.factsInFile(file)) {
      for (const binding of scope.imports) {
        if (binding.imported !== fact.name && binding.local !== fact.name) continue;
        if (!graph.resolveModule(file, spec, binding.module).includes(fact.path)) continue;
        out.push({
          path: file,
          line: binding.line,
          kind: 'import',
          from: scope.qualifiedName === MODULE_QUALIFIED_NAME ? null : location(scope),
        });
      }
      if (
        scope.bases.some(
          (base) =>
            base
              .replace(/[[<(][\s\S]*$/, '')
              .split('.')
              .pop() === fact.name,
        ) &&
        fact.kind === 'class'
      ) {
        out.push({ path: file, line: scope.startLine, kind: 'base', from: location(scope) });
      }
    }
  }
  return out.sort((a, b) => a.path.localeCompare(b.path) || a.line - b.line);
}

function callReference(graph: CodeGraph, call: ResolvedCall): Reference {
  const caller = graph.fact(call.callerId)!;
  return {
    path: caller.path,
    line: call.site.line,
    kind: call.site.kind === 'reference' ? 'value' : 'call',
    from: location(caller),
  };
}

export function location(fact: CodeFact): SymbolLocation {
  return {
    id: fact.id,
    name: fact.name,
    qualifiedName: fact.qualifiedName,
    kind: fact.kind,
    path: fact.path,
    startLine: fact.startLine,
    endLine: fact.endLine,
    signature: fact.signature,
    docstring: fact.docstring,
  };
}
