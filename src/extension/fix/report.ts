import { unifiedDiff } from '../../engine/fix/diff';
import type { FixProposal, IssueInput, TestResult } from '../../engine/fix/model';

/**
 * The proposed fix as a transcript document: the issue, the model's explanation and confidence,
 * the places the analysis found (as `path:start-end` lines the transcript's link provider makes
 * clickable), the diff, and the test result once there is one. It imports nothing from `vscode`.
 */
export function fixReport(
  issue: IssueInput,
  proposal: FixProposal,
  tests: TestResult | null,
): string {
  const { analysis } = proposal;
  const confidence = Math.min(...proposal.patches.map((patch) => patch.confidence));
  const evidence = analysis.relevantChunks.map(
    (chunk) =>
      `  - ${chunk.path}:${chunk.startLine}-${chunk.endLine} — ${chunk.name}${chunk.parents.length ? ` (in ${chunk.parents.join(' › ')})` : ''}`,
  );
  const retried = proposal.retriedFor.map((refusal) => `  - ${refusal.file}: ${refusal.reason}`);
  return [
    `# Code Oracle fix: ${issue.title}${issue.number ? ` (#${issue.number})` : ''}`,
    '',
    ...proposal.patches.map((patch) => `${patch.file}: ${patch.explanation}`),
    '',
    `Confidence ${confidence.toFixed(2)} · fix scope: ${analysis.suggestedFixScope.replace('_', ' ')} · identifiers in the index: ${analysis.identifiers.join(', ') || 'none'}`,
    ...(retried.length
      ? ['', 'The first patch was refused and the model was told why:', ...retried]
      : []),
    '',
    'Sources:',
    ...evidence,
    '',
    'Patch:',
    ...proposal.edits.map((edit) => unifiedDiff(edit.file, edit.before, edit.after).trimEnd()),
    '',
    tests
      ? `Tests: ${testLine(tests)}`
      : 'Tests: not run yet (“Code Oracle: Run Tests for the Proposed Fix”).',
  ].join('\n');
}

function testLine(tests: TestResult): string {
  if (tests.framework === 'unknown') return tests.outputSummary;
  return `${tests.passed ? 'passed' : tests.timedOut ? 'timed out' : 'FAILED'} — ${tests.passedTests ?? '?'} passed, ${tests.failedCount} failed, ${tests.totalTests ?? '?'} total (${tests.command})${tests.failedTests.length ? `; failed: ${tests.failedTests.join(', ')}` : ''}`;
}
