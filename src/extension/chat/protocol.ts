import { z } from 'zod';

/**
 * The messages between the chat webview and the extension host. The host validates everything the
 * webview sends (it is a web page: treat it as untrusted input); the webview trusts the host, so
 * what only the host sends is described by plain types. The file imports nothing of the engine:
 * it states the fields the chat shows, so the webview's type check and bundle see only these.
 */
/** The engine's answer modes; test/unit/settings.test.ts checks that they agree. */
export const ChatMode = z.enum(['fast', 'thinking', 'deep']);
export type ChatMode = z.infer<typeof ChatMode>;

/**
 * The most text a question may carry as an attachment (characters; the host also refuses larger
 * files, in bytes, before reading them as text).
 */
export const MAX_ATTACHMENT_SIZE = 512 * 1024;

/** A file or selection sent with a question. */
export const Attachment = z.object({
  /** Workspace-relative path when the file is in the workspace, else the file name. */
  path: z.string().max(1000),
  content: z.string().max(MAX_ATTACHMENT_SIZE),
  /** Set for a selection: its first and last line in the file (1-based). */
  startLine: z.number().int().positive().optional(),
  endLine: z.number().int().positive().optional(),
});
export type Attachment = z.infer<typeof Attachment>;

/** A cited range of a file, with why it was cited and the workspace folder it belongs to. */
export interface Citation {
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly why: string;
  /** The workspace folder (its URI) the path is relative to. */
  readonly folder: string;
  /** The cited lines, for answers written without a model (the chat shows the code itself). */
  readonly code?: string;
}

/** The folded details under an answer. */
export interface AnswerDetails {
  readonly mode: ChatMode;
  readonly model: string | null;
  readonly questionKind: string | null;
  readonly crag: {
    readonly decision: string;
    readonly score: number;
    readonly strategy: string;
  } | null;
  readonly passes: number | null;
  readonly gapsIdentified: readonly string[];
  readonly gapsResolved: readonly string[];
  readonly gapsUnresolved: readonly string[];
  readonly agentSteps: readonly string[];
  readonly citationsDropped: number;
  readonly timings: Readonly<Record<string, number>>;
  readonly durationMs: number;
}

/** The engine's answer as the chat shows it: citations tied to their folder, details folded. */
export interface ChatAnswer {
  readonly answer: string;
  /** 0–1. */
  readonly confidence: number;
  readonly followUps: readonly string[];
  /** True when no model wrote the answer: the evidence found, stated as such. */
  readonly evidenceOnly: boolean;
  readonly citations: readonly Citation[];
  readonly notices: readonly string[];
  readonly sessionId: string | null;
  readonly details: AnswerDetails;
}

/** A fix proposed from an answer ("Fix this"), as its card under the answer shows it. */
export interface ChatFix {
  readonly status: 'proposing' | 'proposed' | 'applied' | 'discarded' | 'failed';
  readonly explanation: string;
  readonly confidence: number | null;
  readonly diff: string;
  /** The places the analysis found, as citations that open the lines. */
  readonly citations: readonly Citation[];
  /** The tests' result in words, once they ran. */
  readonly tests: string | null;
  readonly error: string | null;
}

export const FromWebview = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({
    type: z.literal('ask'),
    id: z.string().max(100),
    question: z.string().max(200_000),
    mode: ChatMode,
    attachment: Attachment.optional(),
    sessionId: z.string().max(100).optional(),
  }),
  z.object({ type: z.literal('stop'), id: z.string().max(100) }),
  z.object({
    type: z.literal('openCitation'),
    folder: z.string().max(2000),
    path: z.string().max(1000),
    startLine: z.number().int().positive(),
    endLine: z.number().int().positive(),
  }),
  z.object({ type: z.literal('pickFile') }),
  /** Files dropped from the explorer or the OS arrive as URIs; the host reads them. */
  z.object({ type: z.literal('dropUris'), uris: z.array(z.string().max(2000)).max(10) }),
  z.object({ type: z.literal('setMode'), mode: ChatMode }),
  /** A diagram too large for the sidebar, already drawn and sanitised, to open in an editor tab. */
  z.object({ type: z.literal('openDiagram'), svg: z.string().max(5_000_000) }),
  /** "Fix this" on an answer (its entry id): the question and answer become the issue. */
  z.object({
    type: z.literal('fixThis'),
    id: z.string().max(100),
    question: z.string().max(200_000),
    answer: z.string().max(200_000),
  }),
  z.object({ type: z.literal('fixPreview'), id: z.string().max(100) }),
  z.object({ type: z.literal('fixRunTests'), id: z.string().max(100) }),
]);
export type FromWebview = z.infer<typeof FromWebview>;

export type ToWebview =
  | { type: 'init'; mode: ChatMode; modelLabel: string; hasModel: boolean; indexReady: boolean }
  | { type: 'indexing'; stage: string; label: string; percent: number }
  | { type: 'indexReady'; files: number; chunks: number }
  | { type: 'indexFailed'; message: string }
  /** The host asks on the user's behalf (Explain this error, Ask about selection). */
  | { type: 'ask'; question: string; mode: ChatMode; attachment?: Attachment; label?: string }
  | { type: 'answerStart'; id: string }
  | { type: 'answerText'; id: string; text: string }
  | { type: 'agentStep'; id: string; step: string }
  | { type: 'answerDone'; id: string; answer: ChatAnswer }
  | { type: 'answerError'; id: string; message: string }
  | { type: 'attachment'; attachment: Attachment }
  | { type: 'modelLabel'; label: string; hasModel: boolean }
  /** "New Chat" from the view's title bar. */
  | { type: 'newChat' }
  | { type: 'fixUpdate'; id: string; fix: ChatFix };
