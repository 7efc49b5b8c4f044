import type { ChatFix } from '../../extension/chat/protocol';
import { sourcesList } from './citations';
import { h } from './dom';

/**
 * The card under an answer for a fix asked from it ("Fix this"): the model's explanation, the
 * places found (citations that open the lines), the diff, Preview (VS Code's refactor preview:
 * nothing is written without the user's Apply) and Run tests, and the tests' result.
 */
export interface FixCardActions {
  preview(): void;
  runTests(): void;
}

const HEADINGS: Record<ChatFix['status'], string> = {
  proposing: 'Proposing a fix…',
  proposed: 'Proposed fix',
  applied: 'Fix applied (unsaved; undo reverts it)',
  discarded: 'Fix discarded',
  failed: 'No fix',
};

export function fixCard(fix: ChatFix, actions: FixCardActions): HTMLElement {
  const heading = h(
    'h3',
    {},
    HEADINGS[fix.status],
    fix.confidence === null ? null : ` · confidence ${fix.confidence.toFixed(2)}`,
  );
  if (fix.status === 'proposing' || fix.status === 'failed')
    return h(
      'section',
      {
        class: 'fix',
        'data-testid': 'fix',
        'aria-busy': fix.status === 'proposing' ? 'true' : 'false',
      },
      heading,
      fix.error ? h('div', { class: 'error', role: 'alert' }, fix.error) : null,
    );
  const preview = h(
    'button',
    { type: 'button', class: 'chip', 'data-testid': 'fix-preview' },
    'Preview',
  );
  preview.addEventListener('click', () => actions.preview());
  const runTests = h(
    'button',
    { type: 'button', class: 'chip', 'data-testid': 'fix-tests' },
    'Run tests',
  );
  runTests.addEventListener('click', () => actions.runTests());
  return h(
    'section',
    { class: 'fix', 'data-testid': 'fix' },
    heading,
    h('p', { class: 'fix-explanation' }, fix.explanation),
    h('pre', { class: 'fix-diff' }, fix.diff),
    h(
      'div',
      { class: 'follow-ups', role: 'group', 'aria-label': 'Fix actions' },
      preview,
      runTests,
    ),
    fix.tests
      ? h('p', { class: 'note', 'data-testid': 'fix-result' }, `Tests: ${fix.tests}`)
      : null,
    sourcesList(fix.citations),
  );
}
