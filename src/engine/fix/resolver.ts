import type { LlmClient } from '../llm/client';
import { withTrace } from '../log/trace';
import { fail, type Result } from '../util/result';
import { WorkspaceFiles } from './apply';
import { analyzeIssue, type AnalysisIndex } from './analysis';
import type { DiagnosticInput, FixProposal, IssueInput } from './model';
import { proposePatch, type PatchFailure } from './patch';

/**
 * From an issue (or a diagnostic) to a checked patch, in one trace: analysis, then the model's
 * patch, checked against the files as the user sees them. Nothing here writes a file.
 */
export interface FixRequest {
  readonly issue: IssueInput;
  readonly diagnostic?: DiagnosticInput;
  readonly llm: LlmClient | null;
  /** Unsaved text of open documents, by workspace-relative path. */
  readonly overlay?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export const NEEDS_MODEL = 'Proposing a patch needs a language model, and none is configured.';

export function proposeFix(
  index: AnalysisIndex,
  root: string,
  request: FixRequest,
): Promise<Result<FixProposal, PatchFailure>> {
  return withTrace(async () => {
    if (!request.llm) return fail('model_unavailable', NEEDS_MODEL);
    const analysis = await analyzeIssue(index, request.issue, request.diagnostic);
    if (!analysis.ok) return analysis;
    return proposePatch({
      llm: request.llm,
      issue: request.issue,
      analysis: analysis.value,
      files: new WorkspaceFiles(root, new Map(Object.entries(request.overlay ?? {}))),
      ...(request.diagnostic ? { diagnostic: request.diagnostic } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
    });
  });
}

/** A diagnostic stated as an issue: its message is the title, its place and origin the body. */
export function issueFromDiagnostic(diagnostic: DiagnosticInput): IssueInput {
  const origin = [diagnostic.source, diagnostic.code].filter(Boolean).join(' ');
  return {
    title: diagnostic.message.split('\n')[0]!.slice(0, 200),
    body: `${origin ? `${origin} reports` : 'Reported'} at ${diagnostic.path}:${diagnostic.startLine}:\n${diagnostic.message}`,
    number: null,
    repo: null,
  };
}
