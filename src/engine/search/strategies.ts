import { callSites, type CodeGraph } from '../graph/code-graph';
import type { CallSite, CodeFact } from '../model';
import type { ChunkMeta } from '../store/tables';
import { assignmentLine, codeLines } from './evidence';
import { getLogger } from '../log/logger';
import { splitIdentifier } from '../text/tokenize';
import type { QueryMode } from './mode-router';
import type { ParsedQuery } from './preprocess';
import type { Hit, RankedHits, SearchIndex } from './retrievers';

/**
 * Mode strategies over the facts graph, each with its order of evidence:
 *   diagnostic  — error sites, then their callers walked back 2–3 hops, mutating callers first;
 *   exploratory — entry points, then callees walked forward 3–4 hops, as a flow tree;
 *   analytical  — call sites and mutations of the names asked about, hot spots, cycles, and a
 *                 module dependency diagram;
 *   conceptual  — summaries first (the fusion weights do that; no graph walk).
 * Each returns hits whose `lines` are the call sites that tie them to the walk, so the spans show
 * the very lines where control passes.
 */
export interface StrategyResult {
  readonly hits: RankedHits;
  /** An indented call tree for exploratory questions. */
  readonly flow: string | null;
  /** A mermaid dependency diagram for analytical questions. */
  readonly diagram: string | null;
  /** Structural findings for analytical questions (hot spots, god functions, cycles). */
  readonly findings: readonly string[];
}

export interface StrategyInput {
  readonly index: SearchIndex;
  readonly query: ParsedQuery;
  readonly mode: QueryMode;
  readonly scope: string | null;
  /** The best chunks so far, best first. */
  readonly seeds: readonly string[];
  /** Error sites found by the anchor retriever (diagnostic). */
  readonly errorSites: readonly Hit[];
  /** Query terms, for choosing which callees matter. */
  readonly terms: readonly string[];
  /** Analyses of the whole graph, kept between questions until the index changes. */
  readonly structure: StructureCache;
}

/**
 * Hot spots, god functions, cycles and the dependency diagram depend on the graph and a scope,
 * not on the question: they are computed once per scope and forgotten when the index changes.
 */
export class StructureCache {
  private readonly byScope = new Map<
    string,
    { findings: { hits: Hit[]; notes: string[] }; diagram: string | null }
  >();

  get(
    graph: CodeGraph,
    scope: string | null,
  ): { findings: { hits: Hit[]; notes: string[] }; diagram: string | null } {
    const key = scope ?? '';
    let entry = this.byScope.get(key);
    if (!entry) {
      entry = { findings: structuralFindings(graph, scope), diagram: moduleDiagram(graph, scope) };
      this.byScope.set(key, entry);
    }
    return entry;
  }

  clear(): void {
    this.byScope.clear();
  }
}

const CALLER_HOPS = 3;
const CALLERS_PER_HOP = 5;
const CALLEE_HOPS = 4;
const CALLEES_PER_HOP = 8;
const ENTRY_POINTS = 3;
const HOT_SPOT_FAN_IN = 20;
const GOD_FUNCTION_FAN_OUT = 15;

/**
 * Questions that ask for the repository-wide report itself. Words about design in general
 * ("architecture", "design") do not: hot spots would stand in for an answer.
 */
const FINDINGS_CUE =
  /\b(hot ?spots?|god (functions?|class(es)?|objects?)|cycles?|circular|fan[- ]?(in|out)|most called)\b/i;

/**
 * Words that ask to follow the calls step by step. "flow", "pipeline" or "lifecycle" route a
 * question to the exploratory mode as well, but they name a topic as often as a walk; then the
 * walk has no entry point the question chose.
 */
const FOLLOW_CUE =
  /\b(trac(e|es|ing)|walk (me )?through|step by step|call (path|chain)|what happens (when|inside|after|before|if|at|on|during|once)|ends? up)\b/i;

const HIERARCHY_CUE =
  /\b(subclass(es|ed)?|overrid(e|es|den|ing)|inherit(s|ed|ing)?|extends|derived|descendants?)\b/i;

const log = getLogger('search.strategy');

export function runStrategy(input: StrategyInput): StrategyResult {
  const empty: StrategyResult = {
    hits: { source: 'graph', hits: [] },
    flow: null,
    diagram: null,
    findings: [],
  };
  switch (input.mode) {
    case 'diagnostic':
      return { ...empty, hits: { source: 'graph', hits: diagnostic(input) } };
    case 'exploratory':
      return asksToFollow(input) ? exploratory(input) : empty;
    case 'analytical':
      return analytical(input);
    case 'conceptual':
      return empty;
  }
}

/** How many of the best function hits lend weight to their neighbours in the calls graph. */
const NEIGHBOUR_SEEDS = 5;
/** A call the resolver could not tie to one definition is linked by name to at most this many. */
const NAME_LINK_DEFINITIONS = 4;
/** A name called from more places than this is too common to say anything about one of them. */
const NAME_LINK_CALLERS = 8;
/**
 * A neighbour the retrievers found as well is corroborated: up to this many times its weight for
 * a place at the top of their ranking, less further down, none past CORROBORATION_DEPTH.
 */
const CORROBORATION = 10;
const CORROBORATION_DEPTH = 200;

/**
 * The direct callers and callees of the best function hits. The code that answers a question is
 * rarely one function: the caller that hands over control and the callee that does the work are
 * the next lines a reader follows, and so are the module constants it reads (its file cited at
 * the line assigning them). Calls the resolver could not tie to a definition
 * (`self.session_interface.save_session()`) link by name when the name is distinctive, as a
 * reader's search for it would. A neighbour of several strong hits outranks one of a single weak
 * hit, and a neighbour the retrievers ranked as well (`ranking`, best first) outranks both; a
 * caller points at the line of its call.
 */
export function neighbourHits(
  index: Pick<SearchIndex, 'graph' | 'catalog'>,
  ranking: readonly string[],
  /** The code of the best hits and of their files, for the names they use without a call. */
  texts: ReadonlyMap<string, string> = new Map(),
): RankedHits {
  const { graph, catalog } = index;
  const functions = neighbourSeeds(catalog, ranking);
  const hits: Hit[] = [];
  // a function nested in another shares its chunk, so a nested caller is cited by the one holding it
  const add = (
    fact: CodeFact | undefined,
    from: string,
    score: number,
    evidence: string,
    line?: number,
  ) => {
    if (fact?.chunkId && fact.chunkId !== from && fact.kind !== 'class')
      hits.push({ chunkId: fact.chunkId, score, evidence, ...(line ? { lines: [line] } : {}) });
  };
  functions.forEach((chunkId, rank) => {
    const weight = 1 / (rank + 1);
    // with the functions nested in it, whose calls are made from its code too
    const facts = graph
      .factsInFile(catalog.get(chunkId)!.filePath!)
      .filter(
        (fact) => fact.chunkId === chunkId && fact.kind !== 'class' && fact.kind !== 'module',
      );
    // a method's class is built somewhere: where its error is raised, where its helper is made
    const owners = new Set(
      facts
        .map((fact) => fact.parent && graph.factByQualifiedName(fact.path, fact.parent))
        .filter((owner): owner is CodeFact => !!owner && owner.kind === 'class'),
    );
    for (const owner of owners)
      for (const call of graph.callers(owner.id))
        add(
          graph.fact(call.callerId),
          chunkId,
          weight / 2,
          `creates ${owner.qualifiedName}`,
          call.site.line,
        );
    for (const member of memberReferences(graph, facts, texts.get(chunkId)))
      add(member, chunkId, weight, `used by ${facts[0]!.qualifiedName} (self.${member.name})`);
    const file = catalog.get(catalog.get(chunkId)!.parentFileId ?? '');
    for (const { name, line } of file
      ? constantsUsed(file, texts.get(file.id), texts.get(chunkId))
      : []) {
      hits.push({
        chunkId: file!.id,
        score: weight,
        evidence: `assigns ${name}, used by ${facts[0]?.qualifiedName ?? 'it'}`,
        lines: [line],
      });
    }
    for (const fact of facts) {
      for (const call of graph.callees(fact.id))
        add(graph.fact(call.targetId), chunkId, weight, `called from ${fact.qualifiedName}`);
      for (const site of unresolvedCalls(graph, fact).filter(
        (call) => !graph.isBuiltinMethod(call.name),
      )) {
        const targets = distinctiveDefinitions(graph, site.name);
        for (const target of targets)
          add(
            target,
            chunkId,
            weight / targets.length,
            `may be called from ${fact.qualifiedName} (by name)`,
          );
      }
      for (const call of graph.callers(fact.id))
        add(
          graph.fact(call.callerId),
          chunkId,
          weight,
          `calls ${fact.qualifiedName}`,
          call.site.line,
        );
      const namesakes = distinctiveDefinitions(graph, fact.name).length;
      const sites = namesakes ? unresolvedSitesCalling(graph, fact.name, NAME_LINK_CALLERS) : null;
      for (const { caller, line } of sites ?? [])
        add(caller, chunkId, weight / namesakes, `may call ${fact.qualifiedName} (by name)`, line);
    }
  });
  const place = new Map(ranking.slice(0, CORROBORATION_DEPTH).map((id, rank) => [id, rank]));
  const corroborated = (hit: Hit) => {
    const rank = place.get(hit.chunkId);
    return rank === undefined
      ? hit
      : { ...hit, score: hit.score * (1 + CORROBORATION * (1 - rank / CORROBORATION_DEPTH)) };
  };
  return {
    source: 'neighbours',
    hits: mergeHits(hits)
      .map(corroborated)
      .sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1)),
  };
}

/**
 * Methods of the hit's own class that its code names without calling them: properties and
 * getters (`self.apparent_encoding`), methods handed on as callbacks (`this.onError`).
 */
function memberReferences(
  graph: CodeGraph,
  facts: readonly CodeFact[],
  text: string | undefined,
): CodeFact[] {
  const method = facts.find((fact) => fact.className);
  if (!text || !method) return [];
  const members = new Map(
    graph
      .factsInFile(method.path)
      .filter((fact) => fact.className === method.className && fact.kind !== 'class')
      .map((fact) => [fact.name, fact]),
  );
  const called = new Set(facts.flatMap((fact) => callSites(fact).map((call) => call.name)));
  const named = new Set<CodeFact>();
  for (const match of text.matchAll(/\b(?:self|this)\.([A-Za-z_$][\w$]*)/g)) {
    const member = members.get(match[1]!);
    if (member && !called.has(member.name) && !facts.includes(member)) named.add(member);
  }
  return [...named];
}

const CONSTANT_ASSIGNMENT = assignmentLine('([A-Z][A-Z0-9_]{2,})');

/**
 * Module-level constants (`DEFAULT_POOLSIZE = 10`) a hit's code uses, with the lines of its file
 * that assign them: the defaults and limits a question about behaviour often turns on.
 */
function constantsUsed(
  file: ChunkMeta,
  fileText: string | undefined,
  code: string | undefined,
): { name: string; line: number }[] {
  if (!fileText || !code) return [];
  const used = new Set(code.match(/\b[A-Z][A-Z0-9_]{2,}\b/g) ?? []);
  if (!used.size) return [];
  const out: { name: string; line: number }[] = [];
  for (const { line, text } of codeLines(file, fileText)) {
    const name = CONSTANT_ASSIGNMENT.exec(text)?.[1];
    if (name && used.has(name)) out.push({ name, line });
  }
  return out;
}

/**
 * The method calls naming `name` that the resolver tied to no definition, with their callers;
 * null once there are more than `limit` (too common a name to say anything), without reading on.
 */
function unresolvedSitesCalling(
  graph: CodeGraph,
  name: string,
  limit: number,
): { caller: CodeFact; line: number }[] | null {
  const sites: { caller: CodeFact; line: number }[] = [];
  for (const caller of graph.factsCalling(name)) {
    const named = callSites(caller).filter((site) => site.name === name && site.receiver);
    if (!named.length) continue;
    const resolved = new Set(
      graph
        .callees(caller.id)
        .filter((call) => call.site.name === name)
        .map((call) => call.site.line),
    );
    for (const site of named) if (!resolved.has(site.line)) sites.push({ caller, line: site.line });
    if (sites.length > limit) return null;
  }
  return sites;
}

/** Method calls (`obj.f()`) of a definition that the resolver tied to no definition. */
function unresolvedCalls(graph: CodeGraph, fact: CodeFact): CallSite[] {
  const resolved = new Set(
    graph.callees(fact.id).map((call) => `${call.site.line}:${call.site.name}`),
  );
  return callSites(fact).filter(
    (site) => site.receiver && !resolved.has(`${site.line}:${site.name}`),
  );
}

/** The best function hits of a ranking: the ones whose neighbours are brought in. */
export function neighbourSeeds(
  catalog: SearchIndex['catalog'],
  ranking: readonly string[],
): string[] {
  // the ranking holds every fused hit (hundreds): the seeds are among its first
  const seeds: string[] = [];
  for (const id of ranking) {
    if (seeds.length === NEIGHBOUR_SEEDS) break;
    if (catalog.levelOf(id) === 'function') seeds.push(id);
  }
  return seeds;
}

/** Functions and methods named `name`, when there are few enough for a link by name to mean something. */
function distinctiveDefinitions(graph: CodeGraph, name: string): CodeFact[] {
  // one more than the most that link is enough to know there are too many
  const definitions = graph.someDefinitionsNamed(
    name,
    (fact) => fact.kind !== 'class' && fact.kind !== 'module' && !!fact.chunkId,
    NAME_LINK_DEFINITIONS + 1,
  );
  return definitions.length <= NAME_LINK_DEFINITIONS ? definitions : [];
}

/** Callers of the error sites, hop by hop; callers that mutate state come first in each hop. */
function diagnostic(input: StrategyInput): Hit[] {
  const { graph } = input.index;
  const hits: Hit[] = [];
  let frontier = input.errorSites
    .flatMap((site) => factsAt(graph, site.chunkId, site.lines))
    .slice(0, 6);
  const seen = new Set(frontier.map((fact) => fact.id));
  for (let hop = 1; hop <= CALLER_HOPS && frontier.length; hop++) {
    const next: { fact: CodeFact; via: CodeFact; line: number }[] = [];
    for (const target of frontier) {
      const callers = graph
        .callers(target.id)
        .map((call) => ({ fact: graph.fact(call.callerId)!, via: target, line: call.site.line }))
        .filter((entry) => !seen.has(entry.fact.id))
        .sort((a, b) => Number(b.fact.mutates.length > 0) - Number(a.fact.mutates.length > 0))
        .slice(0, CALLERS_PER_HOP);
      next.push(...callers);
    }
    for (const { fact, via, line } of next) {
      seen.add(fact.id);
      if (!fact.chunkId) continue;
      const mutates = fact.mutates.length
        ? `, and changes ${fact.mutates.slice(0, 3).join(', ')}`
        : '';
      hits.push({
        chunkId: fact.chunkId,
        score: 1 / hop + (fact.mutates.length ? 0.2 : 0),
        evidence: `calls ${via.qualifiedName} (${hop} hop${hop > 1 ? 's' : ''} from the error)${mutates}`,
        lines: [line],
      });
    }
    frontier = next.map((entry) => entry.fact);
  }
  log.info('strategy_applied', {
    mode: 'diagnostic',
    error_sites: input.errorSites.length,
    callers_found: hits.length,
  });
  return hits.sort((a, b) => b.score - a.score);
}

/**
 * The walk forward answers a question that asks to follow the calls, or that names a definition
 * of the index (`client.send()`, `Parser`) whose calls it can follow.
 */
function asksToFollow(input: StrategyInput): boolean {
  if (FOLLOW_CUE.test(input.query.naturalLanguage)) return true;
  return namesDefinition(input.index.graph, input.query);
}

/** Whether a code-shaped name of the question names a definition in the index. */
function namesDefinition(graph: CodeGraph, query: ParsedQuery): boolean {
  return query.extractedIdentifiers.some((identifier) =>
    graph
      .definitionsNamed(identifier.slice(identifier.lastIndexOf('.') + 1))
      .some((fact) => fact.kind !== 'module'),
  );
}

/**
 * From entry points, callees walked forward. Callees that share words with the question or lead
 * to other strong candidates are followed first; each step is a hit on the caller at the call
 * site's line and on the callee itself.
 */
function exploratory(input: StrategyInput): StrategyResult {
  const { graph, catalog } = input.index;
  const seedRank = new Map(input.seeds.map((id, rank) => [id, rank]));
  const terms = new Set(input.terms);
  const entries = input.seeds
    .map((id) => catalog.get(id))
    .filter((meta) => meta?.level === 'function')
    .slice(0, ENTRY_POINTS)
    .flatMap((meta) =>
      graph
        .factsInFile(meta!.filePath!)
        .filter(
          (fact) =>
            (fact.chunkId === meta!.id && fact.parent === null) ||
            (fact.chunkId === meta!.id && fact.kind === 'method'),
        ),
    )
    .slice(0, ENTRY_POINTS);
  const hits: Hit[] = [];
  const tree: string[] = [];
  const visited = new Set<string>();
  const relevance = (fact: CodeFact) =>
    (fact.chunkId && seedRank.has(fact.chunkId)
      ? 2 - seedRank.get(fact.chunkId)! / Math.max(1, input.seeds.length)
      : 0) +
    splitIdentifier(fact.name).filter((part) => terms.has(part)).length * 0.5;
  const walk = (fact: CodeFact, depth: number) => {
    visited.add(fact.id);
    tree.push(
      `${'  '.repeat(depth)}${depth ? '→ ' : ''}${fact.qualifiedName}()  ${fact.path}:${fact.startLine}`,
    );
    if (depth >= CALLEE_HOPS) return;
    const callees = graph
      .callees(fact.id)
      .map((call) => ({ target: graph.fact(call.targetId)!, line: call.site.line }))
      .filter(
        (entry) => entry.target && !visited.has(entry.target.id) && entry.target.kind !== 'class',
      )
      .sort((a, b) => relevance(b.target) - relevance(a.target) || a.line - b.line)
      .slice(0, CALLEES_PER_HOP);
    for (const { target, line } of callees) {
      const weight = (relevance(target) + 0.5) / (depth + 1);
      if (fact.chunkId)
        hits.push({
          chunkId: fact.chunkId,
          score: weight,
          evidence: `calls ${target.qualifiedName} at line ${line}`,
          lines: [line],
        });
      if (target.chunkId)
        hits.push({
          chunkId: target.chunkId,
          score: weight * 0.9,
          evidence: `called from ${fact.qualifiedName} (step ${depth + 1} of the flow)`,
        });
      if (relevance(target) > 0 || depth === 0) walk(target, depth + 1);
    }
  };
  for (const entry of entries) if (!visited.has(entry.id)) walk(entry, 0);
  log.info('strategy_applied', {
    mode: 'exploratory',
    entry_points: entries.map((fact) => fact.qualifiedName),
    flow_steps: tree.length,
  });
  return {
    hits: { source: 'graph', hits: mergeHits(hits) },
    flow: tree.length ? tree.join('\n') : null,
    diagram: null,
    findings: [],
  };
}

/**
 * Facts answer "which functions call / change / …" questions: call sites of the names asked
 * about (resolved or not: `this.end()` counts), definitions mutating them, and, for questions
 * about structure, hot spots, god functions and cycles.
 */
function analytical(input: StrategyInput): StrategyResult {
  const { graph } = input.index;
  const targets = analyticalTargets(input.query);
  const hits: Hit[] = [];
  // the graph knows which facts name each target in a call: the others' sites are not built
  const calling = new Set([...targets].flatMap((name) => graph.factsCalling(name)));
  // with no targets no fact calls or changes one: the facts are not gone through
  for (const fact of targets.size ? graph.allFacts() : []) {
    if (!fact.chunkId || (input.scope && !fact.path.startsWith(input.scope))) continue;
    const callLines = calling.has(fact)
      ? callSites(fact)
          .filter((call) => targets.has(call.name))
          .map((call) => call.line)
      : [];
    if (callLines.length)
      hits.push({
        chunkId: fact.chunkId,
        score: 1 + Math.min(callLines.length, 4) * 0.1,
        evidence: `calls ${[
          ...new Set(
            callSites(fact)
              .filter((call) => targets.has(call.name))
              .map((call) => call.name),
          ),
        ].join(', ')}`,
        lines: callLines,
      });
    if (!fact.mutates.length) continue;
    const mutated = fact.mutates.filter(
      (name) =>
        targets.has(name.replace(/^(self|this)\./, '')) ||
        targets.has(name.slice(name.lastIndexOf('.') + 1)),
    );
    if (mutated.length)
      hits.push({ chunkId: fact.chunkId, score: 1.2, evidence: `changes ${mutated.join(', ')}` });
  }
  if (HIERARCHY_CUE.test(input.query.naturalLanguage)) hits.push(...overrides(graph, targets));
  const { findings, diagram } = input.structure.get(graph, input.scope);
  // Hot spots and cycles answer questions that ask for them, not "which functions call X".
  if (FINDINGS_CUE.test(input.query.naturalLanguage)) hits.push(...findings.hits);
  log.info('strategy_applied', {
    mode: 'analytical',
    targets: [...targets],
    matches: hits.length,
    findings: findings.notes.length,
  });
  return {
    hits: { source: 'graph', hits: mergeHits(hits) },
    flow: null,
    diagram,
    findings: findings.notes,
  };
}

/**
 * For "which subclasses of X override …": the classes deriving from a named class (at any depth)
 * and their methods that redefine one of its methods, the lines where they do.
 */
function overrides(graph: CodeGraph, targets: ReadonlySet<string>): Hit[] {
  const classes = graph.allFacts().filter((fact) => fact.kind === 'class');
  const hits: Hit[] = [];
  for (const base of classes.filter((fact) => targets.has(fact.name))) {
    const baseMethods = new Set(
      graph
        .factsInFile(base.path)
        .filter((fact) => fact.parent === base.name)
        .map((fact) => fact.name),
    );
    const derived = new Set<string>([base.name]);
    for (let grew = true; grew;) {
      grew = false;
      for (const fact of classes) {
        if (
          !derived.has(fact.name) &&
          fact.bases.some((name) => derived.has(name.slice(name.lastIndexOf('.') + 1)))
        ) {
          derived.add(fact.name);
          grew = true;
        }
      }
    }
    derived.delete(base.name);
    for (const fact of classes.filter((candidate) => derived.has(candidate.name))) {
      for (const method of graph
        .factsInFile(fact.path)
        .filter((candidate) => candidate.parent === fact.name && candidate.chunkId)) {
        if (
          !baseMethods.has(method.name) ||
          method.name === 'constructor' ||
          method.name === '__init__'
        )
          continue;
        hits.push({
          chunkId: method.chunkId!,
          score: 1.5,
          evidence: `${fact.name} overrides ${base.name}.${method.name}`,
          lines: [method.startLine],
        });
      }
    }
  }
  return hits;
}

/** Names a question asks about: called names (`end()`), quoted names, mutation targets. */
function analyticalTargets(query: ParsedQuery): Set<string> {
  const targets = new Set<string>();
  for (const identifier of query.extractedIdentifiers)
    targets.add(identifier.slice(identifier.lastIndexOf('.') + 1));
  for (const match of query.naturalLanguage.matchAll(
    /['"`]([A-Za-z_$][\w$]*)['"`]|\b([A-Za-z_$][\w$]*)\(\)/g,
  ))
    targets.add((match[1] ?? match[2])!);
  for (const match of query.naturalLanguage.matchAll(
    /\b(\w+) (?:subclass(?:es)?|descendants|derived classes)\b|\b(?:subclass(?:es)?|descendants) of (?:the )?(\w+)/gi,
  ))
    targets.add((match[1] ?? match[2])!);
  for (const match of query.naturalLanguage.matchAll(
    /\b(?:modif(?:y|ies)|mutates?|changes?|writes? to|updates?|clears?)\s+(?:the\s+)?(?:contents of\s+)?(?:the\s+)?(?:\w+\s+)?(\w+)/gi,
  ))
    targets.add(match[1]!);
  return targets;
}

function structuralFindings(
  graph: CodeGraph,
  scope: string | null,
): { hits: Hit[]; notes: string[] } {
  const hits: Hit[] = [];
  const notes: string[] = [];
  const inScope = (fact: CodeFact) => !scope || fact.path.startsWith(scope);
  const ranked = graph.allFacts().filter((fact) => fact.kind !== 'module' && inScope(fact));
  for (const { fact, count } of mostCounted(ranked, (fact) => graph.callerCount(fact), 5)) {
    if (count < 2) break;
    notes.push(
      `${count >= HOT_SPOT_FAN_IN ? 'Hot spot' : 'Most called'}: ${fact.qualifiedName} (${fact.path}:${fact.startLine}) has ${count} callers`,
    );
    if (fact.chunkId)
      hits.push({
        chunkId: fact.chunkId,
        score: 0.6,
        evidence: `called from ${count} places (fan-in)`,
      });
  }
  for (const { fact, count } of mostCounted(ranked, (fact) => graph.calledNameCount(fact), 3)) {
    if (count < GOD_FUNCTION_FAN_OUT) break;
    notes.push(
      `God function: ${fact.qualifiedName} (${fact.path}:${fact.startLine}) calls ${count} different functions`,
    );
    if (fact.chunkId)
      hits.push({
        chunkId: fact.chunkId,
        score: 0.5,
        evidence: `calls ${count} different functions (fan-out)`,
      });
  }
  for (const cycle of graph.callCycles(ranked).slice(0, 5)) {
    notes.push(
      `Cycle: ${cycle.map((fact) => fact.qualifiedName).join(' → ')} → ${cycle[0]!.qualifiedName}`,
    );
    for (const fact of cycle)
      if (fact.chunkId)
        hits.push({
          chunkId: fact.chunkId,
          score: 0.7,
          evidence: `part of a call cycle (${cycle.map((f) => f.name).join(' → ')})`,
        });
  }
  return { hits, notes };
}

/**
 * The `k` facts `count` gives the most, most first, facts of one count in their order: the first
 * `k` of the facts sorted by count, without sorting (or making an entry for) a million of them.
 */
function mostCounted(
  facts: readonly CodeFact[],
  count: (fact: CodeFact) => number,
  k: number,
): { fact: CodeFact; count: number }[] {
  const top: { fact: CodeFact; count: number }[] = [];
  for (const fact of facts) {
    const counted = count(fact);
    if (top.length === k && counted <= top[k - 1]!.count) continue;
    let at = top.length;
    while (at > 0 && top[at - 1]!.count < counted) at--;
    top.splice(at, 0, { fact, count: counted });
    if (top.length > k) top.pop();
  }
  return top;
}

/** A mermaid graph of which folders' code calls which, weighted by call count. */
function moduleDiagram(graph: CodeGraph, scope: string | null): string | null {
  // each pair of modules once, in the order first seen (the order ties keep), looked up by the
  // calling module, then the called one
  const edges: { from: string; to: string; count: number }[] = [];
  const byModule = new Map<string, Map<string, { count: number }>>();
  const moduleOfPath = new Map<string, string>();
  const module = (path: string) => {
    let held = moduleOfPath.get(path);
    if (held === undefined) moduleOfPath.set(path, (held = moduleOf(path)));
    return held;
  };
  for (const fact of graph.allFacts()) {
    if (scope && !fact.path.startsWith(scope)) continue;
    const from = module(fact.path);
    for (const target of graph.calledFacts(fact)) {
      // a call within the file is within its module: most calls, known without a lookup
      if (target.path === fact.path) continue;
      const to = module(target.path);
      if (from === to) continue;
      let targets = byModule.get(from);
      if (!targets) byModule.set(from, (targets = new Map()));
      const edge = targets.get(to);
      if (edge) edge.count++;
      else {
        const added = { from, to, count: 1 };
        targets.set(to, added);
        edges.push(added);
      }
    }
  }
  if (!edges.length) return null;
  const lines = ['graph LR'];
  const id = (name: string) => name.replace(/[^\w]/g, '_') || 'root';
  for (const { from, to, count } of edges.sort((a, b) => b.count - a.count).slice(0, 40))
    lines.push(`  ${id(from)}["${from}"] -->|${count}| ${id(to)}["${to}"]`);
  return lines.join('\n');
}

function moduleOf(path: string): string {
  return path.replace(/\.[^./]+$/, '');
}

/** The definitions of a chunk that hold the given lines (all of them when no lines are known). */
function factsAt(
  graph: CodeGraph,
  chunkId: string,
  lines: readonly number[] | undefined,
): CodeFact[] {
  const path = chunkId.slice(0, chunkId.indexOf('::'));
  const ofChunk = (fact: CodeFact) => fact.chunkId === chunkId;
  if (!lines?.length)
    return graph
      .factsInFile(path)
      .filter((fact) => ofChunk(fact) && fact.kind !== 'module' && fact.kind !== 'class')
      .slice(0, 2);
  // The innermost definition holding the line is the one raising.
  const innermost = lines
    .map((line) => graph.innermostAt(path, line, line, ofChunk))
    .filter((fact): fact is CodeFact => !!fact)
    .sort((a, b) => a.endLine - a.startLine - (b.endLine - b.startLine));
  return innermost.slice(0, 1);
}

/** Hits of the same chunk combine: scores add up, lines and evidence accumulate. */
export function mergeHits(hits: readonly Hit[]): Hit[] {
  const merged = new Map<string, { score: number; evidence: string[]; lines: number[] }>();
  for (const hit of hits) {
    const entry = merged.get(hit.chunkId) ?? { score: 0, evidence: [], lines: [] };
    entry.score += hit.score;
    if (!entry.evidence.includes(hit.evidence)) entry.evidence.push(hit.evidence);
    entry.lines.push(...(hit.lines ?? []));
    merged.set(hit.chunkId, entry);
  }
  return (
    [...merged]
      .map(([chunkId, entry]) => ({
        chunkId,
        score: entry.score,
        evidence: entry.evidence.slice(0, 3).join('; '),
        lines: [...new Set(entry.lines)],
      }))
      // ties by chunk id: the order facts were indexed in must not rank them
      .sort((a, b) => b.score - a.score || (a.chunkId < b.chunkId ? -1 : 1))
  );
}
