/**
 * Code Oracle's chat webview: wiring. The page is built by `src/extension/chat/html.ts`; the host
 * side speaks the protocol in `src/extension/chat/protocol.ts`.
 *
 * Stable `data-testid` hooks for end-to-end tests:
 *   question-input       the question textarea
 *   send                 the send button (hidden while an answer streams)
 *   stop                 the stop button (shown only while an answer streams)
 *   mode-select          the Fast / Thinking / Deep <select> (values fast | thinking | deep)
 *   attach               the attach-a-file button
 *   attachment           the attachment chip in the composer (and on a question)
 *   answer               each conversation entry (question + answer); `data-status` is one of
 *                        streaming | done | error | stopped | interrupted, `data-id` its ask id
 *   answer-text          the rendered answer text inside an entry
 *   citation             each citation link, in the Sources list and inline in the answer text
 *   follow-up            each follow-up question chip
 *   details              the folded <details> with mode, model, CRAG, passes, gaps, timings
 *   evidence-only-label  the label on answers written without a model
 *   place, place-code    each place of an answer written without a model, and its code
 *   place-expand         the button that shows all of a place's lines
 *   copy-answer, regenerate   the actions under a finished answer
 *   open-diagram         the button that opens a large diagram in an editor tab
 *   progress             the indexing progress bar (`aria-valuenow` is the percent, `data-stage` the stage)
 *   runner-canvas        the minigame canvas shown when the first index takes over 5 s
 *   index-ready-banner   "Index ready — results available"
 */
import type { ToWebview } from '../../extension/chat/protocol';
import { Composer } from './composer';
import { Conversation } from './conversation';
import { h, show } from './dom';
import { IndexingView } from './indexing';
import { configureMermaid, isDarkTheme } from './mermaid';
import { onMessage, post } from './messages';
import { persist, persistLater, restoreState } from './state';

// Read while this script runs: `currentScript` is null afterwards, and only the element keeps the nonce.
const script = document.currentScript instanceof HTMLScriptElement ? document.currentScript : null;
const mermaidUrl = script?.dataset['mermaidSrc'];
configureMermaid(script && mermaidUrl ? { url: mermaidUrl, nonce: script.nonce ?? '' } : null);

const state = restoreState();

const composer = new Composer({
  send: (question, attachment) => {
    indexing.dismissBanner();
    conversation.ask({ question, mode: composer.mode, attachment });
  },
  stop: () => conversation.stop(),
  modeChanged: (mode) => {
    state.mode = mode;
    post({ type: 'setMode', mode });
    persist(state);
  },
  draftChanged: (draft, attachment) => {
    state.draft = draft;
    state.draftAttachment = attachment;
    persistLater(state);
  },
});
composer.setMode(state.mode);
composer.setDraft(state.draft, state.draftAttachment);

const conversation = new Conversation(state, (busy) => composer.setBusy(busy));
const chat = h(
  'section',
  { class: 'chat', 'aria-label': 'Chat', hidden: true },
  conversation.element,
  composer.element,
);
const indexing = new IndexingView((fade) => {
  show(chat, true);
  if (fade) chat.classList.add('fade-in');
  conversation.revealed();
});
(document.getElementById('app') ?? document.body).append(
  indexing.banner,
  indexing.progress,
  indexing.game,
  chat,
);

// Show the conversation this view had at once, before the host's first word: an index that is
// still building shows its progress above it when the host reports it.
if (state.entries.length > 0) indexing.showChatNow();
onMessage(handle);
watchTheme(() => conversation.redraw());
post({ type: 'ready' });

function handle(message: ToWebview): void {
  switch (message.type) {
    case 'init':
      state.mode = message.mode;
      composer.setMode(message.mode);
      composer.setModelLabel(message.modelLabel);
      composer.setModelAvailable(message.hasModel);
      indexing.init(message.indexReady);
      return;
    case 'indexing':
      return indexing.update(message.label, message.percent, message.stage);
    case 'indexReady':
      return indexing.ready(message.files, message.chunks);
    case 'indexFailed':
      return indexing.failed(message.message);
    case 'ask':
      // The user asked from the editor (Explain this error): the chat shows it even mid-indexing.
      indexing.showChatNow();
      indexing.dismissBanner();
      return conversation.ask({
        question: message.question,
        mode: message.mode,
        attachment: message.attachment ?? null,
        ...(message.label ? { label: message.label } : {}),
      });
    case 'attachment':
      return composer.setAttachment(message.attachment);
    case 'modelLabel':
      composer.setModelLabel(message.label);
      return composer.setModelAvailable(message.hasModel);
    case 'newChat':
      return conversation.clear();
    default:
      return conversation.handle(message);
  }
}

/** VS Code switches the body's theme class in place; diagrams drawn for the old theme are redrawn. */
function watchTheme(redraw: () => void): void {
  let dark = isDarkTheme();
  new MutationObserver(() => {
    if (isDarkTheme() === dark) return;
    dark = isDarkTheme();
    redraw();
  }).observe(document.body, { attributes: true, attributeFilter: ['class'] });
}
