import type { Attachment, ChatMode, ToWebview } from '../../extension/chat/protocol';
import { AnswerView } from './answer';
import { h, show } from './dom';
import { post } from './messages';
import { attachmentRef, persist, persistLater, type ChatState, type Entry } from './state';

/** The list of questions and answers: sends questions and routes the host's answer messages. */
export interface Question {
  readonly question: string;
  readonly mode: ChatMode;
  readonly attachment?: Attachment | null;
  readonly label?: string;
}

type AnswerMessage = Extract<
  ToWebview,
  { type: 'answerStart' | 'answerText' | 'agentStep' | 'answerDone' | 'answerError' | 'fixUpdate' }
>;

/** How close to the end (px) counts as "reading the latest": then new text keeps the end in view. */
const STICK_PX = 48;

export class Conversation {
  readonly element = h('div', { class: 'conversation', role: 'log', 'aria-label': 'Conversation' });
  private readonly hint = h(
    'p',
    { class: 'hint' },
    'Ask a question about this workspace. Answers cite the exact lines they rely on; click a citation to open it.',
  );
  private readonly views = new Map<string, AnswerView>();
  private stick = true;
  private autoScrollTop = -1;
  private counter = 0;

  constructor(
    private readonly state: ChatState,
    private readonly busyChanged: (busy: boolean) => void,
  ) {
    this.element.appendChild(this.hint);
    for (const entry of state.entries) this.add(entry);
    this.element.addEventListener('scroll', () => {
      // Scroll events arrive a frame late: one from our own scroll may see content added since.
      if (this.element.scrollTop === this.autoScrollTop) return;
      const { scrollHeight, scrollTop, clientHeight } = this.element;
      this.stick = scrollHeight - scrollTop - clientHeight < STICK_PX;
    });
    this.changed();
  }

  ask(request: Question): void {
    const id = `${Date.now().toString(36)}-${++this.counter}`;
    const entry: Entry = {
      id,
      question: request.question,
      mode: request.mode,
      status: 'streaming',
      text: '',
      steps: [],
      ...(request.label ? { label: request.label } : {}),
      ...(request.attachment ? { attachment: attachmentRef(request.attachment) } : {}),
    };
    this.state.entries.push(entry);
    this.stick = true;
    this.add(entry);
    const sessionId = this.state.sessionId;
    post({
      type: 'ask',
      id,
      question: request.question,
      mode: request.mode,
      ...(request.attachment ? { attachment: request.attachment } : {}),
      ...(sessionId ? { sessionId } : {}),
    });
    this.changed();
  }

  /** Stops every answer still streaming; whatever text arrived stays. */
  stop(): void {
    for (const entry of this.state.entries) {
      if (entry.status !== 'streaming') continue;
      post({ type: 'stop', id: entry.id });
      entry.status = 'stopped';
      this.views.get(entry.id)?.render();
    }
    this.changed();
  }

  handle(message: AnswerMessage): void {
    const view = this.views.get(message.id);
    if (!view) return;
    const entry = view.entry;
    // After Stop, the host's remaining stream (and the error its abort raises) is not wanted;
    // a complete answer that raced the stop still is.
    if (message.type === 'fixUpdate') {
      entry.fix = message.fix;
      view.render();
      return persist(this.state);
    }
    if (entry.status === 'stopped' && message.type !== 'answerDone') return;
    const status = entry.status;
    applyMessage(entry, message, this.state);
    if (message.type === 'answerText' || message.type === 'agentStep') view.scheduleRender();
    else view.render();
    // Streamed text and steps are saved at most once a second (a reload mid-answer keeps what had
    // come), a new status at once: saving per token would serialise the whole conversation each time.
    if (entry.status !== status) this.changed();
    else persistLater(this.state);
  }

  /** "New Chat": answers still streaming are stopped and the conversation starts over. */
  clear(): void {
    this.stop();
    this.state.entries.length = 0;
    this.state.sessionId = null;
    for (const view of this.views.values()) view.element.remove();
    this.views.clear();
    this.stick = true;
    this.changed();
  }

  /** The chat was hidden while the index built: now it has a size, show the latest entry. */
  revealed(): void {
    this.stick = true;
    this.keepEndInView();
  }

  /** Redraws finished answers, so diagrams pick up a new colour theme. */
  redraw(): void {
    for (const view of this.views.values()) if (view.entry.status === 'done') view.render();
  }

  private add(entry: Entry): void {
    const view = new AnswerView(entry, {
      // A follow-up uses the mode selected now, as a typed question would.
      ask: (question) => this.ask({ question, mode: this.state.mode }),
      // Only the attachment's name was kept, so a retry goes without its content.
      retry: (previous) =>
        this.ask({
          question: previous.question,
          mode: previous.mode,
          ...(previous.label ? { label: previous.label } : {}),
        }),
      rendered: () => this.keepEndInView(),
      fixThis: (fixed) =>
        post({
          type: 'fixThis',
          id: fixed.id,
          question: fixed.question,
          answer: fixed.answer?.answer ?? '',
        }),
      previewFix: (fixed) => post({ type: 'fixPreview', id: fixed.id }),
      runFixTests: (fixed) => post({ type: 'fixRunTests', id: fixed.id }),
    });
    this.views.set(entry.id, view);
    this.element.appendChild(view.element);
    this.keepEndInView();
  }

  private keepEndInView(): void {
    if (!this.stick) return;
    this.element.scrollTop = this.element.scrollHeight;
    this.autoScrollTop = this.element.scrollTop;
  }

  private changed(): void {
    show(this.hint, this.state.entries.length === 0);
    this.busyChanged(this.state.entries.some((entry) => entry.status === 'streaming'));
    persist(this.state);
  }
}

function applyMessage(entry: Entry, message: AnswerMessage, state: ChatState): void {
  switch (message.type) {
    case 'answerStart':
      entry.status = 'streaming';
      break;
    case 'answerText':
      // The text so far, not a delta: it may start again from empty when the model retries.
      entry.text = message.text;
      entry.status = 'streaming';
      break;
    case 'agentStep':
      entry.steps.push(message.step);
      break;
    case 'answerDone':
      entry.answer = message.answer;
      entry.status = 'done';
      if (message.answer.sessionId) state.sessionId = message.answer.sessionId;
      break;
    case 'answerError':
      entry.error = message.message;
      entry.status = 'error';
      break;
  }
}
