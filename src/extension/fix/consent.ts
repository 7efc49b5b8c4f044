import type { FileEdit, TestResult } from '../../engine/fix/model';
import { detectTestFramework, runProjectTests } from '../../engine/fix/project-tests';

/**
 * The one door to running a project's tests from the editor: only in a trusted workspace, only
 * after the user said yes to the exact command, and always on a patched copy. It imports nothing
 * from `vscode`, so the rule is tested on its own.
 */
export interface TestConsent {
  readonly trusted: boolean;
  /** Asks the user; true only for an explicit yes. */
  confirm(command: string): Promise<boolean>;
}

export type TestOutcome =
  | { readonly ran: true; readonly result: TestResult }
  | { readonly ran: false; readonly reason: string };

export const RESTRICTED_MODE_TESTS =
  'Restricted Mode: Code Oracle runs no tests in a workspace you have not trusted.';

export async function runTestsWithConsent(
  root: string,
  edits: readonly FileEdit[],
  consent: TestConsent,
  signal?: AbortSignal,
): Promise<TestOutcome> {
  if (!consent.trusted) return { ran: false, reason: RESTRICTED_MODE_TESTS };
  const command = await detectTestFramework(root);
  // nothing to agree to: the result says no suite was found
  if (!command) return { ran: true, result: await runProjectTests({ root, edits }) };
  if (!(await consent.confirm(command.argv.join(' '))))
    return { ran: false, reason: 'The tests were not run.' };
  return {
    ran: true,
    result: await runProjectTests({ root, edits, ...(signal ? { signal } : {}) }),
  };
}
