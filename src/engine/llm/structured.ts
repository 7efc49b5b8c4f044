import { z } from 'zod';
import { elapsedMs, getLogger } from '../log/logger';
import {
  describeError,
  err,
  fail,
  ok,
  type EngineError,
  type Err,
  type Result,
} from '../util/result';
import type { ConversationRequest, StructuredRequest } from './client';

/**
 * The backend-independent half of every LLM client: validation attempts with feedback, HTTP
 * retries with backoff, timeouts and cancellation, the streamed field of a structured answer,
 * and the call log events. A backend only turns messages into one request and one raw answer.
 */

const log = getLogger('llm');

/** Validation attempts per structured call: the first answer plus two corrections. */
export const MAX_VALIDATION_ATTEMPTS = 3;
/** HTTP tries per request to the model, on 429, 5xx and connection resets. */
export const MAX_HTTP_TRIES = 3;
export const DEFAULT_TIMEOUT_MS = 120_000;
export const DEFAULT_BACKOFF: Backoff = { baseDelayMs: 500, maxDelayMs: 30_000 };

/** A validation error longer than this is cut: the model needs the gist, the log stays readable. */
const MAX_VALIDATION_ERROR_CHARS = 1_000;

export interface Backoff {
  /** The wait before the second try; it doubles before each further one. */
  readonly baseDelayMs: number;
  /** The longest wait, including one a server asks for with Retry-After. */
  readonly maxDelayMs: number;
}

/** Options every client takes besides its model and server. */
export interface CallOptions {
  /** One request to the model (with its HTTP retries) fails after this long; default 120 s. */
  readonly timeoutMs?: number;
  /** Log the prompt text (DEBUG `llm_prompt_text`); off by default because prompts hold code. */
  readonly logPrompts?: boolean;
  /** Waits between HTTP retries; tests shorten them. */
  readonly backoff?: Backoff;
}

/** What the shared code needs to know about the client making a call. */
export interface CallSettings {
  readonly backend: string;
  readonly model: string;
  /** The subject of user-facing messages: "the Anthropic API", "the model server at …". */
  readonly service: string;
  readonly timeoutMs: number;
  readonly logPrompts: boolean;
  readonly backoff: Backoff;
}

export function callSettings(
  backend: string,
  model: string,
  service: string,
  options: CallOptions,
): CallSettings {
  return {
    backend,
    model,
    service,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    logPrompts: options.logPrompts ?? false,
    backoff: options.backoff ?? DEFAULT_BACKOFF,
  };
}

export interface ChatTurn {
  readonly role: 'user' | 'assistant';
  readonly content: string;
}

/**
 * One request to the model for a structured answer: returns the JSON text it wrote (or whatever
 * it wrote instead). `onJsonSoFar`, when given, receives the whole answer text as it grows.
 */
export type StructuredAttempt = (
  turns: readonly ChatTurn[],
  onJsonSoFar: ((jsonSoFar: string) => void) | undefined,
) => Promise<Result<string>>;

/**
 * Asks for a structured answer up to three times: an answer that is not JSON or fails the schema
 * goes back to the model with the validation error, so it can correct itself.
 */
export async function completeStructured<T>(
  settings: CallSettings,
  request: StructuredRequest<T>,
  attempt: StructuredAttempt,
): Promise<Result<T>> {
  const call = new CallLog(settings, request.schemaName, `${request.system}\n\n${request.prompt}`);
  const turns: ChatTurn[] = [{ role: 'user', content: request.prompt }];
  const streamed = request.stream
    ? new StreamedField(request.stream.field, request.stream.onText)
    : undefined;
  let lastValidationError: string | null = null;
  for (let attemptNumber = 1; ; attemptNumber++) {
    const attemptStart = performance.now();
    streamed?.restart();
    const output = await attempt(turns, streamed && ((jsonSoFar) => streamed.update(jsonSoFar)));
    if (!output.ok) return call.failed(output, attemptNumber, lastValidationError);
    const parsed = parseStructuredAnswer(output.value, request.schema);
    if (parsed.ok) return call.completed(parsed, attemptNumber - 1);
    if (attemptNumber === MAX_VALIDATION_ATTEMPTS) {
      const message = `The model gave no valid ${request.schemaName} in ${attemptNumber} attempts; the last problem: ${oneLine(parsed.error)}.`;
      return call.failed(fail('model_unavailable', message), attemptNumber, parsed.error);
    }
    lastValidationError = parsed.error;
    call.retry(attemptNumber, parsed.error, attemptStart);
    turns.push(
      { role: 'assistant', content: output.value.trim() || '(an empty answer)' },
      { role: 'user', content: validationFeedback(request.schemaName, parsed.error) },
    );
  }
}

/** The conversation as text, for the prompt log and its token estimate. */
export function conversationPromptText(request: ConversationRequest): string {
  const lines = request.messages.map((message) => {
    if (message.role === 'tool')
      return message.results.map((result) => `[tool ${result.name}] ${result.content}`).join('\n');
    const calls =
      message.role === 'assistant'
        ? message.toolCalls
            .map((call) => `\n[call ${call.name}] ${JSON.stringify(call.input)}`)
            .join('')
        : '';
    return `[${message.role}] ${message.content}${calls}`;
  });
  return [request.system, ...lines].join('\n\n');
}

/** Runs a prose or conversation call between its started and completed/failed log events. */
export async function loggedCall<T>(
  settings: CallSettings,
  outputSchema: 'text' | 'conversation',
  promptText: string,
  run: () => Promise<Result<T>>,
): Promise<Result<T>> {
  const call = new CallLog(settings, outputSchema, promptText);
  const result = await run();
  return result.ok ? call.completed(result, 0) : call.failed(result, 1, null);
}

/** The log events of one call, from `llm_call_started` to `llm_call_completed`, `llm_call_failed` or `llm_call_cancelled`. */
class CallLog {
  private readonly start = performance.now();

  constructor(
    private readonly settings: CallSettings,
    private readonly outputSchema: string,
    promptText: string,
  ) {
    log.info('llm_call_started', {
      ...this.fields(),
      prompt_token_estimate: Math.round(promptText.length / 4),
    });
    if (settings.logPrompts) log.debug('llm_prompt_text', { ...this.fields(), prompt: promptText });
  }

  retry(attempt: number, validationError: string, attemptStart: number): void {
    log.warn('llm_call_retry', {
      ...this.fields(),
      attempt,
      validation_error: validationError,
      latency_ms: elapsedMs(attemptStart),
    });
  }

  completed<T>(result: Result<T>, retryCount: number): Result<T> {
    log.info('llm_call_completed', {
      ...this.fields(),
      latency_ms: elapsedMs(this.start),
      retry_count: retryCount,
      success: true,
    });
    return result;
  }

  failed<T>(
    result: Err<EngineError>,
    totalAttempts: number,
    lastValidationError: string | null,
  ): Result<T> {
    const fields = {
      ...this.fields(),
      total_attempts: totalAttempts,
      last_validation_error: lastValidationError,
      total_latency_ms: elapsedMs(this.start),
      error_code: result.error.code,
      error: result.error.message,
    };
    // A cancellation is the user's choice, not a failure worth an ERROR line.
    if (result.error.code === 'cancelled') log.info('llm_call_cancelled', fields);
    else log.error('llm_call_failed', fields);
    return result;
  }

  private fields() {
    return {
      backend: this.settings.backend,
      model: this.settings.model,
      output_schema: this.outputSchema,
    };
  }
}

/** Parses the model's JSON (tolerating a Markdown code fence around it) and validates it. */
export function parseStructuredAnswer<T>(text: string, schema: z.ZodType<T>): Result<T, string> {
  let value: unknown;
  try {
    value = JSON.parse(stripCodeFence(text));
  } catch (cause) {
    return err(`The answer is not valid JSON (${describeError(cause)}).`);
  }
  const validated = schema.safeParse(value);
  return validated.success
    ? ok(validated.data)
    : err(truncate(z.prettifyError(validated.error), MAX_VALIDATION_ERROR_CHARS));
}

function stripCodeFence(text: string): string {
  const fenced = /^\s*```[a-zA-Z]*\s*\n([\s\S]*?)\n?\s*```\s*$/.exec(text);
  return fenced ? fenced[1]! : text;
}

function validationFeedback(schemaName: string, validationError: string): string {
  return `Your answer did not match the ${schemaName} schema:\n${validationError}\nAnswer again with the whole corrected ${schemaName} as JSON, nothing else.`;
}

function truncate(text: string, maxChars: number): string {
  return text.length <= maxChars ? text : `${text.slice(0, maxChars)}…`;
}

/** A validation error as part of a sentence: zod's first issue (message and path) on one line. */
function oneLine(validationError: string): string {
  const [message = '', path = ''] = validationError.split('\n');
  return `${message} ${path.trim()}`.replace(/^✖\s*/, '').trim().replace(/[.…]$/, '');
}

/**
 * Tells `onText` the streamed field's text whenever it grows, and from empty again on a retry.
 * The JSON text only grows within one response, so decoding resumes where it stopped: each piece
 * is read once, however long the answer (rescanning from `{` made streaming quadratic).
 */
class StreamedField {
  private delivered = '';
  private seen = 0;
  /** The text up to the field's opening quote, once found, and the string decoded from there. */
  private reading: { anchor: string; next: number; value: string; closed: boolean } | null = null;

  constructor(
    private readonly field: string,
    private readonly onText: (textSoFar: string) => void,
  ) {}

  restart(): void {
    this.reading = null;
    this.seen = 0;
    if (this.delivered === '') return;
    this.delivered = '';
    this.onText('');
  }

  update(jsonSoFar: string): void {
    // After an HTTP retry the text starts again, shorter or different.
    if (
      jsonSoFar.length < this.seen ||
      (this.reading && !jsonSoFar.startsWith(this.reading.anchor))
    )
      this.reading = null;
    this.seen = jsonSoFar.length;
    this.reading ??= this.locate(jsonSoFar);
    if (!this.reading || this.reading.closed) return;
    const body = new PartialJsonScanner(jsonSoFar, this.reading.next).readStringBody();
    this.reading.value += body.value;
    this.reading.next = body.end;
    this.reading.closed = body.terminated;
    const text = body.terminated
      ? this.reading.value
      : withoutDanglingHighSurrogate(this.reading.value);
    if (text === this.delivered) return;
    this.delivered = text;
    this.onText(text);
  }

  private locate(jsonSoFar: string): StreamedField['reading'] {
    // Local models often open a Markdown fence before the JSON despite being told not to.
    const fence = /^\s*```[a-zA-Z]*\s*/.exec(jsonSoFar)?.[0].length ?? 0;
    const start = stringFieldStart(jsonSoFar.slice(fence), this.field);
    return start === null
      ? null
      : {
          anchor: jsonSoFar.slice(0, fence + start),
          next: fence + start,
          value: '',
          closed: false,
        };
  }
}

/** Tool and schema names allow letters, digits, `_` and `-` only; a schema name may hold anything. */
export function wireName(schemaName: string): string {
  return schemaName.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64) || 'answer';
}

/** The JSON Schema of a structured answer or tool input: both backends need an object at the top. */
export function objectJsonSchema(
  schema: z.ZodType<unknown>,
  name: string,
): Result<{ type: 'object'; [key: string]: unknown }> {
  let jsonSchema: Record<string, unknown>;
  try {
    // Parts JSON Schema cannot express (transforms, dates) become "any"; the zod check still applies them.
    jsonSchema = z.toJSONSchema(schema, { unrepresentable: 'any' }) as Record<string, unknown>;
  } catch (cause) {
    return fail(
      'invalid_input',
      `The schema ${name} cannot be written as JSON Schema: ${describeError(cause)}.`,
    );
  }
  const { $schema: _dialect, ...withoutDialect } = jsonSchema;
  if (withoutDialect.type !== 'object')
    return fail(
      'invalid_input',
      `The schema ${name} must describe an object to be asked of a model.`,
    );
  return ok({ ...withoutDialect, type: 'object' });
}

/**
 * The system prompt with the answer's JSON Schema written into it: the editor's models get the
 * schema no other way, and small local models follow a schema they can read better than one they cannot.
 */
export function withSchemaInstructions(system: string, jsonSchema: object): string {
  return `${system}\n\nAnswer with one JSON object and nothing else (no prose, no code fence) that matches this JSON Schema:\n${JSON.stringify(jsonSchema)}`;
}

// ---------------------------------------------------------------------------------------------
// HTTP retries, timeout and cancellation

/** How a backend judges a thrown error: try again (429, 5xx, a reset connection) or give up. */
export type TransportFailure =
  | { readonly kind: 'retry'; readonly reason: string; readonly retryAfterMs?: number }
  | { readonly kind: 'fail'; readonly error: EngineError };

export const retryable = (reason: string, retryAfterMs?: number): TransportFailure => ({
  kind: 'retry',
  reason,
  ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
});
export const fatal = (error: EngineError): TransportFailure => ({ kind: 'fail', error });

/**
 * Sends one request to the model, trying again with exponential backoff on failures `classify`
 * calls retryable. The caller's signal and the timeout both abort it; a cancelled call returns
 * `cancelled` as soon as the signal fires, a timed-out one says how long it waited.
 */
export async function sendWithRetry<T>(
  settings: CallSettings,
  callerSignal: AbortSignal | undefined,
  send: (signal: AbortSignal) => Promise<T>,
  classify: (cause: unknown) => TransportFailure,
): Promise<Result<T>> {
  const timeout = AbortSignal.timeout(settings.timeoutMs);
  const signal = callerSignal ? AbortSignal.any([callerSignal, timeout]) : timeout;
  for (let tryNumber = 1; ; tryNumber++) {
    // An aborted signal makes `send` throw at once, so a cancellation during a wait ends here too.
    try {
      return ok(await send(signal));
    } catch (cause) {
      if (callerSignal?.aborted)
        return fail('cancelled', 'The request to the model was cancelled.');
      if (timeout.aborted) return timedOut(settings);
      const failure = classify(cause);
      if (failure.kind === 'fail') return err(failure.error);
      if (tryNumber >= MAX_HTTP_TRIES)
        return fail('model_unavailable', `Gave up after ${tryNumber} tries: ${failure.reason}.`);
      const delayMs = backoffDelayMs(settings.backoff, tryNumber, failure.retryAfterMs);
      log.warn('llm_http_retry', {
        backend: settings.backend,
        model: settings.model,
        try: tryNumber,
        reason: failure.reason,
        delay_ms: delayMs,
      });
      await sleep(delayMs, signal);
    }
  }
}

export function timedOut(settings: CallSettings): Err<EngineError> {
  return fail(
    'model_unavailable',
    `${capitalize(settings.service)} did not answer within ${settings.timeoutMs / 1000} s.`,
  );
}

/** Turns a failure that would be retried into a final one: used once output has reached the caller, which a retry would repeat. */
export function withoutRetry(failure: TransportFailure): TransportFailure {
  return failure.kind === 'retry'
    ? fatal({ code: 'model_unavailable', message: `${capitalize(failure.reason)}.` })
    : failure;
}

/** Passes streamed text on and remembers whether any reached the caller: a retry would then show it twice. */
export class OutputTracker {
  shown = false;

  constructor(private readonly forward: ((delta: string) => void) | undefined) {}

  readonly onText = (delta: string): void => {
    this.shown = true;
    this.forward?.(delta);
  };
}

function backoffDelayMs(
  backoff: Backoff,
  tryNumber: number,
  retryAfterMs: number | undefined,
): number {
  return Math.min(retryAfterMs ?? backoff.baseDelayMs * 2 ** (tryNumber - 1), backoff.maxDelayMs);
}

/** The wait a 429 or 503 asks for: `retry-after-ms`, or `retry-after` in seconds. */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  const milliseconds = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const seconds = Number(headers?.get('retry-after') ?? Number.NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

/** Waits, or stops waiting as soon as `signal` fires (the caller then sees it aborted). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** A connection that dropped mid-request: worth another try. */
export function isConnectionReset(cause: unknown): boolean {
  return errorCodes(cause).some((code) => RESET_CODES.has(code));
}

/** A server that cannot be reached at all: another try will not help. */
export function isUnreachable(cause: unknown): boolean {
  return errorCodes(cause).some((code) => UNREACHABLE_CODES.has(code));
}

/** The `code`s along an error's cause chain (fetch keeps the socket's error in `cause`). */
function errorCodes(cause: unknown): string[] {
  const codes: string[] = [];
  for (
    let current = cause, depth = 0;
    current instanceof Error && depth < 8;
    current = current.cause, depth++
  ) {
    const code = (current as NodeJS.ErrnoException).code;
    if (typeof code === 'string') codes.push(code);
  }
  return codes;
}

/** Why a connection failed, without fetch's uninformative "fetch failed: " in front of the reason. */
export function connectionFailure(cause: unknown): string {
  return describeError(cause).replace(/^fetch failed: /, '');
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// ---------------------------------------------------------------------------------------------
// Streaming one field of a structured answer

/**
 * The value of the top-level string field `field` in the JSON text written so far, decoded, even
 * while the string (or the object) is unterminated; null when the field has not started or is
 * not a string. An escape cut off at the end is left out until the rest of it arrives.
 */
export function extractPartialStringField(jsonSoFar: string, field: string): string | null {
  const start = stringFieldStart(jsonSoFar, field);
  if (start === null) return null;
  const body = new PartialJsonScanner(jsonSoFar, start).readStringBody();
  return body.terminated ? body.value : withoutDanglingHighSurrogate(body.value);
}

/** Where the string value of the top-level field `field` begins (after its quote); null until it has. */
function stringFieldStart(jsonSoFar: string, field: string): number | null {
  const scanner = new PartialJsonScanner(jsonSoFar);
  if (!scanner.consume('{')) return null;
  for (;;) {
    if (!scanner.consume('"')) return null;
    const key = scanner.readStringBody();
    if (!key.terminated || !scanner.consume(':')) return null;
    if (key.value === field) return scanner.consume('"') ? scanner.offset : null;
    if (!scanner.skipValue() || !scanner.consume(',')) return null;
  }
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
};

/** Reads JSON text that may stop anywhere; every method reports whether the text ran out. */
class PartialJsonScanner {
  constructor(
    private readonly text: string,
    private position = 0,
  ) {}

  /** Where reading has got to. */
  get offset(): number {
    return this.position;
  }

  /** Skips whitespace and then `char`, if it is next. */
  consume(char: string): boolean {
    this.skipWhitespace();
    if (this.text[this.position] !== char) return false;
    this.position++;
    return true;
  }

  /**
   * Decodes a string whose opening quote has been consumed, up to its closing quote or the end;
   * `end` is where reading stopped (before an escape cut off at the end, to resume there).
   */
  readStringBody(): { value: string; terminated: boolean; end: number } {
    let value = '';
    while (this.position < this.text.length) {
      const char = this.text[this.position]!;
      if (char === '"') {
        this.position++;
        return { value, terminated: true, end: this.position };
      }
      if (char !== '\\') {
        value += char;
        this.position++;
        continue;
      }
      const escaped = this.readEscape();
      if (escaped === null) break;
      value += escaped;
    }
    return { value, terminated: false, end: this.position };
  }

  /** Skips one value of any kind; false when the text ends inside it. */
  skipValue(): boolean {
    this.skipWhitespace();
    const char = this.text[this.position];
    if (char === '"') {
      this.position++;
      return this.readStringBody().terminated;
    }
    if (char === '{' || char === '[') return this.skipContainer();
    // A number, true, false or null: complete only once a delimiter follows it.
    const end = /[,}\]\s]/.exec(this.text.slice(this.position));
    if (!end || end.index === 0) return false;
    this.position += end.index;
    return true;
  }

  private skipContainer(): boolean {
    let depth = 0;
    while (this.position < this.text.length) {
      const char = this.text[this.position++]!;
      if (char === '"') {
        if (!this.readStringBody().terminated) return false;
      } else if (char === '{' || char === '[') {
        depth++;
      } else if ((char === '}' || char === ']') && --depth === 0) {
        return true;
      }
    }
    return false;
  }

  /** Decodes the escape at the current backslash; null (consuming nothing) when it is cut off. */
  private readEscape(): string | null {
    const kind = this.text[this.position + 1];
    if (kind === undefined) return null;
    if (kind !== 'u') {
      this.position += 2;
      return SIMPLE_ESCAPES[kind] ?? kind;
    }
    const hex = this.text.slice(this.position + 2, this.position + 6);
    if (hex.length < 4) return null;
    this.position += 6;
    return String.fromCharCode(Number.parseInt(hex, 16));
  }

  private skipWhitespace(): void {
    while (/\s/.test(this.text[this.position] ?? '')) this.position++;
  }
}

/** Half of a surrogate pair whose other half has not arrived yet would show as a broken character. */
function withoutDanglingHighSurrogate(text: string): string {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last <= 0xdbff ? text.slice(0, -1) : text;
}
