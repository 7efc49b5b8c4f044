import type { Attachment, ChatAnswer, ChatMode } from '../../extension/chat/protocol';
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
const SAVE_DELAY_MS = 200;

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
  return typeof value === 'object' && value !== null && (value as { version?: unknown }).version === 1;
}

let timer: ReturnType<typeof setTimeout> | undefined;

/** Saves soon rather than now: streamed text changes the state many times a second. */
export function persist(state: ChatState): void {
  if (timer !== undefined) return;
  timer = setTimeout(() => {
    timer = undefined;
    saveState({ ...state, entries: state.entries.slice(-MAX_ENTRIES) });
  }, SAVE_DELAY_MS);
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
