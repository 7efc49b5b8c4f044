import type { ChatAnswer } from '../../extension/chat/protocol';
import { linkMentions, placesList, sourcesList } from './citations';
import { detailsSection } from './details';
import { fixCard } from './fix-card';
import { h, icon } from './dom';
import { drawDiagrams, renderMarkdown } from './markdown';
import { attachmentLabel, type Entry } from './state';
import { inlineCodeParts } from './text';

/** One conversation entry: the question and its answer, live while it streams, complete after. */
export interface AnswerActions {
  /** Asks a new question (a follow-up chip). */
  ask(question: string): void;
  /** Asks this entry's question again (after it was interrupted, or to regenerate the answer). */
  retry(entry: Entry): void;
  /** Called after the entry's content changed size, so the conversation can keep the end in view. */
  rendered(): void;
  /** "Fix this": asks for a patch for what this answer is about. */
  fixThis(entry: Entry): void;
  previewFix(entry: Entry): void;
  runFixTests(entry: Entry): void;
}

export class AnswerView {
  readonly element: HTMLElement;
  private readonly response = h('div', { class: 'response' });
  private frame = 0;

  constructor(
    readonly entry: Entry,
    private readonly actions: AnswerActions,
  ) {
    this.element = h(
      'article',
      { class: 'entry', 'data-testid': 'answer', 'data-id': entry.id },
      questionBlock(entry),
      this.response,
    );
    this.render();
  }

  /** Re-renders at the next frame at most once: streamed text arrives faster than the screen repaints. */
  scheduleRender(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.render();
    });
  }

  render(): void {
    cancelAnimationFrame(this.frame);
    this.frame = 0;
    this.element.dataset['status'] = this.entry.status;
    this.response.replaceChildren(...this.parts().filter((part) => part !== null));
    this.actions.rendered();
  }

  private parts(): (Node | null)[] {
    const { entry } = this;
    switch (entry.status) {
      case 'streaming':
        return [
          stepsList(entry.steps),
          entry.text ? answerText(entry.text, true) : working(entry.steps.length > 0),
        ];
      case 'done':
        return entry.answer ? this.finished(entry.answer) : [];
      case 'error':
        return [
          entry.text ? answerText(entry.text, false) : null,
          h('div', { class: 'error', role: 'alert' }, entry.error ?? 'The answer failed.'),
        ];
      case 'stopped':
        return [
          entry.text ? answerText(entry.text, false) : null,
          h('p', { class: 'note' }, 'Stopped.'),
        ];
      case 'interrupted':
        return [entry.text ? answerText(entry.text, false) : null, this.interrupted()];
    }
  }

  private finished(answer: ChatAnswer): (Node | null)[] {
    const text = answerText(answer.answer, false);
    linkMentions(text, answer.citations);
    void drawDiagrams(text).then(() => this.actions.rendered());
    return [
      answer.evidenceOnly
        ? h(
            'div',
            { class: 'evidence-only', 'data-testid': 'evidence-only-label' },
            'Evidence only — no model wrote this answer; it lists what the search found.',
          )
        : null,
      text,
      notices(answer.notices),
      // Without a model the places are the answer: each with its code and why it matters.
      answer.evidenceOnly ? placesList(answer.citations) : sourcesList(answer.citations),
      this.followUps(answer.followUps),
      this.answerActions(answer),
      this.fix(),
      detailsSection(answer),
    ];
  }

  private answerActions(answer: ChatAnswer): HTMLElement {
    const copy = h(
      'button',
      {
        type: 'button',
        class: 'chip',
        'data-testid': 'copy-answer',
        title: 'Copy the answer and its sources',
      },
      icon('copy'),
      'Copy answer',
    );
    copy.addEventListener('click', () => {
      navigator.clipboard.writeText(answerAsText(answer)).then(
        () => flashText(copy, 'Copied'),
        () => flashText(copy, 'Copy failed'),
      );
    });
    const regenerate = h(
      'button',
      {
        type: 'button',
        class: 'chip',
        'data-testid': 'regenerate',
        title: 'Ask this question again',
      },
      'Regenerate',
    );
    regenerate.addEventListener('click', () => this.actions.retry(this.entry));
    return h(
      'div',
      { class: 'answer-actions', role: 'group', 'aria-label': 'Answer actions' },
      copy,
      regenerate,
    );
  }

  /** The fix card once a fix was asked for, else the "Fix this" button. */
  private fix(): HTMLElement {
    const { entry } = this;
    if (entry.fix)
      return fixCard(entry.fix, {
        preview: () => this.actions.previewFix(entry),
        runTests: () => this.actions.runFixTests(entry),
      });
    const button = h(
      'button',
      { type: 'button', class: 'chip', 'data-testid': 'fix-this' },
      'Fix this',
    );
    button.addEventListener('click', () => this.actions.fixThis(entry));
    return h('div', { class: 'follow-ups', role: 'group', 'aria-label': 'Fix' }, button);
  }

  private followUps(questions: readonly string[]): HTMLElement | null {
    if (questions.length === 0) return null;
    const chips = questions.map((question) => {
      const chip = h(
        'button',
        { type: 'button', class: 'chip follow-up', 'data-testid': 'follow-up' },
        ...inlineCodeParts(question).map((part) =>
          part.code ? h('code', {}, part.text) : part.text,
        ),
      );
      chip.addEventListener('click', () => this.actions.ask(question));
      return chip;
    });
    return h(
      'div',
      { class: 'follow-ups', role: 'group', 'aria-label': 'Follow-up questions' },
      ...chips,
    );
  }

  private interrupted(): HTMLElement {
    const again = h('button', { type: 'button', class: 'chip' }, 'Ask again');
    again.addEventListener('click', () => this.actions.retry(this.entry));
    return h('p', { class: 'note' }, 'This answer was interrupted when the view closed. ', again);
  }
}

/** The answer as plain text with its sources, for the clipboard. */
function answerAsText(answer: ChatAnswer): string {
  const sources = answer.citations.map(
    (citation, index) =>
      `${index + 1}. ${citation.path}:${citation.startLine}-${citation.endLine}${citation.why ? `  ${citation.why}` : ''}`,
  );
  return sources.length
    ? `${answer.answer}\n\nSources:\n${sources.join('\n')}\n`
    : `${answer.answer}\n`;
}

/** Shows a word on the button for a moment, then puts its content back. */
function flashText(button: HTMLButtonElement, word: string): void {
  const content = [...button.childNodes];
  button.replaceChildren(word);
  setTimeout(() => button.replaceChildren(...content), 1500);
}

function questionBlock(entry: Entry): HTMLElement {
  return h(
    'div',
    { class: 'question', title: entry.label ? entry.question : undefined },
    h('div', { class: 'question-text' }, entry.label ?? entry.question),
    entry.attachment
      ? h(
          'span',
          { class: 'chip attachment' },
          icon('attach'),
          h('span', { class: 'chip-text' }, attachmentLabel(entry.attachment)),
        )
      : null,
  );
}

function answerText(markdown: string, streaming: boolean): HTMLElement {
  const element = h('div', {
    class: 'answer-text markdown',
    'data-testid': 'answer-text',
    'aria-busy': streaming ? 'true' : 'false',
  });
  element.appendChild(renderMarkdown(markdown));
  return element;
}

function stepsList(steps: readonly string[]): HTMLElement | null {
  if (steps.length === 0) return null;
  return h(
    'ol',
    { class: 'steps', 'aria-label': 'Agent steps' },
    ...steps.map((step) => h('li', {}, step)),
  );
}

function working(searching: boolean): HTMLElement {
  return h(
    'p',
    { class: 'working', role: 'status' },
    h('span', { class: 'spinner', 'aria-hidden': 'true' }),
    searching ? 'Working…' : 'Searching the index…',
  );
}

function notices(items: readonly string[]): HTMLElement | null {
  if (items.length === 0) return null;
  return h('ul', { class: 'notices' }, ...items.map((notice) => h('li', { role: 'note' }, notice)));
}
