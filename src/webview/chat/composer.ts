import type { Attachment, ChatMode } from '../../extension/chat/protocol';
import { h, icon, show } from './dom';
import { drawHighlight } from './highlight';
import { post } from './messages';
import { attachmentLabel } from './state';

export interface ComposerEvents {
  send(question: string, attachment: Attachment | null): void;
  stop(): void;
  modeChanged(mode: ChatMode): void;
  draftChanged(draft: string, attachment: Attachment | null): void;
}

const MODES: readonly {
  readonly value: ChatMode;
  readonly label: string;
  readonly title: string;
}[] = [
  { value: 'fast', label: 'Fast', title: 'One search, one answer' },
  {
    value: 'thinking',
    label: 'Thinking',
    title: 'Finds what the first answer was missing, up to three passes',
  },
  { value: 'deep', label: 'Deep', title: 'An agent that searches, reads files and follows calls' },
];

/**
 * The protocol's MAX_ATTACHMENT_SIZE, restated: the webview imports the protocol's types only, since
 * a value import would bundle zod into the page (three times its size).
 */
const MAX_ATTACHMENT_CHARS = 512 * 1024;
const MAX_INPUT_HEIGHT_PX = 240;

/**
 * The question box: a transparent textarea over a highlighted copy of its text, the attachment
 * chip, and the toolbar (attach, mode, send / stop).
 */
const NEEDS_MODEL =
  'Thinking and Deep need a language model: run "Code Oracle: Choose a Language Model…" or set codeOracle.llm.provider.';

export class Composer {
  readonly element: HTMLFormElement;
  private readonly input = h('textarea', {
    'data-testid': 'question-input',
    'aria-label': 'Question',
    placeholder: 'Ask about this workspace…',
    rows: '1',
    spellcheck: 'false',
  });
  private readonly layer = h('div', { class: 'highlight', 'aria-hidden': 'true' });
  private readonly chip = h('div', { class: 'attachment-row' });
  private readonly modeSelect = h('select', {
    'data-testid': 'mode-select',
    'aria-label': 'Answer mode',
  });
  private readonly modelLabel = h('span', { class: 'model-label' });
  private readonly sendButton = h(
    'button',
    {
      type: 'submit',
      class: 'icon-button primary',
      'data-testid': 'send',
      'aria-label': 'Send',
      title: 'Send (Enter)',
    },
    icon('send'),
  );
  private readonly stopButton = h(
    'button',
    {
      type: 'button',
      class: 'icon-button primary',
      'data-testid': 'stop',
      'aria-label': 'Stop',
      title: 'Stop the answer',
      hidden: true,
    },
    icon('stop'),
  );
  private attachment: Attachment | null = null;
  private busy = false;

  constructor(private readonly events: ComposerEvents) {
    for (const mode of MODES)
      this.modeSelect.appendChild(
        h('option', { value: mode.value, title: mode.title }, mode.label),
      );
    const attach = h(
      'button',
      {
        type: 'button',
        class: 'icon-button',
        'data-testid': 'attach',
        'aria-label': 'Attach a file',
        title: 'Attach a file (or drop one here)',
      },
      icon('attach'),
    );
    attach.addEventListener('click', () => post({ type: 'pickFile' }));
    this.element = h(
      'form',
      { class: 'composer', 'aria-label': 'Ask a question' },
      this.chip,
      h('div', { class: 'field' }, this.layer, this.input),
      h(
        'div',
        { class: 'toolbar' },
        attach,
        this.modelLabel,
        h('span', { class: 'spacer' }),
        this.modeSelect,
        this.sendButton,
        this.stopButton,
      ),
    );
    this.wireInput();
    this.wireDrop();
    this.element.addEventListener('submit', (event) => {
      event.preventDefault();
      this.submit();
    });
    this.stopButton.addEventListener('click', () => this.events.stop());
    this.modeSelect.addEventListener('change', () => this.events.modeChanged(this.mode));
  }

  get mode(): ChatMode {
    return MODES.find((mode) => mode.value === this.modeSelect.value)?.value ?? 'fast';
  }

  setMode(mode: ChatMode): void {
    this.modeSelect.value = mode;
  }

  /**
   * Thinking and Deep ask a model for more: without one they are disabled, say why, and a
   * question asked in them is asked in Fast, which is what would happen anyway.
   */
  setModelAvailable(available: boolean): void {
    for (const option of this.modeSelect.options) {
      if (option.value === 'fast') continue;
      option.disabled = !available;
      const mode = MODES.find((candidate) => candidate.value === option.value);
      option.title = available ? (mode?.title ?? '') : NEEDS_MODEL;
    }
    this.modeSelect.title = available ? 'Answer mode' : `Answer mode. ${NEEDS_MODEL}`;
    this.modeSelect.dataset['hasModel'] = String(available);
    if (!available && this.mode !== 'fast') {
      this.modeSelect.value = 'fast';
      this.events.modeChanged('fast');
    }
  }

  setModelLabel(label: string): void {
    this.modelLabel.textContent = label;
    this.modelLabel.title = `Model: ${label}`;
  }

  setDraft(draft: string, attachment: Attachment | null): void {
    this.input.value = draft;
    this.setAttachment(attachment);
    this.refresh();
  }

  /** While an answer streams the send arrow becomes a stop button. */
  setBusy(busy: boolean): void {
    this.busy = busy;
    show(this.sendButton, !busy);
    show(this.stopButton, busy);
  }

  setAttachment(attachment: Attachment | null): void {
    this.attachment = attachment;
    this.chip.replaceChildren();
    if (attachment) this.chip.appendChild(this.attachmentChip(attachment));
    this.events.draftChanged(this.input.value, this.attachment);
  }

  private wireInput(): void {
    this.input.addEventListener('input', () => {
      this.refresh();
      this.events.draftChanged(this.input.value, this.attachment);
    });
    this.input.addEventListener('keydown', (event) => {
      // Enter sends; Shift+Enter is a newline; Enter that confirms an IME composition is neither.
      if (event.key !== 'Enter' || event.shiftKey || event.isComposing) return;
      event.preventDefault();
      this.submit();
    });
    this.input.addEventListener('scroll', () => {
      this.layer.scrollTop = this.input.scrollTop;
    });
  }

  /** Redraws the highlight layer and grows the box with its text, up to a limit. */
  private refresh(): void {
    drawHighlight(this.layer, this.input.value);
    this.input.style.height = 'auto';
    this.input.style.height = `${Math.min(this.input.scrollHeight, MAX_INPUT_HEIGHT_PX)}px`;
    this.layer.scrollTop = this.input.scrollTop;
    this.sendButton.disabled = this.input.value.trim() === '';
  }

  private submit(): void {
    const question = this.input.value.trim();
    if (this.busy || question === '') return;
    this.events.send(question, this.attachment);
    this.input.value = '';
    this.setAttachment(null);
    this.refresh();
  }

  private attachmentChip(attachment: Attachment): HTMLElement {
    const remove = h(
      'button',
      {
        type: 'button',
        class: 'chip-remove',
        'aria-label': `Remove attachment ${attachment.path}`,
        title: 'Remove',
      },
      '×',
    );
    remove.addEventListener('click', () => {
      this.setAttachment(null);
      this.input.focus();
    });
    return h(
      'span',
      { class: 'chip attachment', 'data-testid': 'attachment', title: attachment.path },
      icon('attach'),
      h('span', { class: 'chip-text' }, attachmentLabel(attachment)),
      remove,
    );
  }

  private showAttachmentError(message: string): void {
    this.chip.replaceChildren(h('span', { class: 'attachment-error', role: 'alert' }, message));
  }

  private wireDrop(): void {
    this.element.addEventListener('dragover', (event) => {
      if (!event.dataTransfer) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = 'copy';
      this.element.classList.add('dragging');
    });
    this.element.addEventListener('dragleave', () => this.element.classList.remove('dragging'));
    this.element.addEventListener('drop', (event) => {
      event.preventDefault();
      this.element.classList.remove('dragging');
      if (event.dataTransfer) this.drop(event.dataTransfer);
    });
  }

  /** Files from the OS are read here; explorer drags carry only URIs, which the host reads. */
  private drop(data: DataTransfer): void {
    const file = data.files[0];
    if (file) {
      this.readFile(file).catch((error: unknown) =>
        this.showAttachmentError(
          `${file.name} could not be read: ${error instanceof Error ? error.message : String(error)}`,
        ),
      );
      return;
    }
    const uris = uriList(
      data.getData('text/uri-list') || data.getData('application/vnd.code.uri-list'),
    );
    if (uris.length > 0) post({ type: 'dropUris', uris });
  }

  private async readFile(file: File): Promise<void> {
    if (file.size > MAX_ATTACHMENT_CHARS)
      return this.showAttachmentError(`${file.name} is too large to attach (over 512 KB).`);
    const content = await file.text();
    if (content.includes('\u0000'))
      return this.showAttachmentError(`${file.name} is not a text file.`);
    this.setAttachment({ path: file.name, content });
  }
}

/** RFC 2483: one URI per line, `#` lines are comments. The protocol takes at most ten. */
function uriList(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#') && line.length <= 2000)
    .slice(0, 10);
}
