import type { LlmClient } from '../llm/client';
import { elapsedMs, getLogger } from '../log/logger';
import { err, ok, type EngineError, type Result } from '../util/result';
import { planEdits, type WorkspaceFiles } from './apply';
import {
  PatchProposalSchema,
  type CodePatch,
  type DiagnosticInput,
  type FixProposal,
  type IssueAnalysis,
  type IssueInput,
  type PatchRefusal,
} from './model';

/**
 * Patch generation: the model sees the issue and the current text of the code the analysis found,
 * and answers with exact search-and-replace blocks (structured output, validated by zod). Blocks
 * are checked against the files as the user sees them; when any is refused, the reasons go back
 * to the model once, and a second refusal is reported, never applied.
 */

const log = getLogger('fix.patch');

/** Lines shown around each relevant chunk, so an `original` can reach slightly past it. */
const MARGIN_LINES = 3;
/** The prompt's code stays under this many characters; the best-ranked chunks come first. */
const MAX_CODE_CHARACTERS = 24_000;

export const PATCH_SYSTEM = `You fix bugs in a codebase. You are given an issue and the current text of the code that is most likely involved.
Answer with search-and-replace patch blocks:
- "file" is the workspace-relative path exactly as shown in the code headers.
- "original" is copied VERBATIM from the shown code (same whitespace, same indentation, whole lines) and must occur exactly once in that file: include enough lines to make it unique, and no line numbers.
- "replacement" is the new text for exactly those lines.
- Change as little as needed to fix the issue; keep the file's style.
- "explanation" says what was wrong and why the change fixes it; "confidence" is between 0 and 1.
- "otherFilesAffected" lists other files that may need a change or a look because of this one (often empty).`;

export interface PatchRequest {
  readonly llm: LlmClient;
  readonly issue: IssueInput;
  readonly analysis: IssueAnalysis;
  readonly files: WorkspaceFiles;
  readonly diagnostic?: DiagnosticInput;
  readonly signal?: AbortSignal;
}

/** Why a patch could not be proposed: the model failed, or its patch was refused twice. */
export type PatchFailure = EngineError & { readonly refusals?: readonly PatchRefusal[] };

export async function proposePatch(
  request: PatchRequest,
): Promise<Result<FixProposal, PatchFailure>> {
  const { issue, analysis } = request;
  log.info('patch_generation_started', {
    issue_number: issue.number,
    relevant_chunks: analysis.relevantChunks.length,
  });
  const prompt = patchPrompt(issue, request.diagnostic, await codeSections(request));
  const first = await attemptPatch(request, prompt, 1);
  if (!first.ok) return first;
  if (first.value.planned.ok)
    return ok({
      analysis,
      patches: first.value.patches,
      edits: first.value.planned.value,
      attempts: 1,
      retriedFor: [],
    });
  const retriedFor = first.value.planned.error;
  const second = await attemptPatch(request, `${prompt}\n\n${refusalFeedback(retriedFor)}`, 2);
  if (!second.ok) return second;
  if (second.value.planned.ok)
    return ok({
      analysis,
      patches: second.value.patches,
      edits: second.value.planned.value,
      attempts: 2,
      retriedFor,
    });
  const refusals = second.value.planned.error;
  log.error('patch_generation_failed', {
    issue_number: issue.number,
    error: 'the patch was refused after one retry',
    refusals: refusals.length,
  });
  return err({
    code: 'invalid_input',
    message: `The model's patch could not be applied, even after it was told why: ${refusals
      .map((refusal) => refusal.reason)
      .join(' ')}`,
    refusals,
  });
}

/** One model call and the check of its patch against the files. */
async function attemptPatch(
  request: PatchRequest,
  prompt: string,
  attempt: number,
): Promise<
  Result<{ patches: CodePatch[]; planned: Awaited<ReturnType<typeof planEdits>> }, PatchFailure>
> {
  const started = performance.now();
  const answer = await request.llm.complete({
    system: PATCH_SYSTEM,
    prompt,
    schema: PatchProposalSchema,
    schemaName: 'PatchProposal',
    maxTokens: 4096,
    ...(request.signal ? { signal: request.signal } : {}),
  });
  if (!answer.ok) {
    log.error('patch_generation_failed', {
      issue_number: request.issue.number,
      error: answer.error.message,
      attempt,
    });
    return answer;
  }
  const patches = answer.value.patches;
  const planned = await planEdits(patches, request.files);
  if (planned.ok) for (const patch of patches) logGenerated(patch, started);
  else
    log.warn('patch_refused', {
      issue_number: request.issue.number,
      attempt,
      reasons: planned.error.map((refusal) => `${refusal.file}: ${refusal.reason}`),
    });
  return ok({ patches, planned });
}

function logGenerated(patch: CodePatch, started: number): void {
  log.info('patch_generated', {
    file_path: patch.file,
    original_code_length: patch.original.length,
    new_code_length: patch.replacement.length,
    confidence: patch.confidence,
    affects_other_files: patch.otherFilesAffected,
    duration_ms: elapsedMs(started),
  });
}

/** The relevant chunks as the files hold them now (unsaved text included), best first. */
async function codeSections(request: PatchRequest): Promise<string[]> {
  const sections: string[] = [];
  let budget = MAX_CODE_CHARACTERS;
  const shown = new Set<string>();
  for (const chunk of request.analysis.relevantChunks) {
    const read = await request.files.read(chunk.path);
    if (!read.ok) continue;
    const lines = read.value.text.split('\n');
    const start = Math.max(1, chunk.startLine - MARGIN_LINES);
    const end = Math.min(lines.length, chunk.endLine + MARGIN_LINES);
    const key = `${chunk.path}:${start}-${end}`;
    if (shown.has(key)) continue;
    const text = lines.slice(start - 1, end).join('\n');
    if (text.length > budget) continue;
    budget -= text.length;
    shown.add(key);
    const where = chunk.parents.length ? ` (in ${chunk.parents.join(' › ')})` : '';
    sections.push(`### ${chunk.path} lines ${start}-${end}: ${chunk.name}${where}\n${text}`);
  }
  return sections;
}

function patchPrompt(
  issue: IssueInput,
  diagnostic: DiagnosticInput | undefined,
  code: readonly string[],
): string {
  const parts = [`## Issue${issue.number ? ` #${issue.number}` : ''}: ${issue.title}`];
  if (issue.body.trim()) parts.push(issue.body.trim());
  if (diagnostic) {
    const label = [diagnostic.source, diagnostic.code].filter(Boolean).join(' ');
    parts.push(
      `## Diagnostic at ${diagnostic.path}:${diagnostic.startLine}${label ? ` (${label})` : ''}\n${diagnostic.message}`,
    );
  }
  parts.push(
    code.length ? `## Code\n${code.join('\n\n')}` : '## Code\n(no code was found for this issue)',
  );
  return parts.join('\n\n');
}

function refusalFeedback(refusals: readonly PatchRefusal[]): string {
  return `## Your previous patch was refused\n${refusals
    .map((refusal) => `- ${refusal.file}: ${refusal.reason}`)
    .join('\n')}\nAnswer again with every "original" copied exactly from the code shown above.`;
}
