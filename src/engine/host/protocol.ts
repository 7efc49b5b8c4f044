import { z } from 'zod';
import { ANSWER_MODES } from '../answer/model';
import { CodePatchSchema } from '../fix/model';
import { LLM_PROVIDERS } from '../llm/providers';
import { CHUNK_LEVELS, INDEX_STAGES, SYMBOL_KINDS } from '../model';
import { ERROR_CODES } from '../util/result';
import type { SymbolAction } from '../resolve/symbols';

/**
 * The messages between the editor and the engine's process, declared once: each method is a
 * pair of schemas, its request and its response. The worker validates every request, the client
 * every response, and both sides' types are inferred from these schemas. The worker's handlers
 * are typed against the responses, so an engine value that no longer fits its schema fails the
 * type check. Requests carry an id; the worker answers each with one `response`, and may send
 * `progress`, `answerText` and `agentStep` events for it meanwhile.
 */
const ModelRequest = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('directory'), path: z.string() }),
  z.object({ kind: z.literal('hub'), repo: z.string() }),
  z.object({ kind: z.literal('none') }),
]);

/** Which model answers (and summarises long functions); the key travels only in memory. */
export const LlmWire = z.object({
  provider: z.enum(LLM_PROVIDERS),
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

const counts = z.record(z.string(), z.number());
const chunkCounts = z.record(z.enum(CHUNK_LEVELS), z.number());

const IndexStats = z.object({
  root: z.string(),
  storeDir: z.string(),
  files: z.number(),
  skippedFiles: counts,
  chunks: chunkCounts,
  facts: z.number(),
  languages: counts,
  embedding: z.object({
    available: z.boolean(),
    modelId: z.string().nullable(),
    dimensions: z.number(),
    reason: z.string().nullable(),
    note: z.string().nullable(),
  }),
  updatedAt: z.string(),
});

const IndexSummary = z.object({
  files: z.number(),
  indexed: z.number(),
  unchanged: z.number(),
  removed: z.number(),
  failed: z.number(),
  skipped: counts,
  chunks: chunkCounts,
  chunksWritten: z.number(),
  facts: z.number(),
  parseErrors: z.number(),
  flaggedForSummary: z.number(),
  durationMs: z.number(),
});

export const IndexProgress = z.object({
  stage: z.enum(INDEX_STAGES),
  done: z.number(),
  total: z.number(),
  path: z.string().optional(),
});

const Span = z.object({
  path: z.string(),
  startLine: z.number(),
  endLine: z.number(),
  level: z.enum(CHUNK_LEVELS),
  score: z.number(),
  why: z.string(),
  chunkId: z.string(),
  message: z.object({ text: z.string(), line: z.number() }).optional(),
});

/**
 * How the search took the question (mode, levels, corrections, timings). Its shape is the search
 * pipeline's to change, and only the CLI and the chat's folded details read it, so the wire checks
 * that it is an object and the type is the pipeline's own.
 */
const SearchMetadata = z.custom<import('../search/pipeline').SearchMetadata>(
  (value) => typeof value === 'object' && value !== null,
  'search metadata must be an object',
);

const AgentStep = z.object({
  iteration: z.number(),
  tool: z.string(),
  input: z.unknown(),
  summary: z.string(),
  cached: z.boolean(),
});

const Answer = z.object({
  answer: z.string(),
  confidence: z.number(),
  citations: z.array(
    z.object({ path: z.string(), startLine: z.number(), endLine: z.number(), why: z.string() }),
  ),
  followUps: z.array(z.string()),
  mode: z.enum(ANSWER_MODES),
  evidenceOnly: z.boolean(),
  metadata: z.object({
    model: z.object({ backend: z.string(), name: z.string() }).nullable(),
    search: SearchMetadata.nullable(),
    citationsDropped: z.number(),
    evidence: z.number(),
    cgrag: z
      .object({
        passesUsed: z.number(),
        gapsIdentified: z.array(z.string()),
        gapsResolved: z.array(z.string()),
        gapsUnresolved: z.array(z.string()),
        sessionId: z.string(),
        contextFromCache: z.boolean(),
        stoppedBecause: z.enum(['no_gaps', 'all_unresolvable', 'max_passes', 'budget']),
      })
      .optional(),
    agent: z
      .object({ iterations: z.number(), toolCalls: z.number(), steps: z.array(AgentStep) })
      .optional(),
    escalations: z.array(z.string()).optional(),
    notices: z.array(z.string()),
    durationMs: z.number(),
  }),
});

const SymbolLocation = z.object({
  id: z.string(),
  name: z.string(),
  qualifiedName: z.string(),
  kind: z.enum(SYMBOL_KINDS),
  path: z.string(),
  startLine: z.number(),
  endLine: z.number(),
  signature: z.string(),
  docstring: z.string().nullable(),
});

const Reference = z.object({
  path: z.string(),
  line: z.number(),
  kind: z.enum(['call', 'import', 'base', 'value']),
  from: SymbolLocation.nullable(),
});

/** Calls naming a symbol that resolution could not settle, and the counts every surface shows. */
const PossibleCaller = z.object({
  path: z.string(),
  line: z.number(),
  from: SymbolLocation.nullable(),
  reason: z.string(),
});
const CallerCounts = z.object({
  callers: z.number(),
  references: z.number(),
  possible: z.number(),
});

const SymbolResult = z.object({
  symbol: SymbolLocation,
  counts: CallerCounts.optional(),
  references: z.array(Reference).optional(),
  callers: z.array(Reference).optional(),
  valueReferences: z.array(Reference).optional(),
  possible: z.array(PossibleCaller).optional(),
  callees: z.array(z.object({ target: SymbolLocation, line: z.number() })).optional(),
});

interface CallerTreeNode {
  readonly symbol: z.infer<typeof SymbolLocation>;
  readonly callSites: readonly { readonly path: string; readonly line: number }[];
  readonly callers: readonly CallerTreeNode[];
  readonly truncated?: 'cycle' | 'depth' | undefined;
  readonly counts?: z.infer<typeof CallerCounts> | undefined;
  readonly valueReferences?: z.infer<typeof Reference>[] | undefined;
  readonly possible?: z.infer<typeof PossibleCaller>[] | undefined;
}
const CallerTreeNode: z.ZodType<CallerTreeNode> = z.lazy(() =>
  z.object({
    symbol: SymbolLocation,
    callSites: z.array(z.object({ path: z.string(), line: z.number() })),
    callers: z.array(CallerTreeNode),
    truncated: z.enum(['cycle', 'depth']).optional(),
    counts: CallerCounts.optional(),
    valueReferences: z.array(Reference).optional(),
    possible: z.array(PossibleCaller).optional(),
  }),
);

const OutlineEntry = z.object({
  id: z.string(),
  name: z.string(),
  qualifiedName: z.string(),
  kind: z.string(),
  startLine: z.number(),
  endLine: z.number(),
  callers: z.number(),
  references: z.number(),
  possible: z.number(),
});

const root = z.string();
/** Restated, not imported: the symbol module's runtime imports would load every language spec. */
const SYMBOL_ACTIONS = [
  'definition',
  'references',
  'callers',
  'callees',
] as const satisfies readonly SymbolAction[];

/** Every method: what the editor sends, and what the worker answers when it succeeds. */
const AnalysisChunk = z.object({
  path: z.string(),
  startLine: z.number(),
  endLine: z.number(),
  level: z.enum(CHUNK_LEVELS),
  chunkId: z.string(),
  name: z.string(),
  parents: z.array(z.string()),
  score: z.number(),
  why: z.string(),
});

/** The resolver's proposal: the analysis, the model's patch blocks and the edits they make. */
const FixProposal = z.object({
  analysis: z.object({
    relevantFiles: z.array(z.string()),
    relevantChunks: z.array(AnalysisChunk),
    identifiers: z.array(z.string()),
    suggestedFixScope: z.enum(['single_function', 'multiple_files', 'unknown']),
    query: z.string(),
  }),
  patches: z.array(CodePatchSchema),
  edits: z.array(
    z.object({
      file: z.string(),
      before: z.string(),
      after: z.string(),
      replacements: z.array(z.object({ start: z.number(), end: z.number(), text: z.string() })),
    }),
  ),
  attempts: z.number(),
  retriedFor: z.array(z.object({ file: z.string(), reason: z.string() })),
});

export const METHODS = {
  open: {
    request: z.object({ folder: FolderOptions }),
    response: z.object({ stats: IndexStats, notices: z.array(z.string()) }),
  },
  index: { request: z.object({ root }), response: IndexSummary },
  update: { request: z.object({ root, paths: z.array(z.string()) }), response: IndexSummary },
  stats: { request: z.object({ root }), response: IndexStats },
  search: {
    request: z.object({ root, query: z.string(), mode: z.enum(['fast', 'thinking']) }),
    response: z.object({ spans: z.array(Span), metadata: SearchMetadata }),
  },
  ask: {
    request: z.object({
      root,
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
    response: Answer,
  },
  resolve: {
    request: z.object({
      root,
      name: z.string(),
      action: z.enum(SYMBOL_ACTIONS),
    }),
    response: z.array(SymbolResult),
  },
  tool: {
    request: z.object({ root, name: z.string(), input: z.unknown() }),
    response: z.string(),
  },
  outline: { request: z.object({ root, path: z.string() }), response: z.array(OutlineEntry) },
  trace: {
    request: z.object({ root, name: z.string(), depth: z.number().int().positive() }),
    response: z.array(CallerTreeNode),
  },
  /** An issue or a diagnostic to a checked patch (the resolver); nothing is written. */
  fix: {
    request: z.object({
      root,
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
    response: FixProposal,
  },
  close: { request: z.object({ root }), response: z.null() },
} as const;

export type Method = keyof typeof METHODS;
export type Params<M extends Method> = z.infer<(typeof METHODS)[M]['request']>;
export type Response<M extends Method> = z.infer<(typeof METHODS)[M]['response']>;
export const METHOD_NAMES = Object.keys(METHODS) as [Method, ...Method[]];

/** A request as it travels: the method's params are checked against its schema on arrival. */
export const RequestEnvelope = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('request'),
    id: z.number().int(),
    method: z.enum(METHOD_NAMES),
    params: z.unknown(),
  }),
  /** Stops the request `target` (an index run, a question) if it is still running. */
  z.object({ type: z.literal('cancel'), target: z.number().int() }),
]);
export type RequestEnvelope = z.infer<typeof RequestEnvelope>;

const ToolCall = z.object({ id: z.string(), name: z.string(), input: z.unknown() });

const ConversationMessage = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(ToolCall).readonly(),
  }),
  z.object({
    role: z.literal('tool'),
    results: z
      .array(
        z.object({
          callId: z.string(),
          name: z.string(),
          content: z.string(),
          isError: z.boolean().optional(),
        }),
      )
      .readonly(),
  }),
]);

/**
 * A model call the worker asks the editor to run (VS Code's language models live there), answered
 * by ModelReply: the same pairing as the methods, in the other direction. `model` is the editor's
 * choice as configured: '' or 'default' for its first model, a family, or `id:…`.
 */
export const RemoteCall = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('text'),
    model: z.string(),
    system: z.string(),
    turns: z
      .array(z.object({ role: z.enum(['user', 'assistant']), content: z.string() }))
      .readonly(),
  }),
  z.object({
    kind: z.literal('converse'),
    model: z.string(),
    system: z.string(),
    messages: z.array(ConversationMessage).readonly(),
    tools: z
      .array(
        z.object({
          name: z.string(),
          description: z.string(),
          inputSchema: z.record(z.string(), z.unknown()),
        }),
      )
      .readonly(),
  }),
]);
export type RemoteCall = z.infer<typeof RemoteCall>;

/** What a model call returns: the text, or a conversation turn. */
export const ModelReply = z.union([
  z.string(),
  z.object({
    text: z.string(),
    toolCalls: z.array(ToolCall).readonly(),
    stopReason: z.enum(['end', 'tool_use', 'max_tokens']),
  }),
]);

/** A Result on the wire: the value, or the engine's error (code and message). */
const Outcome = z.discriminatedUnion('ok', [
  z.object({ ok: z.literal(true), value: z.unknown() }),
  z.object({
    ok: z.literal(false),
    error: z.object({ code: z.enum(ERROR_CODES), message: z.string() }),
  }),
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

/** What the worker sends; a response's value is checked against its method's schema on arrival. */
export const WorkerMessage = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  z.object({ type: z.literal('response'), id: z.number().int(), result: Outcome }),
  z.object({ type: z.literal('progress'), id: z.number().int(), progress: IndexProgress }),
  z.object({ type: z.literal('changed'), root: z.string(), paths: z.array(z.string()) }),
  /** The answer's text from `from` on (text-stream.ts): the part before it is unchanged. */
  z.object({
    type: z.literal('answerText'),
    id: z.number().int(),
    from: z.number().int().nonnegative(),
    text: z.string(),
  }),
  z.object({ type: z.literal('agentStep'), id: z.number().int(), step: AgentStep }),
  /** A model call for the host to run. */
  z.object({ type: z.literal('llmCall'), callId: z.number().int(), call: RemoteCall }),
  z.object({ type: z.literal('llmCancel'), callId: z.number().int() }),
  z.object({ type: z.literal('log'), event: z.record(z.string(), z.unknown()) }),
]);
export type WorkerMessage = z.infer<typeof WorkerMessage>;
