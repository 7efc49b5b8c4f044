/**
 * The one wording of a definition's caller counts, shared by the code lens, the callers tree, the
 * CLI and the agent's tools. Imports nothing, so the extension's bundle can use it as is.
 */
/** How many resolved calls, references by value and possible calls a definition has. */
export interface CallerCounts {
  readonly callers: number;
  readonly references: number;
  readonly possible: number;
}

/** "3 callers", "3 callers · 2 possible", "no resolved callers · 5 possible", "no callers found". */
export function callerSummary(counts: CallerCounts): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts = [counts.callers ? plural(counts.callers, 'caller') : null];
  if (counts.references) parts.push(plural(counts.references, 'reference'));
  if (counts.possible) parts.push(`${counts.possible} possible`);
  if (!counts.callers)
    parts[0] = counts.references || counts.possible ? 'no resolved callers' : 'no callers found';
  return parts.filter(Boolean).join(' · ');
}
