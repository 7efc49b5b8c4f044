import type { LlmClient } from '../llm/client';
import { getLogger } from '../log/logger';
import { codeLines } from '../search/evidence';
import type { SearchResult } from '../search/pipeline';
import type { Evidence } from './model';
import { FOCUSED_FUNCTION_PROMPT } from './prompts';
import { ModelAnswer } from './schemas';
import { numberedEvidence } from './snippets';
import type { AnswerSources } from './sources';
import { writeAnswer } from './write';

/**
 * Long functions are indexed by their summary; when a question needs the body of one that the
 * search returned ("walk me through the exact loop", or only windows of it are in context), the
 * whole body is read in a focused call of its own. Its findings and the body itself join the
 * evidence of the main answer. Logged every time: an explicit escalation, not a silent fallback.
 */
const NEEDS_BODY =
  /\b(exact(ly)?|line by line|step by step|walk (me )?through|loops?|branch(es)?|conditions?|every (case|path)|precisely|in detail|details?|algorithm|how exactly)\b/i;
const FOCUS_TOKENS = 6000;
const ESCALATIONS = 1;

const log = getLogger('answer.escalate');

export interface Escalation {
  readonly evidence: Evidence[];
  readonly notes: string[];
  readonly functions: string[];
}

export async function escalateLongFunctions(
  sources: AnswerSources,
  llm: LlmClient,
  question: string,
  search: SearchResult,
  signal?: AbortSignal,
): Promise<Escalation> {
  const out: Escalation = { evidence: [], notes: [], functions: [] };
  const questionNeedsBody = NEEDS_BODY.test(question);
  const candidates = [...new Set(search.spans.map((span) => span.chunkId))]
    .map((id) => sources.catalog.get(id))
    .filter((meta) => meta?.isSummarized)
    .slice(0, 3);
  for (const meta of candidates) {
    if (!meta || out.functions.length >= ESCALATIONS) break;
    const shown = search.context.items.filter(
      (item) => item.chunkId === meta.id && item.role === 'evidence',
    );
    const partial =
      shown.reduce((sum, item) => sum + item.endLine - item.startLine + 1, 0) <
      meta.endLine - meta.startLine + 1;
    if (!questionNeedsBody && !partial) continue;
    const body = (await sources.chunkTexts([meta.id])).get(meta.id);
    if (!body) continue;
    const name = [meta.className, meta.functionName].filter(Boolean).join('.');
    const piece = await numberedEvidence(
      meta.filePath!,
      `function ${name}, whole`,
      codeLines(meta, body),
      FOCUS_TOKENS,
      'function',
    );
    if (!piece) continue;
    log.info('long_function_escalated', {
      chunk_id: meta.id,
      file_path: meta.filePath,
      function_name: name,
      full_content_tokens: piece.tokens,
      reason: questionNeedsBody ? 'question_needs_body' : 'only_part_in_context',
    });
    const focused = await writeAnswer({
      llm,
      system: FOCUSED_FUNCTION_PROMPT,
      question,
      context: piece.text,
      evidence: [piece],
      schema: ModelAnswer,
      schemaName: 'FocusedAnswer',
      ...(signal ? { signal } : {}),
    });
    out.evidence.push(piece);
    out.functions.push(`${meta.filePath}:${name}`);
    if (focused.ok)
      out.notes.push(
        `A focused reading of the whole \`${name}\` (${meta.filePath}:${piece.startLine}-${piece.endLine}) found: ${focused.value.raw.answer}`,
      );
    else
      log.warn('long_function_escalation_failed', {
        chunk_id: meta.id,
        error: focused.error.message,
      });
  }
  return out;
}
