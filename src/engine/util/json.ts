/**
 * `text` parsed as JSON, or null when it is not JSON: a caller checks what it reads against a
 * schema, which then reports a damaged line or header as such, with its own message.
 */
export function parseJsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
