import { redact } from './redact';
/**
 * Typed results for operations that can fail for reasons a user should hear about.
 * Engine functions return these instead of throwing; callers decide how to surface them.
 */
export type Result<T, E = EngineError> = Ok<T> | Err<E>;

export interface Ok<T> {
  readonly ok: true;
  readonly value: T;
}

export interface Err<E> {
  readonly ok: false;
  readonly error: E;
}

export const ERROR_CODES = [
  'invalid_input',
  'not_found',
  'io_error',
  'index_locked',
  'index_corrupt',
  'outside_workspace',
  'model_unavailable',
  'cancelled',
  'unsupported',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export interface EngineError {
  readonly code: ErrorCode;
  /** One sentence a user can act on; never a stack trace. */
  readonly message: string;
}

export const ok = <T>(value: T): Ok<T> => ({ ok: true, value });
export const err = <E = EngineError>(error: E): Err<E> => ({ ok: false, error });
/** Messages are shown to users and logged: configured keys never appear in them. */
export const fail = (code: ErrorCode, message: string): Err<EngineError> =>
  err({ code, message: redact(message) });

/** The message of an unknown thrown value, without its stack. */
export function describeError(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    const message =
      code && !cause.message.includes(code) ? `${cause.message} (${code})` : cause.message;
    // fetch() reports "fetch failed" and keeps the reason (DNS, refused, TLS) in `cause`.
    return cause.cause !== undefined ? `${message}: ${describeError(cause.cause)}` : message;
  }
  return String(cause);
}

/** Thrown only across the engine's outer boundary (CLI, worker) when a Result must become an exception. */
export class EngineFailure extends Error {
  constructor(readonly error: EngineError) {
    super(error.message);
    this.name = 'EngineFailure';
  }
}

export function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new EngineFailure(result.error);
  return result.value;
}
