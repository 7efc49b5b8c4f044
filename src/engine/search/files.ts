import type { CitableChunk } from './shaping';
import type { Span } from './spans';

/**
 * The result as a reader sees it: files, best first, each with its spans best first. A file
 * stands where its best chunk ranks (adding a decayed share of its further chunks was measured
 * and did not earn its place), raised by evidence about the whole file (the question's words
 * over all its chunks, in its path: see file-evidence.ts), and one file never takes more than
 * one place in the list.
 */
export interface FileResult {
  readonly path: string;
  readonly score: number;
  /** The role that lowered the file below source code, if any (see fileRole). */
  readonly role: FileRole | null;
  readonly spans: readonly Span[];
}

/** A file whose role the question does not ask about counts this much of a source file. */
const ROLE_PRIOR = 0.5;

export type FileRole =
  'test' | 'example' | 'docs' | 'type-stub' | 'generated' | 'vendored' | 'compat';

/** Path patterns of each role: folder names and file-name conventions shared across ecosystems. */
const ROLE_PATHS: Readonly<Record<FileRole, RegExp>> = {
  test: /(^|\/)(tests?|__tests__|specs?|testing|test[-_]?utils?|fixtures?|__mocks__|mocks?|conftest\.py$)(\/|$)|(^|\/)test_[^/]*$|[._-](test|spec)s?\.[^/]+$|_tests?\.py$/i,
  example: /(^|\/)(examples?|demos?|samples?|tutorials?|playground)(\/|$)/i,
  docs: /(^|\/)(docs?|documentation)(\/|$)|\.(md|rst|txt)$/i,
  'type-stub': /\.d\.[cm]?ts$|\.pyi$|(^|\/)type-?tests?(\/|$)|\.test-d\.tsx?$/i,
  generated: /(^|\/)(generated|__generated__|gen)(\/|$)|[._]generated\.[^/]+$|_pb2\.py$/i,
  vendored: /(^|\/)(vendor(ed)?|third[-_]party|node_modules|_vendor)(\/|$)/i,
  compat: /(^|\/)(compat|legacy|deprecated)(\/|$)|[._-](compat|legacy)\.[^/]+$/i,
};

/** Words of a question that ask about a role: then that role counts like source. */
const ROLE_WORDS: Readonly<Record<FileRole, RegExp>> = {
  test: /\b(tests?|testing|spec|specs|fixtures?|mocks?|pytest|assert\w*)\b/i,
  example: /\b(examples?|demos?|samples?|tutorials?)\b/i,
  docs: /\b(docs?|documentation|readme)\b/i,
  'type-stub': /\b(types?|typing|typed|stubs?|declarations?)\b/i,
  generated: /\bgenerated\b/i,
  vendored: /\b(vendor(ed)?|third[- ]party)\b/i,
  compat: /\b(compat\w*|legacy|deprecated|backwards?)\b/i,
};

/** What a file's definitions say about the role it plays. */
export interface FileDefinitions {
  /** The names its definitions carry, modules left out. */
  readonly names: readonly string[];
  /** How many of them only declare a type and hold no code (interfaces, type aliases). */
  readonly typeDeclarations: number;
}

export const NO_DEFINITIONS: FileDefinitions = { names: [], typeDeclarations: 0 };

/**
 * The role a file plays, from its path and else its content: a file whose definitions are mostly
 * test functions (`test_…`, `Test…`) is a test file wherever it lives, and one whose definitions
 * mostly declare types (a `types.ts` of interfaces) declares what other files implement, as a
 * stub does.
 */
export function fileRole(
  path: string,
  definitions: FileDefinitions = NO_DEFINITIONS,
): FileRole | null {
  return pathRole(path) ?? contentRole(definitions);
}

/** Paths whose role pathRole keeps (a path's role never changes). */
const KEPT_PATH_ROLES = 8192;
const pathRoles = new Map<string, FileRole | null>();

/** The role a file's path gives it, kept: the same files are ranked question after question. */
function pathRole(path: string): FileRole | null {
  let role = pathRoles.get(path);
  if (role === undefined) {
    role =
      (Object.keys(ROLE_PATHS) as FileRole[]).find((each) => ROLE_PATHS[each].test(path)) ?? null;
    if (pathRoles.size >= KEPT_PATH_ROLES) pathRoles.clear();
    pathRoles.set(path, role);
  }
  return role;
}

const TEST_NAME = /^(test_|Test[A-Z_])/;

/** A file whose definitions are mostly test functions is a test file; mostly types, a stub. */
function contentRole({ names, typeDeclarations }: FileDefinitions): FileRole | null {
  // counted in place: asked of every file a question lists, some with thousands of definitions
  let tests = 0;
  for (let i = 0; i < names.length; i++) if (TEST_NAME.test(names[i]!)) tests++;
  if (names.length && tests * 2 > names.length) return 'test';
  return names.length && typeDeclarations * 2 > names.length ? 'type-stub' : null;
}

/** The roles a question asks about. */
export function rolesAsked(question: string): Set<FileRole> {
  return new Set(
    (Object.keys(ROLE_WORDS) as FileRole[]).filter((role) => ROLE_WORDS[role].test(question)),
  );
}

/**
 * What the file that leads on one kind of whole-file evidence gains: the standing of the second
 * chunk in the ranking (a file's own standing is 1 / rank of its best chunk); the other files
 * gain in proportion to their evidence.
 */
const FILE_EVIDENCE_SHARE = 0.5;

/**
 * How much a file's share of the question's words (see coverageScores) weighs in its order within
 * the list: its standing is multiplied by the share's square root, so a file holding half the
 * words keeps 0.71 of its standing, not half (a plain product, as a coordination factor, let one
 * missing word outweigh the rest of the evidence and lost places in both columns).
 */
const COVERAGE_EXPONENT = 0.5;

/**
 * Groups ranked spans (best first; `score` gives each span's chunk score) into files ranked by
 * their best chunk, fused with any whole-file `evidence`. Files of a role the question does not
 * ask about count ROLE_PRIOR of their score when `rolePriors` is on. Within a file, spans keep
 * their order, and the spans of one chunk stay together. `contenders` (the best chunk of each of
 * further files, at no standing of their own) compete for the list's places on evidence alone: the
 * list holds as many files as `spans` do, and only the contenders that take a place are shaped.
 * With `coverage` (each given file's share of the question's words; asked only for the files that
 * took the places, since it never decides who is listed), those files are then ordered by their
 * standing weighed by it: a file holding more of the question's words
 * outranks a sibling repeating fewer of them more often. The share orders the list and never
 * decides who is in it, where a file lacking one word would lose its place to a weaker one.
 * `chunkStanding`, when given, scores each chunk for the files list in place of its spans' scores
 * (a ranking read for the files order only); the spans keep their own.
 */
export function rankFiles(
  spans: readonly Span[],
  question: string,
  definitions: (path: string) => FileDefinitions,
  rolePriors: boolean,
  evidence: readonly ReadonlyMap<string, number>[] = [],
  contenders: readonly Pick<CitableChunk, 'path' | 'spans'>[] = [],
  coverage: ((paths: readonly string[]) => ReadonlyMap<string, number>) | null = null,
  chunkStanding: ReadonlyMap<string, number> | null = null,
): FileResult[] {
  const places = new Set(spans.map((span) => span.path)).size;
  const byPath = new Map<string, Span[] | (() => Span[])>();
  for (const span of spans) {
    const listed = byPath.get(span.path);
    if (Array.isArray(listed)) listed.push(span);
    else byPath.set(span.path, [span]);
  }
  for (const contender of contenders)
    if (!byPath.has(contender.path))
      byPath.set(contender.path, () => contender.spans().map((span) => ({ ...span, score: 0 })));
  const asked = rolesAsked(question);
  const standing = fusedStanding(
    [...byPath].map(([path, fileSpans]) => [
      path,
      Array.isArray(fileSpans)
        ? Math.max(...fileSpans.map((span) => chunkStanding?.get(span.chunkId) ?? span.score))
        : 0,
    ]),
    evidence,
  );
  const files = [...byPath.keys()].map((path, order) => {
    // a file's definitions are read only when its path gives it no role
    const role = pathRole(path) ?? contentRole(definitions(path));
    const prior = rolePriors && role && !asked.has(role) ? ROLE_PRIOR : 1;
    return { path, score: prior * standing.get(path)!, role: prior < 1 ? role : null, order };
  });
  const byScore = (a: { score: number; order: number }, b: { score: number; order: number }) =>
    b.score - a.score || a.order - b.order;
  const placed = files.sort(byScore).slice(0, places);
  const shares = coverage?.(placed.map((file) => file.path));
  const ordered = shares
    ? placed
        .map((file) => ({
          ...file,
          score: file.score * (shares.get(file.path) ?? 0) ** COVERAGE_EXPONENT,
        }))
        .sort(byScore)
    : placed;
  return ordered.map(({ order: _order, ...file }) => {
    const fileSpans = byPath.get(file.path)!;
    return { ...file, spans: byChunk(Array.isArray(fileSpans) ? fileSpans : fileSpans()) };
  });
}

/**
 * Each file's standing: its best chunk's score, plus, for each kind of whole-file evidence,
 * FILE_EVIDENCE_SHARE times its score there over the best file's score there.
 */
function fusedStanding(
  best: readonly (readonly [string, number])[],
  evidence: readonly ReadonlyMap<string, number>[],
): Map<string, number> {
  const standing = new Map(best);
  for (const scores of evidence) {
    const top = Math.max(
      0,
      ...[...scores].filter(([path]) => standing.has(path)).map(([, score]) => score),
    );
    if (top <= 0) continue;
    for (const [path, score] of scores)
      if (standing.has(path))
        standing.set(path, standing.get(path)! + (FILE_EVIDENCE_SHARE * score) / top);
  }
  return standing;
}

/** The spans of one chunk next to each other, chunks in the order they first appear. */
function byChunk(spans: readonly Span[]): Span[] {
  const groups = new Map<string, Span[]>();
  for (const span of spans) groups.set(span.chunkId, [...(groups.get(span.chunkId) ?? []), span]);
  return [...groups.values()].flat();
}
