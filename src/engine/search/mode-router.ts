import { z } from 'zod';
import type { LlmClient } from '../llm/client';
import { elapsedMs, getLogger } from '../log/logger';
import type { ParsedQuery } from './preprocess';

/**
 * What kind of question this is, which decides the retrieval strategy:
 *   conceptual  — what something does or how to use it: summaries first;
 *   diagnostic  — why something fails: error sites, then callers walked back;
 *   exploratory — trace a flow: entry points, then callees walked forward;
 *   analytical  — structure and assessment: the facts graph (who calls, who mutates, hot spots).
 * Heuristics always run; with a model configured, its classification (the prompt below) decides.
 * The scope is the part of the codebase the question names, when it names one.
 */
export type QueryMode = 'conceptual' | 'diagnostic' | 'exploratory' | 'analytical';
export const QUERY_MODES: readonly QueryMode[] = [
  'conceptual',
  'diagnostic',
  'exploratory',
  'analytical',
];

export interface ModeDecision {
  readonly mode: QueryMode;
  readonly scope: string | null;
  readonly decidedBy: 'heuristics' | 'llm';
  readonly scores: Record<QueryMode, number>;
  readonly reasoning: string;
}

const CUES: Record<Exclude<QueryMode, 'conceptual'>, RegExp[]> = {
  diagnostic: [
    /\b(error|exception|traceback|stack ?trace|crash(es|ed)?|fails?|failing|failed|broken|bug|throws?|raised?|raises)\b/i,
    /\bwhy (does|do|is|am|are|did|would)\b.*\b(not|n't|never|fail|wrong|error|instead)\b/i,
    /\bwhy (do|does|did|am|is|are) (i|we|you|it|this|my \w+) (get|see|keep getting|hit|receive)\b/i,
    /\b(instead of|when it should|should (have|be|return)|expected .* but|doesn't|does not|won't|isn't working|not working)\b/i,
    /\b(refuses?|rejects?|complains?|warns?|warning)\b/i,
  ],
  exploratory: [
    /\b(trace|walk (me )?through|step by step|flow|call path|call chain|sequence|lifecycle|pipeline)\b/i,
    /\bwhat happens (when|inside|after|before|if|at|on|during|once)\b/i,
    /\b(from the moment|until|end(s)? up (in|at)|reach(es)?|gets? to|hands? (off|over)|passes? (it|control)|through the)\b/i,
    /\bhow does .+ (get|end up|reach|arrive|flow|propagate|become)\b/i,
  ],
  analytical: [
    /\b(which|what) (functions?|methods?|classes|modules?|files?|callbacks?|places?|parts?)\b/i,
    /\b(which|what)( [\w-]+){0,2} (functions?|methods?|classes|modules?|files?|operators?|handlers?|places?|parts?|code|subclass(es)?|callers?|routines?)( [\w-]+){0,3} (call|calls|invoke|invokes|use|uses|change|changes|modify|modifies|mutate|mutates|write|writes|override|overrides|remove|removes|rewrite|rewrites|read|reads)\b/i,
    /\b(list|enumerate) (every|all|each)\b|\bevery place\b|\ball (the )?(places|callers|functions|methods)\b/i,
    /\b(who|what) calls\b|\bcallers? of\b|\bcalled (from|by)\b|\b(modif(y|ies)|mutates?|writes? to|changes?) (the )?(state|contents|session|cache|global)/i,
    /\b(architecture|design|coupling|cohesion|dependenc(y|ies)|hot ?spots?|god (function|class)|cycles?|circular|flaws?|code smells?|complexity|fan[- ]?(in|out))\b/i,
  ],
};

const Classification = z.object({
  mode: z.enum(['DIAGNOSTIC', 'EXPLORATORY', 'ANALYTICAL', 'CONCEPTUAL']),
  reasoning: z.string(),
  scope: z.string().nullable(),
});

/** The prompt that has a model classify a question into one of the four modes. */
export const CLASSIFIER_SYSTEM_PROMPT = `You are a query classifier for a codebase Q&A system. Your job is to determine
the best retrieval strategy for answering the user's question.

## Why This Matters

Different questions need different retrieval approaches:

- CONCEPTUAL questions ("what does X do?") are answered well by high-level
  documentation and wiki summaries.

- DIAGNOSTIC questions ("why is X failing?") require tracing errors back to
  root causes. The symptoms described in the query often have LOW semantic
  similarity to the actual cause. We need to find error sites in code and
  walk the call graph backward to find state mutations or side effects.

- EXPLORATORY questions ("trace the auth flow") require following execution
  paths forward through the codebase. We need to find entry points and walk
  the call graph to show how components connect.

- ANALYTICAL questions ("what are the architectural flaws?") require examining
  code structure, dependencies, and known issues. We need structural analysis,
  not just text search.

## Classification Rules

DIAGNOSTIC - Choose when:
  - Query contains error messages, exception types, or stack traces
  - Query describes unexpected behavior ("X happens when it should Y")
  - Query asks WHY something is broken, failing, or not working
  - Query mentions specific error codes or status codes

EXPLORATORY - Choose when:
  - Query asks to trace, follow, or walk through code paths
  - Query asks how components connect or call each other
  - Query asks about execution order or data flow
  - Query wants to understand a sequence of operations

ANALYTICAL - Choose when:
  - Query asks about architecture, structure, or design
  - Query asks about code quality, flaws, or problems
  - Query asks about dependencies, coupling, or cohesion
  - Query asks for assessment or evaluation of code

CONCEPTUAL - Choose when:
  - Query asks what something does or how to use it
  - Query asks for explanation of a feature or module
  - Query is a general question about functionality
  - None of the above categories clearly fit

## Response Format

Respond with a JSON object:
{
  "mode": "DIAGNOSTIC" | "EXPLORATORY" | "ANALYTICAL" | "CONCEPTUAL",
  "reasoning": "<one sentence why>",
  "scope": "<specific part of codebase if mentioned, otherwise null>"
}`;

const log = getLogger('search.mode');

/** `folders` are the index's folders; a set is read once (see matchScope), so it must not change. */
export async function classifyMode(
  query: ParsedQuery,
  folders: ReadonlySet<string>,
  llm: LlmClient | null,
  signal?: AbortSignal,
): Promise<ModeDecision> {
  const started = performance.now();
  const heuristic = heuristicMode(query, folders);
  if (!llm) {
    log.info('mode_classified', {
      mode: heuristic.mode,
      scope: heuristic.scope,
      decided_by: 'heuristics',
      scores: heuristic.scores,
      duration_ms: elapsedMs(started),
    });
    return heuristic;
  }
  const result = await llm.complete({
    system: CLASSIFIER_SYSTEM_PROMPT,
    prompt: `Classify this question: ${query.naturalLanguage}`,
    schema: Classification,
    schemaName: 'ModeClassification',
    ...(signal ? { signal } : {}),
  });
  if (!result.ok) {
    log.warn('mode_classification_failed', {
      error: result.error.message,
      fallback: heuristic.mode,
    });
    return heuristic;
  }
  const decision: ModeDecision = {
    mode: result.value.mode.toLowerCase() as QueryMode,
    scope: result.value.scope
      ? (matchScope(result.value.scope, folders) ?? heuristic.scope)
      : heuristic.scope,
    decidedBy: 'llm',
    scores: heuristic.scores,
    reasoning: result.value.reasoning,
  };
  log.info('mode_classified', {
    mode: decision.mode,
    scope: decision.scope,
    decided_by: 'llm',
    reasoning: decision.reasoning,
    heuristic_mode: heuristic.mode,
    duration_ms: elapsedMs(started),
  });
  return decision;
}

/** Counts the cues of each mode; error anchors count double for diagnostic. */
export function heuristicMode(query: ParsedQuery, folders: ReadonlySet<string>): ModeDecision {
  const text = query.naturalLanguage;
  const scores: Record<QueryMode, number> = {
    conceptual: 0.5,
    diagnostic: 0,
    exploratory: 0,
    analytical: 0,
  };
  for (const [mode, cues] of Object.entries(CUES) as [
    Exclude<QueryMode, 'conceptual'>,
    RegExp[],
  ][]) {
    scores[mode] = cues.filter((cue) => cue.test(text)).length;
  }
  const anchors = query.errorAnchors;
  if (anchors.exceptionTypes.length || anchors.frames.length) scores.diagnostic += 2;
  if (anchors.messages.length && scores.diagnostic > 0) scores.diagnostic += 1;
  const mode = QUERY_MODES.reduce(
    (best, candidate) => (scores[candidate] > scores[best] ? candidate : best),
    'conceptual' as QueryMode,
  );
  const reasons: Record<QueryMode, string> = {
    conceptual: 'asks what something does or how it works',
    diagnostic: 'mentions an error, a failure or unexpected behaviour',
    exploratory: 'asks to trace a flow or a sequence of calls',
    analytical: 'asks which parts of the code do something, or about structure',
  };
  return {
    mode,
    scope: scopeOf(query, folders),
    decidedBy: 'heuristics',
    scores,
    reasoning: reasons[mode],
  };
}

/** The indexed folder a question names ("in the router", "src/api"), if any. */
function scopeOf(query: ParsedQuery, folders: ReadonlySet<string>): string | null {
  for (const file of query.extractedFilePaths) {
    const folder = file.includes('/') ? file.slice(0, file.lastIndexOf('/')) : null;
    if (folder && matchScope(folder, folders)) return matchScope(folder, folders);
  }
  const words = query.naturalLanguage.toLowerCase().match(/[\w/.-]+/g) ?? [];
  for (const word of words) {
    if (word.length < 3) continue;
    const found = matchScope(word, folders);
    if (found) return found;
  }
  return null;
}

/**
 * The first folder (in the set's order) whose lowercased path is `name` or ends with `/name`. Every
 * word of a question is looked up, so each set of folders is turned once into a table from each
 * such ending to the first folder having it.
 */
export function matchScope(name: string, folders: ReadonlySet<string>): string | null {
  const wanted = name.replace(/^\.?\/|\/$/g, '').toLowerCase();
  return endingsOf(folders).get(wanted) ?? null;
}

const folderEndings = new WeakMap<ReadonlySet<string>, Map<string, string>>();

function endingsOf(folders: ReadonlySet<string>): Map<string, string> {
  let endings = folderEndings.get(folders);
  if (!endings) {
    endings = new Map();
    for (const folder of folders) {
      const lower = folder.toLowerCase();
      let slash = -1;
      do {
        const ending = lower.slice(slash + 1);
        if (!endings.has(ending)) endings.set(ending, folder);
        slash = lower.indexOf('/', slash + 1);
      } while (slash >= 0);
    }
    folderEndings.set(folders, endings);
  }
  return endings;
}
