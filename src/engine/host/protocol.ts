import { z } from 'zod';
import { ANSWER_MODES } from '../answer/model';

/**
 * The messages between the editor and the engine's worker thread. Both sides validate what they
 * receive, so a mismatch is a clear error instead of undefined behaviour. Requests carry an id;
 * the worker answers each with one `response`, and may send `progress` events for it meanwhile.
 */
const ModelRequest = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('directory'), path: z.string() }),
  z.object({ kind: z.literal('hub'), repo: z.string() }),
  z.object({ kind: z.literal('none') }),
]);

/** Which model answers (and summarises long functions); the key travels only in memory. */
export const LlmWire = z.object({
  provider: z.enum(['none', 'anthropic', 'openai-compatible', 'vscode']),
  model: z.string().optional(),
  baseUrl: z.string().optional(),
  apiKey: z.string().optional(),
  logPrompts: z.boolean().optional(),
});
export type LlmWire = z.infer<typeof LlmWire>;

export const FolderOptions = z.object({
  root: z.string(),
  storeDir: z.string(),
  storageRoot: z.string(),
  model: ModelRequest,
  hubUrl: z.string().optional(),
  maxFileBytes: z.number().int().positive().optional(),
  exclude: z.array(z.string()).optional(),
  workers: z.number().int().nonnegative().optional(),
  /** Summarise long functions with this model while indexing. */
  summarizer: LlmWire.optional(),
});
export type FolderOptions = z.infer<typeof FolderOptions>;

const SymbolAction = z.enum(['definition', 'references', 'callers', 'callees']);

export const Request = z.discriminatedUnion('type', [
  z.object({ id: z.number().int(), type: z.literal('open'), folder: FolderOptions }),
  z.object({ id: z.number().int(), type: z.literal('index'), root: z.string() }),
  z.object({
    id: z.number().int(),
    type: z.literal('update'),
    root: z.string(),
    paths: z.array(z.string()),
  }),
  z.object({ id: z.number().int(), type: z.literal('stats'), root: z.string() }),
  z.object({
    id: z.number().int(),
    type: z.literal('search'),
    root: z.string(),
    query: z.string(),
    mode: z.enum(['fast', 'thinking']),
  }),
  z.object({
    id: z.number().int(),
    type: z.literal('ask'),
    root: z.string(),
    question: z.string(),
    mode: z.enum(ANSWER_MODES),
    llm: LlmWire,
    sessionId: z.string().optional(),
    attachment: z
      .object({
        path: z.string(),
        content: z.string(),
        startLine: z.number().int().positive().optional(),
      })
      .optional(),
    webSearchUrl: z.string().optional(),
  }),
  z.object({
    id: z.number().int(),
    type: z.literal('resolve'),
    root: z.string(),
    name: z.string(),
    action: SymbolAction,
  }),
  z.object({
    id: z.number().int(),
    type: z.literal('tool'),
    root: z.string(),
    name: z.string(),
    input: z.unknown(),
  }),
  z.object({
    id: z.number().int(),
    type: z.literal('outline'),
    root: z.string(),
    path: z.string(),
  }),
  z.object({
    id: z.number().int(),
    type: z.literal('trace'),
    root: z.string(),
    name: z.string(),
    depth: z.number().int().positive(),
  }),
  /** An issue or a diagnostic to a checked patch (the resolver); nothing is written. */
  z.object({
    id: z.number().int(),
    type: z.literal('fix'),
    root: z.string(),
    issue: z.object({
      title: z.string(),
      body: z.string(),
      number: z.number().int().positive().nullable(),
      repo: z.string().nullable(),
    }),
    diagnostic: z
      .object({
        path: z.string(),
        message: z.string(),
        code: z.string().optional(),
        source: z.string().optional(),
        startLine: z.number().int().positive(),
        endLine: z.number().int().positive(),
        context: z.string(),
        contextStartLine: z.number().int().positive(),
      })
      .optional(),
    llm: LlmWire,
    /** Unsaved text of open documents by workspace-relative path. */
    overlay: z.record(z.string(), z.string()),
  }),
  z.object({ id: z.number().int(), type: z.literal('close'), root: z.string() }),
  z.object({ id: z.number().int(), type: z.literal('cancel'), target: z.number().int() }),
]);
export type Request = z.infer<typeof Request>;

/** A Result on the wire: the value, or the engine's error (code and message). */
const Outcome = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({ ok: z.literal(false), error: z.object({ code: z.string(), message: z.string() }) }),
]);

/** The editor's replies to the worker's model calls (VS Code's language models live in the host). */
export const LlmReply = z.discriminatedUnion('type', [
  z.object({ type: z.literal('llmDelta'), callId: z.number().int(), delta: z.string() }),
  z.object({
    type: z.literal('llmReply'),
    callId: z.number().int(),
    result: Outcome,
  }),
]);
export type LlmReply = z.infer<typeof LlmReply>;
export type RequestType = Request['type'];

export const WorkerMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('response'), id: z.number().int(), result: Outcome }),
  z.object({
    type: z.literal('progress'),
    id: z.number().int(),
    progress: z.object({
      stage: z.enum(['walk', 'parse', 'summarize', 'facts', 'embed', 'write']),
      done: z.number(),
      total: z.number(),
      path: z.string().optional(),
    }),
  }),
  z.object({ type: z.literal('changed'), root: z.string(), paths: z.array(z.string()) }),
  z.object({ type: z.literal('answerText'), id: z.number().int(), text: z.string() }),
  z.object({
    type: z.literal('agentStep'),
    id: z.number().int(),
    step: z.object({
      iteration: z.number(),
      tool: z.string(),
      input: z.unknown(),
      summary: z.string(),
      cached: z.boolean(),
    }),
  }),
  /** A model call for the host to run (RemoteCall of remote-llm.ts). */
  z.object({
    type: z.literal('llmCall'),
    callId: z.number().int(),
    call: z.record(z.string(), z.unknown()),
  }),
  z.object({ type: z.literal('llmCancel'), callId: z.number().int() }),
  z.object({ type: z.literal('log'), event: z.record(z.string(), z.unknown()) }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessage>;
