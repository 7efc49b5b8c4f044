import type { LlmClient } from '../llm/client';
import { getLogger } from '../log/logger';
import type { QueryMode } from '../search/mode-router';
import type { SearchResult } from '../search/pipeline';
import { ok, type Result } from '../util/result';
import { rangeKey } from './citations';
import { GAP_BUDGET, resolveGap } from './gaps';
import type { CgragReport, Evidence } from './model';
import { GAP_SYSTEM_PROMPT } from './prompts';
import { GapAnswer } from './schemas';
import type { Session } from './sessions';
import { contextText, evidenceOf, type AnswerSources } from './sources';
import { writeAnswer, type Written } from './write';

/**
 * Thinking mode (CGRAG): the model answers and says what is missing; each gap is looked up (see
 * gaps.ts) and the model answers again with it, up to three passes. The loop stops when nothing
 * is missing, when everything missing was already not found, after the last pass, or when the
 * gap budget is spent. The session keeps the code for follow-up questions and remembers what
 * could not be found.
 */
export const MAX_PASSES = 3;
/** Less gap budget than this left cannot show a useful piece of code: the loop stops. */
const MIN_GAP_TOKENS = 100;

const log = getLogger('answer.cgrag');

export interface CgragInput {
  readonly sources: AnswerSources;
  readonly llm: LlmClient;
  readonly question: string;
  readonly search: SearchResult;
  readonly session: Session;
  /** Evidence and notes found before the loop (a long function read whole). */
  readonly extra?: { readonly evidence: readonly Evidence[]; readonly notes: readonly string[] };
  readonly onText?: (textSoFar: string) => void;
  readonly signal?: AbortSignal;
  /** Token budgets for gap resolution (GAP_BUDGET, unless a test says otherwise). */
  readonly budget?: typeof GAP_BUDGET;
}

export interface CgragOutcome {
  readonly written: Written<GapAnswer>;
  readonly evidence: readonly Evidence[];
  readonly report: CgragReport;
}

export async function runCgrag(input: CgragInput): Promise<Result<CgragOutcome>> {
  const { sources, llm, question, search, session } = input;
  const limits = input.budget ?? GAP_BUDGET;
  const fromSearch = evidenceOf(search.context);
  const shownRanges = new Set(fromSearch.map(rangeKey));
  const cached = session.cached().filter((piece) => !shownRanges.has(rangeKey(piece)));
  const added: Evidence[] = [...cached, ...(input.extra?.evidence ?? [])];
  for (const piece of added) shownRanges.add(rangeKey(piece));
  const identified: string[] = [];
  const resolved: string[] = [];
  const unresolved: string[] = [];
  let spent = 0;
  let stoppedBecause: CgragReport['stoppedBecause'] = 'max_passes';
  let written: Written<GapAnswer> | null = null;
  let pass: number;
  for (pass = 1; pass <= MAX_PASSES; pass++) {
    const evidence = [...fromSearch, ...added];
    const notes = [
      ...(input.extra?.notes ?? []),
      ...[...session.notFound.values()].map((gap) => `Could not be found in this codebase: ${gap}`),
    ];
    const result = await writeAnswer({
      llm,
      system: GAP_SYSTEM_PROMPT,
      question,
      context: contextText(search.context, added),
      evidence,
      schema: GapAnswer,
      schemaName: 'AnswerWithGaps',
      notes,
      ...(input.onText ? { onText: input.onText } : {}),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    if (!result.ok) return result;
    written = result.value;
    const gaps = [...new Set(written.raw.missing.map((gap) => gap.trim()).filter(Boolean))];
    identified.push(...gaps.filter((gap) => !identified.includes(gap)));
    log.info('cgrag_pass_completed', {
      pass,
      gaps: gaps.length,
      evidence: evidence.length,
      citations: written.citations.length,
    });
    const pending = gaps.filter((gap) => !session.notFound.has(normalizeGap(gap)));
    if (!gaps.length) {
      stoppedBecause = 'no_gaps';
      break;
    }
    if (!pending.length) {
      stoppedBecause = 'all_unresolvable';
      break;
    }
    if (pass === MAX_PASSES) break;
    if (limits.total - spent < MIN_GAP_TOKENS) {
      stoppedBecause = 'budget';
      break;
    }
    let passSpent = 0;
    for (const gap of pending) {
      const budget = Math.min(limits.perGap, limits.perPass - passSpent, limits.total - spent);
      const found =
        budget >= MIN_GAP_TOKENS
          ? await resolveGap(sources, gap, search.metadata.queryMode as QueryMode, budget)
          : null;
      if (!found?.evidence.length) {
        unresolved.push(gap);
        session.notFound.set(normalizeGap(gap), gap);
        continue;
      }
      // Code already in the context resolves the gap too; only new code is added.
      const fresh = found.evidence.filter((piece) => !shownRanges.has(rangeKey(piece)));
      resolved.push(gap);
      added.push(...fresh);
      for (const piece of fresh) shownRanges.add(rangeKey(piece));
      const tokens = fresh.reduce((sum, piece) => sum + piece.tokens, 0);
      passSpent += tokens;
      spent += tokens;
    }
  }
  const evidence = [...fromSearch, ...added];
  session.remember([...fromSearch, ...added.filter((piece) => piece.source !== 'session')]);
  const report: CgragReport = {
    passesUsed: Math.min(pass, MAX_PASSES),
    gapsIdentified: identified,
    gapsResolved: resolved,
    gapsUnresolved: [
      ...new Set([
        ...unresolved,
        ...identified.filter(
          (gap) => session.notFound.has(normalizeGap(gap)) && !resolved.includes(gap),
        ),
      ]),
    ],
    sessionId: session.id,
    contextFromCache: cached.length > 0,
    stoppedBecause,
  };
  log.info('cgrag_completed', {
    passes_used: report.passesUsed,
    stopped_because: stoppedBecause,
    gaps_identified: identified.length,
    gaps_resolved: resolved.length,
    gaps_unresolved: report.gapsUnresolved.length,
    gap_tokens: spent,
    session_id: session.id,
    context_from_cache: report.contextFromCache,
  });
  return ok({ written: written!, evidence, report });
}

/** "The `get_db()` function in deps.py." and "get_db() in deps.py" are one gap. */
function normalizeGap(gap: string): string {
  return gap
    .toLowerCase()
    .replace(/[`'".]+/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
