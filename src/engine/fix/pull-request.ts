import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { elapsedMs, getLogger } from '../log/logger';
import { describeError, fail, ok, type Result } from '../util/result';
import { openDraftPullRequest, type GitHubSettings } from './github';
import type { CodePatch, FileEdit, IssueInput, PullRequestResult, TestResult } from './model';

/**
 * A draft pull request for a verified patch. Dry run unless the caller says otherwise: the title,
 * body and branch are always prepared, but git and GitHub are only touched on a real run. No pull
 * request without passing tests. The branch is made in a temporary git worktree, so the user's
 * checkout, index and files stay as they are.
 */

const log = getLogger('fix.pr');
const run = promisify(execFile);

export interface PullRequestRequest {
  readonly root: string;
  readonly issue: IssueInput;
  readonly patches: readonly CodePatch[];
  readonly edits: readonly FileEdit[];
  readonly tests: TestResult;
  /** True unless the caller explicitly asks for a real pull request. */
  readonly dryRun?: boolean;
  readonly github: GitHubSettings;
  readonly remote?: string;
  /** The branch the pull request targets; default: the repository's current branch. */
  readonly base?: string;
}

export function branchName(issue: IssueInput): string {
  return `oracle/fix-issue-${issue.number ?? 'local'}`;
}

export function pullRequestTitle(issue: IssueInput): string {
  return `[Auto] Fix: ${issue.title}`;
}

export function pullRequestBody(
  issue: IssueInput,
  patches: readonly CodePatch[],
  tests: TestResult,
): string {
  const confidence = Math.min(...patches.map((patch) => patch.confidence));
  const files = [...new Set(patches.map((patch) => patch.file))];
  const affected = [...new Set(patches.flatMap((patch) => patch.otherFilesAffected))];
  const testSummary =
    tests.framework === 'unknown'
      ? tests.outputSummary
      : `${tests.passed ? 'Passed' : 'Failed'} (${tests.framework}: ${tests.passedTests ?? '?'} passed, ${tests.failedCount} failed, ${tests.totalTests ?? '?'} total${tests.timedOut ? ', timed out' : ''}) — \`${tests.command}\``;
  return [
    ...(issue.number ? [`Closes #${issue.number}`, ''] : []),
    '## What was wrong and how this fixes it',
    ...patches.map((patch) => `- \`${patch.file}\`: ${patch.explanation}`),
    '',
    `**Confidence:** ${confidence.toFixed(2)}`,
    '',
    `**Files changed:** ${files.map((file) => `\`${file}\``).join(', ')}`,
    ...(affected.length
      ? [
          '',
          `**Other files that may be affected:** ${affected.map((file) => `\`${file}\``).join(', ')}`,
        ]
      : []),
    '',
    `**Tests:** ${testSummary}`,
    '',
    '_Proposed by Code Oracle and checked by the project’s own tests; review before merging._',
  ].join('\n');
}

export async function createPullRequest(request: PullRequestRequest): Promise<PullRequestResult> {
  const started = performance.now();
  const dryRun = request.dryRun ?? true;
  const { issue, tests } = request;
  const preview: PullRequestResult = {
    dryRun,
    url: null,
    title: pullRequestTitle(issue),
    body: pullRequestBody(issue, request.patches, tests),
    branch: branchName(issue),
    skipped: null,
  };
  log.info('pr_creation_started', {
    issue_number: issue.number,
    repo_full_name: issue.repo,
    dry_run: dryRun,
    tests_passed: tests.passed,
  });
  if (tests.framework === 'unknown') {
    log.warn('pr_skipped_no_tests', {
      issue_number: issue.number,
      test_framework: tests.framework,
      test_output_summary: tests.outputSummary,
    });
    return { ...preview, skipped: tests.outputSummary };
  }
  if (!tests.passed) {
    log.warn('pr_skipped_tests_failed', {
      issue_number: issue.number,
      failed_tests: tests.failedCount,
    });
    return { ...preview, skipped: 'The tests did not pass with this patch: no pull request.' };
  }
  let result = preview;
  if (!dryRun) {
    const opened = await pushAndOpen(request, preview);
    result = opened.ok
      ? { ...preview, url: opened.value }
      : { ...preview, skipped: opened.error.message };
  }
  log.info('pr_creation_completed', {
    issue_number: issue.number,
    dry_run: dryRun,
    pr_url: result.url,
    branch_name: result.branch,
    duration_ms: elapsedMs(started),
  });
  return result;
}

/** Runs git; its output as written (a file's text from `git show` must compare exactly). */
async function git(cwd: string, ...args: string[]): Promise<Result<string>> {
  try {
    const { stdout } = await run('git', args, { cwd, maxBuffer: 64 * 1024 * 1024 });
    return ok(stdout);
  } catch (cause) {
    const stderr = (cause as { stderr?: string }).stderr?.trim();
    log.warn('git_failed', { command: `git ${args[0]}`, error: stderr || describeError(cause) });
    return fail('io_error', `git ${args[0]} failed: ${stderr || describeError(cause)}`);
  }
}

/** Commits the patch on the fix branch in a temporary worktree, pushes it, opens the draft. */
async function pushAndOpen(
  request: PullRequestRequest,
  preview: PullRequestResult,
): Promise<Result<string>> {
  const { root, issue } = request;
  if (!issue.number || !issue.repo)
    return fail('invalid_input', 'A pull request needs a GitHub issue (owner/repo#N) to close.');
  const current = request.base
    ? ok(request.base)
    : await git(root, 'rev-parse', '--abbrev-ref', 'HEAD');
  if (!current.ok) return current;
  const baseBranch = current.value.trim();
  // the commit holds the patch on top of HEAD: each file must be committed as the patch saw it
  for (const edit of request.edits) {
    const committed = await git(root, 'show', `HEAD:${edit.file}`);
    if (!committed.ok || committed.value !== edit.before)
      return fail(
        'invalid_input',
        `${edit.file} has changes that are not committed; commit or stash them before opening a pull request.`,
      );
  }
  const worktree = await fs.mkdtemp(path.join(tmpdir(), 'code-oracle-pr-'));
  const added = await git(root, 'worktree', 'add', '-B', preview.branch, worktree, 'HEAD');
  if (!added.ok) {
    await fs.rm(worktree, { recursive: true, force: true });
    return added;
  }
  try {
    for (const edit of request.edits)
      await fs.writeFile(path.join(worktree, edit.file), edit.after);
    const steps: string[][] = [
      ['add', '--', ...request.edits.map((edit) => edit.file)],
      ['commit', '-m', `Fix #${issue.number}: ${issue.title}`, '-m', `Closes #${issue.number}`],
      ['push', '--set-upstream', request.remote ?? 'origin', preview.branch],
    ];
    for (const step of steps) {
      const done = await git(worktree, ...step);
      if (!done.ok) return done;
    }
  } finally {
    await git(root, 'worktree', 'remove', '--force', worktree);
    await fs.rm(worktree, { recursive: true, force: true });
  }
  return openDraftPullRequest(
    {
      repo: issue.repo,
      title: preview.title,
      body: preview.body,
      head: preview.branch,
      base: baseBranch,
    },
    request.github,
  );
}
