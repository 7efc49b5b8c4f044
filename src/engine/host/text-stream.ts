/**
 * An answer's text as it streams across the worker boundary. The engine hands over the whole text
 * so far each time; sending it whole makes a long answer cost the square of its length in copies.
 * So the worker sends only what changed: the text from the first character that differs from what
 * it sent last (usually just the new words), and the client splices it onto what it has.
 */
export interface TextUpdate {
  /** Where the new text starts: everything before it is unchanged. */
  readonly from: number;
  readonly text: string;
}

/** What to send so that a receiver holding `sent` ends up with `latest`. */
export function textUpdate(sent: string, latest: string): TextUpdate {
  const limit = Math.min(sent.length, latest.length);
  let from = 0;
  while (from < limit && sent.charCodeAt(from) === latest.charCodeAt(from)) from++;
  return { from, text: latest.slice(from) };
}

/** The text after an update; an update past the end of what is held is refused as out of order. */
export function applyTextUpdate(held: string, update: TextUpdate): string | null {
  if (update.from > held.length) return null;
  return held.slice(0, update.from) + update.text;
}
