/**
 * Identifier-aware tokenisation, the same for the corpus and for queries: `getUserById`,
 * `get_user_by_id` and `GetUserByID` all yield the parts get/user/by/id, and the index also keeps
 * the whole identifier (`getuserbyid`) so an exact name outranks a scatter of its parts.
 */
const WORD = /[\p{L}_$][\p{L}\p{N}_$]*|\p{N}{2,}/gu;
const CAMEL_BOUNDARY = /([\p{Ll}\p{N}])(\p{Lu})|(\p{Lu})(\p{Lu}\p{Ll})/gu;
const SEPARATORS = /[_$\s]+/;

/** The seed's camel_snake_tokenize: lowercased identifier parts longer than one character. */
export function camelSnakeTokenize(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(WORD)) pushParts(match[0], out);
  return out;
}

/** Parts of every identifier plus the whole identifier when it has more than one part. */
export function indexTerms(text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(WORD)) {
    const word = match[0];
    const before = out.length;
    pushParts(word, out);
    if (out.length - before > 1) {
      const whole = normalizeIdentifier(word);
      if (whole.length > 1) out.push(whole);
    }
  }
  return out;
}

/** `get_user_by_id` and `getUserById` both become `getuserbyid`. */
export function normalizeIdentifier(word: string): string {
  return word.replace(/[_$]/g, '').toLowerCase();
}

export function splitIdentifier(word: string): string[] {
  const out: string[] = [];
  pushParts(word, out);
  return out;
}

function pushParts(word: string, out: string[]): void {
  if (!/[\p{Lu}_$]/u.test(word)) {
    if (word.length > 1) out.push(word.toLowerCase());
    return;
  }
  for (const part of word.replace(CAMEL_BOUNDARY, '$1$3 $2$4').split(SEPARATORS)) {
    if (part.length > 1) out.push(part.toLowerCase());
  }
}

export function countTerms(terms: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const term of terms) counts.set(term, (counts.get(term) ?? 0) + 1);
  return counts;
}
