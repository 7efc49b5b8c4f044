import { writeEdits } from '../../engine/fix/apply';
import { unifiedDiff } from '../../engine/fix/diff';
import {
  fetchIssue,
  gitHubSettingsFromEnv,
  parseIssueReference,
  type GitHubSettings,
} from '../../engine/fix/github';
import type {
  FixProposal,
  IssueInput,
  PullRequestResult,
  TestResult,
} from '../../engine/fix/model';
import type { PatchFailure } from '../../engine/fix/patch';
import { DEFAULT_TEST_TIMEOUT_MS, runProjectTests } from '../../engine/fix/project-tests';
import { createPullRequest } from '../../engine/fix/pull-request';
import { NEEDS_MODEL } from '../../engine/fix/resolver';
import { EngineFailure, type Result } from '../../engine/util/result';
import { ENGINE_FLAGS, engineOptions, logLevel, parse, positiveInteger, UsageError } from '../args';
import { json, note, out } from '../output';
import {
  ensureIndexed,
  llmFromFlags,
  unwrapOrThrow,
  withEngine,
  type ModelFlags,
} from '../session';

export const FIX_HELP = `code-oracle fix DIR "issue text" | --issue owner/repo#N|URL [--test] [--write] [--pr [--push]]
                 [--timeout SECONDS] [--provider …] [--llm-model NAME] [--base-url URL] [--json]
  Turns an issue into a patch: finds the code involved (the issue's identifiers the index defines,
  searched with function hits weighted up), asks the model for exact search-and-replace blocks
  (each must occur exactly once in its file, or the model is told why and asked once more), and
  prints the analysis and the patch as a unified diff. Nothing is written unless --write.
  --test runs the project's own tests (pytest, unittest, jest, vitest, mocha, node --test, npm test,
  go test, cargo test) on a patched copy of DIR, never on DIR itself (default timeout 120 s).
  --pr runs the tests and prints the draft pull request (branch oracle/fix-issue-N, body with
  Closes #N); only --push really pushes the branch and opens the draft on GitHub, and never when the
  tests did not pass. GitHub: GITHUB_TOKEN (or GH_TOKEN), GITHUB_API_URL for another server.
  The model comes from the flags or CODE_ORACLE_LLM_PROVIDER / _MODEL / _BASE_URL / _API_KEY.`;

interface FixOutcome {
  readonly issue: IssueInput;
  readonly proposal: FixProposal;
  readonly diffs: Record<string, string>;
  readonly tests: TestResult | null;
  readonly pullRequest: PullRequestResult | null;
  readonly written: readonly string[];
}

export async function fixCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {
    ...ENGINE_FLAGS,
    issue: { type: 'string' },
    test: { type: 'boolean' },
    write: { type: 'boolean' },
    pr: { type: 'boolean' },
    push: { type: 'boolean' },
    timeout: { type: 'string' },
    provider: { type: 'string' },
    'llm-model': { type: 'string' },
    'base-url': { type: 'string' },
    remote: { type: 'string' },
  });
  const hasText = positionals.length === 2;
  if (positionals.length < 1 || positionals.length > 2 || hasText === !!values.issue)
    throw new UsageError('fix needs a folder and either an issue text or --issue owner/repo#N');
  if (values.push && !values.pr) throw new UsageError('--push only goes with --pr');
  const timeoutMs = values.timeout
    ? positiveInteger(values.timeout, '--timeout') * 1000
    : DEFAULT_TEST_TIMEOUT_MS;
  const llm = modelFrom(values);
  const github = gitHubSettingsFromEnv();
  const issue = hasText
    ? issueFromText(positionals[1]!)
    : await issueFromGitHub(values.issue!, github);

  await withEngine(
    engineOptions(positionals[0]!, values),
    logLevel(values['log-level'], 'error'),
    async (engine) => {
      await ensureIndexed(engine);
      const proposal = orExplain(await engine.proposeFix({ issue, llm }));
      const diffs = Object.fromEntries(
        proposal.edits.map((edit) => [edit.file, unifiedDiff(edit.file, edit.before, edit.after)]),
      );
      if (!values.json) printProposal(proposal, diffs);
      const runTests = values.test || values.pr;
      if (runTests && !values.json) note(`Running the project's tests on a patched copy …`);
      const tests = runTests
        ? await runProjectTests({ root: engine.root, edits: proposal.edits, timeoutMs })
        : null;
      if (tests && !values.json) printTests(tests);
      const pullRequest =
        values.pr && tests
          ? await createPullRequest({
              root: engine.root,
              issue,
              patches: proposal.patches,
              edits: proposal.edits,
              tests,
              dryRun: !values.push,
              github,
              ...(values.remote ? { remote: values.remote } : {}),
            })
          : null;
      if (pullRequest && !values.json) printPullRequest(pullRequest);
      // a patch the tests were asked to check is written only when they pass
      const verified = !tests || tests.passed;
      const written =
        values.write && verified
          ? unwrapOrThrow(await writeEdits(engine.root, proposal.edits))
          : [];
      const outcome: FixOutcome = { issue, proposal, diffs, tests, pullRequest, written };
      if (values.json) json(outcome);
      else if (written.length) out(`\nWritten: ${written.join(', ')}`);
      else
        out(
          values.write
            ? '\nNothing was written: the tests did not pass with this patch.'
            : '\nNothing was written (dry run): add --write to apply the patch.',
        );
      const problem =
        pullRequest?.skipped ?? (verified ? null : 'The tests did not pass with this patch.');
      if (problem) throw new EngineFailure({ code: 'invalid_input', message: problem });
    },
  );
}

function modelFrom(values: ModelFlags) {
  const llm = llmFromFlags(values);
  if (!llm)
    throw new EngineFailure({
      code: 'model_unavailable',
      message: `${NEEDS_MODEL} Set CODE_ORACLE_LLM_PROVIDER (anthropic, ollama or openai) with its key in ANTHROPIC_API_KEY or CODE_ORACLE_LLM_API_KEY, or pass --provider.`,
    });
  return llm;
}

/** The first line is the title, the rest the body. */
function issueFromText(text: string): IssueInput {
  const [title = '', ...rest] = text.trim().split('\n');
  if (!title.trim()) throw new UsageError('the issue text is empty');
  return { title: title.trim(), body: rest.join('\n').trim(), number: null, repo: null };
}

async function issueFromGitHub(reference: string, github: GitHubSettings): Promise<IssueInput> {
  const parsed = parseIssueReference(reference);
  if (!parsed)
    throw new UsageError(`--issue needs owner/repo#N or an issue URL, got "${reference}"`);
  return unwrapOrThrow(await fetchIssue(parsed, github));
}

/** The patch's failure, with every refusal the model was told about. */
function orExplain(result: Result<FixProposal, PatchFailure>): FixProposal {
  if (result.ok) return result.value;
  for (const refusal of result.error.refusals ?? [])
    note(`refused: ${refusal.file}: ${refusal.reason}`);
  throw new EngineFailure(result.error);
}

function printProposal(proposal: FixProposal, diffs: Record<string, string>): void {
  const { analysis } = proposal;
  out(`Analysis (${analysis.suggestedFixScope.replace('_', ' ')})`);
  out(`  identifiers in the index: ${analysis.identifiers.join(', ') || 'none'}`);
  out(`  files: ${analysis.relevantFiles.join(', ') || 'none'}`);
  for (const chunk of analysis.relevantChunks)
    out(
      `  ${chunk.path}:${chunk.startLine}-${chunk.endLine}  ${chunk.name}${chunk.parents.length ? `  (in ${chunk.parents.join(' › ')})` : ''}`,
    );
  if (proposal.retriedFor.length) {
    out('\nThe first patch was refused and the model was told why:');
    for (const refusal of proposal.retriedFor) out(`  ${refusal.file}: ${refusal.reason}`);
  }
  out('\nPatch');
  for (const patch of proposal.patches)
    out(
      `  ${patch.file} (confidence ${patch.confidence.toFixed(2)}): ${patch.explanation}${patch.otherFilesAffected.length ? `\n    may also affect: ${patch.otherFilesAffected.join(', ')}` : ''}`,
    );
  out('');
  for (const diff of Object.values(diffs)) process.stdout.write(diff);
}

function printTests(tests: TestResult): void {
  if (tests.framework === 'unknown') return out(`\nTests: ${tests.outputSummary}`);
  const counts = `${tests.passedTests ?? '?'} passed, ${tests.failedCount} failed, ${tests.totalTests ?? '?'} total`;
  out(
    `\nTests (${tests.command}): ${tests.passed ? 'passed' : tests.timedOut ? 'timed out' : 'FAILED'} — ${counts}, ${(tests.durationMs / 1000).toFixed(1)} s`,
  );
  for (const name of tests.failedTests) out(`  failed: ${name}`);
  if (!tests.passed) out(tests.outputSummary.replace(/^/gm, '  | '));
}

function printPullRequest(pr: PullRequestResult): void {
  out(`\nDraft pull request${pr.dryRun ? ' (dry run: nothing pushed, GitHub not called)' : ''}`);
  if (pr.skipped) return out(`  not made: ${pr.skipped}`);
  out(`  branch: ${pr.branch}`);
  out(`  title: ${pr.title}`);
  if (pr.url) out(`  url: ${pr.url}`);
  out(pr.body.replace(/^/gm, '  > '));
}
