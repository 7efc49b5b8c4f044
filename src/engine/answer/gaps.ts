import type { CodeFact } from '../model';
import { getLogger } from '../log/logger';
import type { QueryMode } from '../search/mode-router';
import { findDefinitions } from '../resolve/symbols';
import type { Evidence } from './model';
import { definitionEvidence, outlineEvidence } from './snippets';
import { evidenceOf, type AnswerSources } from './sources';

/**
 * Resolving what a model said was missing, cheapest and surest way first, by the question's
 * mode: "name in file" and "name()" by direct lookup in the facts graph, a file
 * by its outline, in diagnostic mode an error description by the error strings the code holds,
 * and a search for anything else.
 */
export const GAP_BUDGET = { perGap: 500, perPass: 1500, total: 3000 };
const SEARCHED_SPANS = 3;
const FILE_PATTERN =
  /([\w./-]+\.(?:py|pyi|js|jsx|mjs|cjs|ts|tsx|go|java|rs|cs|cpp|cc|c|h|hpp|rb|php))\b/;
const NAME_IN_FILE = /`?([A-Za-z_$][\w$.]*)`?(?:\(\))?\s+in\s+`?([\w./-]+\.\w+)`?/;
const CALLED_NAME = /`?([A-Za-z_$][\w$.]*)\(\)`?/;
const ERROR_WORDS = /\b(error|exception|fail(s|ed|ure)?|invalid|raise[sd]?|throw[sn]?)\b/i;

const log = getLogger('answer.gaps');

export type GapResolution = {
  readonly evidence: Evidence[];
  readonly via: 'definition' | 'file' | 'error_strings' | 'search';
} | null;

export async function resolveGap(
  sources: AnswerSources,
  gap: string,
  mode: QueryMode,
  budget: number,
): Promise<GapResolution> {
  const resolved =
    (await direct(sources, gap, budget)) ??
    (mode === 'diagnostic' && ERROR_WORDS.test(gap)
      ? await errorStrings(sources, gap, budget)
      : null) ??
    (await searched(sources, gap, budget));
  log.info('gap_resolved', {
    gap,
    via: resolved?.via ?? null,
    pieces: resolved?.evidence.length ?? 0,
    tokens: resolved?.evidence.reduce((sum, piece) => sum + piece.tokens, 0) ?? 0,
  });
  return resolved;
}

async function direct(sources: AnswerSources, gap: string, budget: number): Promise<GapResolution> {
  const inFile = NAME_IN_FILE.exec(gap);
  if (inFile) {
    const [, name, file] = inFile;
    const fact = findDefinitions(sources.graph, name!).find(
      (candidate) => candidate.path === file || candidate.path.endsWith(`/${file}`),
    );
    const piece = fact
      ? await definitionEvidence(sources, fact, budget, 'gap', `asked for: ${gap}`)
      : null;
    if (piece) return { evidence: [piece], via: 'definition' };
  }
  const file = FILE_PATTERN.exec(gap)?.[1];
  if (file && !inFile) {
    const path = [...sources.graph.files()].find(
      (candidate) => candidate === file || candidate.endsWith(`/${file}`),
    );
    const outline = path ? await outlineEvidence(sources, path, budget, 'gap') : [];
    if (outline.length) return { evidence: outline, via: 'file' };
  }
  const called = CALLED_NAME.exec(gap)?.[1];
  if (called) {
    const fact = bestDefinition(findDefinitions(sources.graph, called));
    const piece = fact
      ? await definitionEvidence(sources, fact, budget, 'gap', `asked for: ${gap}`)
      : null;
    if (piece) return { evidence: [piece], via: 'definition' };
  }
  return null;
}

/** Definitions holding error strings that share words with the gap, best overlap first. */
async function errorStrings(
  sources: AnswerSources,
  gap: string,
  budget: number,
): Promise<GapResolution> {
  const words = new Set(gap.toLowerCase().match(/[a-z]{4,}/g) ?? []);
  let best: { fact: CodeFact; overlap: number } | null = null;
  for (const fact of sources.graph.allFacts()) {
    for (const message of fact.errorStrings) {
      const overlap = (message.toLowerCase().match(/[a-z]{4,}/g) ?? []).filter((word) =>
        words.has(word),
      ).length;
      if (overlap >= 2 && (!best || overlap > best.overlap)) best = { fact, overlap };
    }
  }
  const piece = best
    ? await definitionEvidence(
        sources,
        best.fact,
        budget,
        'gap',
        `holds an error message matching: ${gap}`,
      )
    : null;
  return piece ? { evidence: [piece], via: 'error_strings' } : null;
}

async function searched(
  sources: AnswerSources,
  gap: string,
  budget: number,
): Promise<GapResolution> {
  const result = await sources.search({ query: gap, mode: 'fast' });
  if (!result.ok) return null;
  const pieces: Evidence[] = [];
  let used = 0;
  for (const piece of evidenceOf(result.value.context).slice(0, SEARCHED_SPANS)) {
    if (used + piece.tokens > budget) break;
    pieces.push({ ...piece, source: 'gap', why: `found searching for: ${gap}` });
    used += piece.tokens;
  }
  return pieces.length ? { evidence: pieces, via: 'search' } : null;
}

/** Of several definitions with one name, a function before a class or module, the shortest path first. */
function bestDefinition(facts: readonly CodeFact[]): CodeFact | undefined {
  return [...facts].sort(
    (a, b) =>
      Number(a.kind === 'class') - Number(b.kind === 'class') || a.path.length - b.path.length,
  )[0];
}
