import type { CodeFact } from '../model';
import { countTokens, linesNotShown, linesToKeep, numberedLines } from '../search/context';
import { codeLines, type CodeLine } from '../search/evidence';
import type { Attachment } from '../search/preprocess';
import type { Evidence } from './model';
import type { AnswerSources } from './sources';

/**
 * Code turned into evidence a model can cite: a heading and numbered lines, cut to a token
 * budget after the signature and first lines, with a marker saying how much was left out.
 */
export async function definitionEvidence(
  sources: AnswerSources,
  fact: CodeFact,
  budget: number,
  source: Evidence['source'],
  why?: string,
): Promise<Evidence | null> {
  if (!fact.chunkId) return null;
  const meta = sources.catalog.get(fact.chunkId);
  const text = (await sources.chunkTexts([fact.chunkId])).get(fact.chunkId);
  if (!meta || text === undefined) return null;
  const lines = codeLines(meta, text).filter(
    (line) => line.line >= fact.startLine && line.line <= fact.endLine,
  );
  if (!lines.length) return null;
  return numberedEvidence(
    fact.path,
    `${fact.kind} ${fact.qualifiedName}`,
    lines,
    budget,
    source,
    why,
  );
}

/** A file's outline: each definition's signature line, as one-line pieces of evidence. */
export async function outlineEvidence(
  sources: AnswerSources,
  path: string,
  budget: number,
  source: Evidence['source'],
): Promise<Evidence[]> {
  const pieces: Evidence[] = [];
  let used = 0;
  for (const fact of [...sources.graph.factsInFile(path)]
    .filter((entry) => entry.kind !== 'module')
    .sort((a, b) => a.startLine - b.startLine)) {
    const piece = await numberedEvidence(
      path,
      `${fact.kind} ${fact.qualifiedName}`,
      [{ line: fact.startLine, text: fact.signature }],
      budget - used,
      source,
    );
    if (!piece || used + piece.tokens > budget) break;
    pieces.push(piece);
    used += piece.tokens;
  }
  return pieces;
}

/** The attached code's lines, numbered from the line it starts on; a final newline ends the last line, it adds none. */
export function attachmentLines(attachment: Attachment): CodeLine[] {
  const first = attachment.startLine ?? 1;
  return attachment.content
    .replace(/\r\n/g, '\n')
    .replace(/\n$/, '')
    .split('\n')
    .map((text, i) => ({ line: first + i, text }));
}

export async function numberedEvidence(
  path: string,
  label: string,
  lines: readonly CodeLine[],
  budget: number,
  source: Evidence['source'],
  why?: string,
): Promise<Evidence | null> {
  if (!lines.length) return null;
  const width = String(lines[lines.length - 1]!.line).length;
  const render = (shown: readonly CodeLine[], omitted: number) =>
    `### ${path}:${shown[0]!.line}-${shown[shown.length - 1]!.line} (${label})\n${numberedLines(shown, width)}${omitted ? `\n${linesNotShown(omitted)}` : ''}`;
  let shown = lines.length;
  let text = render(lines, 0);
  let tokens = await countTokens(text);
  while (tokens > budget && shown > 1) {
    shown = linesToKeep(shown, tokens, budget, 1);
    text = render(lines.slice(0, shown), lines.length - shown);
    tokens = await countTokens(text);
  }
  if (tokens > budget) return null;
  return {
    path,
    startLine: lines[0]!.line,
    endLine: lines[shown - 1]!.line,
    text,
    tokens,
    source,
    ...(why ? { why } : {}),
  };
}
