import { z } from 'zod';
import type { ChunkLevel } from '../model';

/**
 * The resolver's data: what goes in (an issue, a diagnostic), what the analysis finds, the patch a
 * model proposes (exact search-and-replace blocks), and what running the project's tests and
 * drafting a pull request report. Plain data: it crosses the worker boundary as is.
 */

/** An issue as typed by the user or read from GitHub. */
export interface IssueInput {
  readonly title: string;
  readonly body: string;
  /** The GitHub issue number; null for free text. */
  readonly number: number | null;
  /** `owner/repo` of a GitHub issue; null for free text. */
  readonly repo: string | null;
}

/** A problem the editor reports at a place in a file, with the lines around it. */
export interface DiagnosticInput {
  /** Workspace-relative path of the file. */
  readonly path: string;
  readonly message: string;
  readonly code?: string;
  readonly source?: string;
  /** 1-based inclusive lines of the diagnostic's range. */
  readonly startLine: number;
  readonly endLine: number;
  /** The lines around the range as the editor shows them (unsaved text included). */
  readonly context: string;
  /** The 1-based line `context` starts on. */
  readonly contextStartLine: number;
}

export type FixScope = 'single_function' | 'multiple_files' | 'unknown';

/** One place the analysis points at, with the chain of definitions it sits in. */
export interface AnalysisChunk {
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly level: ChunkLevel;
  readonly chunkId: string;
  /** The definition's name (`Cart.total`), the file path for file chunks. */
  readonly name: string;
  /** Enclosing definitions, outermost first: folder, file, class. */
  readonly parents: readonly string[];
  readonly score: number;
  readonly why: string;
}

export interface IssueAnalysis {
  readonly relevantFiles: readonly string[];
  readonly relevantChunks: readonly AnalysisChunk[];
  /** Identifiers of the issue text that the index defines. */
  readonly identifiers: readonly string[];
  readonly suggestedFixScope: FixScope;
  /** The combined query that went through search. */
  readonly query: string;
}

/** A patch block as the model writes it: `original` must occur exactly once in the file. */
export const CodePatchSchema = z.object({
  file: z.string().min(1).describe('Workspace-relative path of the file to change'),
  original: z
    .string()
    .min(1)
    .describe('The exact text to replace, copied verbatim from the file, occurring once in it'),
  replacement: z.string().describe('The text that replaces `original`'),
  explanation: z.string().min(1).describe('Why this change fixes the problem'),
  confidence: z.number().min(0).max(1),
  otherFilesAffected: z
    .array(z.string())
    .describe('Other files that may need a change or a look because of this one'),
});
export type CodePatch = z.infer<typeof CodePatchSchema>;

export const PatchProposalSchema = z.object({
  patches: z.array(CodePatchSchema).min(1),
});
export type PatchProposal = z.infer<typeof PatchProposalSchema>;

/** Why a patch block cannot be applied, in words the model and the user both understand. */
export interface PatchRefusal {
  readonly file: string;
  readonly reason: string;
}

/** One file's change, computed in memory: nothing is written until the user accepts. */
export interface FileEdit {
  /** Workspace-relative, '/'-separated. */
  readonly file: string;
  readonly before: string;
  readonly after: string;
  /** The character ranges of `before` that are replaced, in order. */
  readonly replacements: readonly {
    readonly start: number;
    readonly end: number;
    readonly text: string;
  }[];
}

export interface FixProposal {
  readonly analysis: IssueAnalysis;
  readonly patches: readonly CodePatch[];
  readonly edits: readonly FileEdit[];
  /** Model calls made: 1, or 2 when the first patch was refused and the reasons fed back. */
  readonly attempts: number;
  /** The reasons the first patch was refused, when it was (fed back to the model). */
  readonly retriedFor: readonly PatchRefusal[];
}

export type TestFramework =
  'pytest' | 'unittest' | 'jest' | 'vitest' | 'mocha' | 'node' | 'npm' | 'go' | 'cargo' | 'unknown';

export interface TestResult {
  readonly passed: boolean;
  readonly framework: TestFramework;
  /** The command as run, for the user to read; empty when nothing ran. */
  readonly command: string;
  readonly totalTests: number | null;
  readonly passedTests: number | null;
  readonly failedTests: readonly string[];
  readonly failedCount: number;
  /** The first 500 characters of the output, or why nothing ran. */
  readonly outputSummary: string;
  readonly timedOut: boolean;
  readonly exitCode: number | null;
  readonly durationMs: number;
}

export const NO_TEST_SUITE = 'No test suite found — cannot verify this patch';

export interface PullRequestResult {
  readonly dryRun: boolean;
  /** The created pull request; null on a dry run or when it was not created. */
  readonly url: string | null;
  readonly title: string;
  readonly body: string;
  readonly branch: string;
  /** Why no pull request was made (no tests, tests failed); null when it was or would be. */
  readonly skipped: string | null;
}
