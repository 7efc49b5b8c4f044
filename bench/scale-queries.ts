/**
 * Search questions drawn from a corpus itself, so no one tunes them: definition names, plain
 * English (the first words of comments) and error messages (the literals raised or thrown),
 * sampled with a seeded generator, the same for the same files every run.
 */
export interface BenchQuery {
  readonly kind: 'name' | 'english' | 'error';
  readonly text: string;
}

const DEFINITION = /\b(?:def|func|function|fn|class|struct|interface|module)\s+([A-Za-z_]\w{3,})/g;
const COMMENT = /^[ \t]*(?:#|\/\/+|\*)[ \t]+([A-Z][a-z]+(?:[ ,][a-z]+){4,11})/gm;
const ERROR =
  /(?:raise\s+[\w.]+\(|throw\s+new\s+\w+\(|errors\.New\(|fmt\.Errorf\(|panic!?\(|raise\s+[\w:]+,\s*)\s*["'`]([^"'`\n\\%{}]{16,90})["'`]/g;

/** `perKind` questions of each kind from `files`; fewer when a kind is rare in the corpus. */
export function sampleQueries(
  files: readonly { path: string; source: string }[],
  perKind: number,
  seed = 15,
): BenchQuery[] {
  const found: Record<BenchQuery['kind'], Set<string>> = {
    name: new Set(),
    english: new Set(),
    error: new Set(),
  };
  for (const file of files) {
    for (const match of file.source.matchAll(DEFINITION)) found.name.add(match[1]!);
    for (const match of file.source.matchAll(COMMENT)) found.english.add(match[1]!.trim());
    for (const match of file.source.matchAll(ERROR)) found.error.add(match[1]!.trim());
  }
  const random = mulberry32(seed);
  return (Object.keys(found) as BenchQuery['kind'][]).flatMap((kind) =>
    sample([...found[kind]].sort(), perKind, random).map((text) => ({ kind, text })),
  );
}

/** `count` distinct items of `items`, chosen by `random` (a partial Fisher–Yates shuffle). */
function sample<T>(items: T[], count: number, random: () => number): T[] {
  const pool = [...items];
  const out: T[] = [];
  while (out.length < count && pool.length) {
    const at = Math.floor(random() * pool.length);
    out.push(pool[at]!);
    pool[at] = pool[pool.length - 1]!;
    pool.pop();
  }
  return out;
}

/** A small seeded generator: the same seed gives the same questions on every machine. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The words of a question as plain search terms: letters and digits, two characters or more. */
export function queryWords(text: string): string[] {
  return [...new Set(text.toLowerCase().match(/[a-z0-9_]{2,}/g) ?? [])];
}
