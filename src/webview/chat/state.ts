import type { Attachment, ChatAnswer, ChatFix, ChatMode } from '../../extension/chat/protocol';
import { loadState, saveState } from './messages';

/**
 * The conversation as plain data, persisted with `vscode.setState` so it survives the view being
 * hidden (VS Code destroys a hidden webview's page) and window reloads.
 */
export type EntryStatus = 'streaming' | 'done' | 'error' | 'stopped' | 'interrupted';

export interface Entry {
  readonly id: string;
  readonly question: string;
  /** Shown instead of the question when the host asked on the user's behalf (Explain this error). */
  readonly label?: string;
  readonly mode: ChatMode;
  readonly attachment?: AttachmentRef;
  status: EntryStatus;
  /** The answer text streamed so far. */
  text: string;
  steps: string[];
  answer?: ChatAnswer;
  error?: string;
  /** A fix asked from this answer ("Fix this"). */
  fix?: ChatFix;
}

/** An attachment as the conversation remembers it: its name, never its (possibly large) content. */
export interface AttachmentRef {
  readonly path: string;
  readonly startLine?: number;
  readonly endLine?: number;
}

export interface ChatState {
  version: 1;
  mode: ChatMode;
  entries: Entry[];
  /** The last answer's session, sent with the next question so Thinking mode reuses what it retrieved. */
  sessionId: string | null;
  draft: string;
  draftAttachment: Attachment | null;
}

/** Older entries are dropped from the saved state: VS Code keeps it in memory and serialises it often. */
const MAX_ENTRIES = 50;
/**
 * Each save serialises the whole conversation, so what changes many times a second (the draft
 * as it is typed, an answer as it streams) is saved at most once a second.
 */
const FREQUENT_SAVE_DELAY_MS = 1000;

export function restoreState(): ChatState {
  const saved = loadState();
  const state: ChatState = isChatState(saved)
    ? saved
    : { version: 1, mode: 'fast', entries: [], sessionId: null, draft: '', draftAttachment: null };
  // A page that was torn down mid-answer lost the host's stream; say so rather than spin forever.
  for (const entry of state.entries) if (entry.status === 'streaming') entry.status = 'interrupted';
  return state;
}

function isChatState(value: unknown): value is ChatState {
  return (
    typeof value === 'object' && value !== null && (value as { version?: unknown }).version === 1
  );
}

let laterTimer: ReturnType<typeof setTimeout> | undefined;
let saveQueued = false;

/**
 * Saves at the end of the current task rather than now, so one burst of changes (a question sent
 * and the box cleared) is saved once, with the cleared draft.
 */
export function persist(state: ChatState): void {
  if (saveQueued) return;
  saveQueued = true;
  queueMicrotask(() => {
    saveQueued = false;
    save(state);
  });
}

/** Saves within a second, for changes that come many times a second; later ones ride along. */
export function persistLater(state: ChatState): void {
  laterTimer ??= setTimeout(() => save(state), FREQUENT_SAVE_DELAY_MS);
}

function save(state: ChatState): void {
  // The whole state is saved, so a save still waiting has nothing left to add.
  clearTimeout(laterTimer);
  laterTimer = undefined;
  saveState({ ...state, entries: state.entries.slice(-MAX_ENTRIES) });
}

export function attachmentRef(attachment: Attachment): AttachmentRef {
  return {
    path: attachment.path,
    ...(attachment.startLine !== undefined ? { startLine: attachment.startLine } : {}),
    ...(attachment.endLine !== undefined ? { endLine: attachment.endLine } : {}),
  };
}

export function attachmentLabel(attachment: AttachmentRef): string {
  if (attachment.startLine === undefined) return attachment.path;
  return `${attachment.path}:${attachment.startLine}-${attachment.endLine ?? attachment.startLine}`;
}
