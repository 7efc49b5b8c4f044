/**
 * Keeps credentials out of everything the user sees or the logs keep. Configured keys are
 * registered when a client is made and replaced wherever they appear; anything shaped like a
 * credential (a bearer token, an `sk-…` key, an `api_key=…` pair) is replaced too, since a
 * server may echo headers or keys it was sent in its error body.
 */
const REDACTED = '[redacted]';
/** Shorter values are too likely to occur in ordinary text to be replaced everywhere. */
const MIN_SECRET_LENGTH = 8;
const secrets = new Set<string>();

const PATTERNS: readonly [RegExp, string][] = [
  [/\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1$2${REDACTED}`],
  [/\b(sk|pk|rk)-[A-Za-z0-9_-]{10,}/g, REDACTED],
  [
    /\b(x-api-key|api[_-]?key|authorization|access[_-]?token|secret)(["']?\s*[:=]\s*["']?)(?!\[redacted\])[^\s"',;}]{8,}/gi,
    `$1$2${REDACTED}`,
  ],
];

/** Registers a configured key: from now on it never appears in a message or a log event. */
export function registerSecret(value: string | null | undefined): void {
  if (value && value.length >= MIN_SECRET_LENGTH) secrets.add(value);
}

export function redact(text: string): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  for (const [pattern, replacement] of PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/** Every string inside a log event's fields, redacted; other values as they are. */
export function redactDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return redact(value) as T;
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redactDeep(item, depth + 1)) as T;
  if (value instanceof Error) return redact(value.message) as T;
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) out[key] = redactDeep(field, depth + 1);
  return out as T;
}
