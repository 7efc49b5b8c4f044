import type { CodeGraph } from '../graph/code-graph';
import type { CodeFact } from '../model';
import type { SearchResult } from '../search/pipeline';
import type { ChunkMeta } from '../store/tables';
import type { Span } from '../search/spans';
import type { Attachment } from '../search/preprocess';
import type { Answer, AnswerMode, Citation } from './model';
import { attachmentLines } from './snippets';

/**
 * The answer when no model is configured: deterministic and labelled as what it is — the facts
 * the index holds about the question (where a quoted message is raised, who calls that code and
 * what they change; the flow; structural findings) and the ranked evidence with why each span
 * matters. Every citation is a span the search returned.
 */
const CITED_SPANS = 8;
const CALLERS_SHOWN = 3;

export const EVIDENCE_ONLY_NOTICE =
  'No language model is configured, so this is the evidence Code Oracle found, not a written answer.';

export interface IndexView {
  readonly graph: CodeGraph;
  readonly catalog: ReadonlyMap<string, ChunkMeta>;
}

export function evidenceOnlyAnswer(
  question: string,
  result: SearchResult,
  index: IndexView,
  mode: AnswerMode,
  durationMs: number,
  attachment?: Attachment,
  /** Why the configured model wrote nothing (unreachable, no key); absent when none is configured. */
  modelFailure?: string,
): Answer {
  const { graph } = index;
  const spans = result.spans.filter((span) => span.level !== 'directory');
  const attached = attachment ? attachmentCitation(attachment) : null;
  const citations: Citation[] = [
    ...(attached ? [attached] : []),
    ...spans.slice(0, CITED_SPANS).map((span) => ({
      path: span.path,
      startLine: span.startLine,
      endLine: span.endLine,
      why: span.why,
    })),
  ];
  const sections = [
    `*${modelFailure ? `The language model could not answer (${modelFailure}), so this is the evidence Code Oracle found, not a written answer.` : EVIDENCE_ONLY_NOTICE}*`,
  ];
  // The attached code (a selection, the lines around an error) is what the question is about:
  // it leads the sources even when the index holds nothing for it (a JSON file, say).
  if (attached)
    sections.push(
      `The code you attached, \`${attached.path}:${attached.startLine}-${attached.endLine}\`, comes first in the sources.`,
    );
  if (!spans.length && attached)
    sections.push('The attached lines are the evidence: nothing else in the index is about them.');
  else if (!spans.length)
    sections.push(
      `Nothing in the index matches “${question.slice(0, 120)}”. Try the names of functions, files or error messages you expect to be involved.`,
    );
  const facts = errorFacts(spans, graph);
  if (facts.length)
    sections.push(`**What the code shows**\n${facts.map((fact) => `- ${fact}`).join('\n')}`);
  if (result.metadata.flow) sections.push(`**Call flow**\n\`\`\`\n${result.metadata.flow}\n\`\`\``);
  if (result.metadata.findings.length)
    sections.push(
      `**Findings**\n${result.metadata.findings.map((finding) => `- ${finding}`).join('\n')}`,
    );
  // the chat draws it; calls between modules, busiest first
  if (result.metadata.diagram)
    sections.push(
      `**Module dependencies** (calls between modules)\n\n\`\`\`mermaid\n${result.metadata.diagram}\n\`\`\``,
    );
  if (spans.length)
    sections.push(
      `The ${Math.min(spans.length, CITED_SPANS)} most relevant places are listed in the sources, best first, with why each was chosen.`,
    );
  return {
    answer: sections.join('\n\n'),
    confidence: spans.length ? round(result.metadata.crag.score) : 0,
    citations,
    followUps: followUps(spans, graph),
    mode,
    evidenceOnly: true,
    metadata: {
      model: null,
      search: result.metadata,
      citationsDropped: 0,
      evidence: spans.length,
      notices: result.metadata.notices,
      durationMs,
    },
  };
}

function attachmentCitation(attachment: Attachment): Citation {
  const lines = attachmentLines(attachment);
  return {
    path: attachment.path,
    startLine: lines[0]!.line,
    endLine: lines[lines.length - 1]!.line,
    why: 'the code attached to the question',
  };
}

/**
 * For spans holding a quoted message: the line it is on and the definition it is in, then who
 * calls that definition, where, and what those callers change.
 */
function errorFacts(spans: readonly Span[], graph: CodeGraph): string[] {
  const facts: string[] = [];
  for (const span of spans) {
    if (!span.message) continue;
    const { text: message, line } = span.message;
    const fact = innermostFact(graph, span.path, span.startLine, span.endLine);
    facts.push(
      `The message “${message}” is at \`${span.path}:${line}\`${fact ? ` in \`${fact.qualifiedName}()\`` : ''}.`,
    );
    if (!fact) continue;
    for (const call of graph.callers(fact.id).slice(0, CALLERS_SHOWN)) {
      const caller = graph.fact(call.callerId);
      if (!caller) continue;
      const changes = caller.mutates.length
        ? `, which changes ${caller.mutates
            .slice(0, 3)
            .map((name) => `\`${name}\``)
            .join(', ')}`
        : '';
      facts.push(
        `\`${fact.qualifiedName}()\` is called by \`${caller.qualifiedName}()\` at \`${call.site.line ? `${caller.path}:${call.site.line}` : caller.path}\`${changes}.`,
      );
    }
    if (facts.length > 8) break;
  }
  return facts;
}

function innermostFact(
  graph: CodeGraph,
  path: string,
  start: number,
  end: number,
): CodeFact | undefined {
  return graph.innermostAt(path, start, end, (fact) => fact.kind !== 'class');
}

function followUps(spans: readonly Span[], graph: CodeGraph): string[] {
  const named = spans
    .map((span) => innermostFact(graph, span.path, span.startLine, span.endLine))
    .filter((fact): fact is CodeFact => !!fact)
    .filter((fact, i, all) => all.findIndex((other) => other.id === fact.id) === i)
    .slice(0, 2);
  return named.flatMap((fact, i) =>
    i === 0
      ? [
          `Who calls \`${fact.qualifiedName}\`?`,
          `What happens after \`${fact.qualifiedName}\` is called?`,
        ]
      : [`What does \`${fact.qualifiedName}\` do?`],
  );
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
