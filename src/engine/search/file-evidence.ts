import type { ChunkLevel } from '../model';
import type { LexicalIndex } from '../store/lexical';
import { indexTerms } from '../text/tokenize';
import { bm25Idf, bm25TermScore } from './bm25';
import type { QuestionWord } from './proximity';

/**
 * Evidence about whole files, beside the evidence about their chunks: a file that holds more of
 * the question's words than another (summed over all its chunks) or names them in its path is
 * more likely what the question is about, even when a single chunk of the other file matches
 * better. Each function scores the candidate files only, from statistics the index already has.
 */

/** The levels a file's own text is spread over (folder summaries are not part of it). */
const FILE_LEVELS: readonly ChunkLevel[] = ['file', 'class', 'function'];

/**
 * BM25 over whole files: a file's term frequencies and length are the sums over its chunks; a
 * term's rarity is taken over all chunks of those levels, and the mean file length from the
 * index's own totals. `weights` lowers terms the question did not use (related words, stems).
 */
export function wholeFileScores(
  lexical: LexicalIndex,
  paths: readonly string[],
  terms: readonly string[],
  weights: ReadonlyMap<string, number> = new Map(),
): Map<string, number> {
  const { idf, averageLength } = fileStatistics(lexical, terms, weights);
  const termWeights = [...idf.values()];
  const files = lexical.fileTermCounts(paths, FILE_LEVELS, [...idf.keys()]);
  const scores = new Map<string, number>();
  paths.forEach((path, at) => {
    const { length, counts } = files[at]!;
    let score = 0;
    for (let i = 0; i < termWeights.length; i++)
      score += bm25TermScore(termWeights[i]!, counts[i]!, length, averageLength);
    if (score > 0) scores.set(path, score);
  });
  return scores;
}

/**
 * The share of the question's words each file holds, in any of their forms (`words` maps each
 * question word to its forms: the word and its stems), in its text or in its folder and file
 * names. Each word counts by its rarity among the index's chunks (a word the index lacks in every
 * form counts nothing). How often the file repeats a word does not matter here: that is what
 * wholeFileScores weighs.
 */
export function coverageScores(
  lexical: LexicalIndex,
  paths: readonly string[],
  words: ReadonlyMap<string, readonly string[]>,
): Map<string, number> {
  const weighted = weighQuestionWords(lexical, words);
  const present = [...new Set(weighted.flatMap(({ forms }) => forms))].filter((form) =>
    FILE_LEVELS.some((level) => lexical.documentFrequencyOf(level, form) > 0),
  );
  const files = lexical.fileTermCounts(paths, FILE_LEVELS, present);
  const total = weighted.reduce((sum, word) => sum + word.weight, 0);
  const scores = new Map<string, number>();
  if (!total) return scores;
  paths.forEach((path, at) => {
    const held = new Set(present.filter((_, i) => files[at]!.counts[i]! > 0));
    const named = [...pathWords(path)];
    const inPath = (form: string) => named.some((word) => word === form || prefixMatch(form, word));
    const covered = weighted
      .filter(({ forms }) => forms.some((form) => held.has(form) || inPath(form)))
      .reduce((sum, word) => sum + word.weight, 0);
    scores.set(path, covered / total);
  });
  return scores;
}

/**
 * Each question word with its forms (`words` maps each word to its forms: the word and its
 * stems), weighed by the rarity among the index's chunks of its rarest form the index holds; a
 * word the index lacks in every form weighs nothing.
 */
export function weighQuestionWords(
  lexical: LexicalIndex,
  words: ReadonlyMap<string, readonly string[]>,
): QuestionWord[] {
  const { idf } = fileStatistics(lexical, [...new Set([...words.values()].flat())], new Map());
  return [...words.values()].map((forms) => ({
    forms,
    weight: Math.max(0, ...forms.map((form) => idf.get(form) ?? 0)),
  }));
}

/** Each present term's weight (query weight × rarity over chunks) and the mean file length. */
function fileStatistics(
  lexical: LexicalIndex,
  terms: readonly string[],
  weights: ReadonlyMap<string, number>,
): { idf: Map<string, number>; averageLength: number } {
  const stats = FILE_LEVELS.map((level) => lexical.levelStats(level));
  const chunks = stats.reduce((sum, level) => sum + level.documents, 0);
  const files = stats[0]!.documents;
  const totalLength = stats.reduce((sum, level) => sum + level.documents * level.averageLength, 0);
  const idf = new Map<string, number>();
  for (const term of new Set(terms)) {
    const frequency = FILE_LEVELS.reduce(
      (sum, level) => sum + lexical.documentFrequencyOf(level, term),
      0,
    );
    if (frequency) idf.set(term, (weights.get(term) ?? 1) * bm25Idf(chunks, frequency));
  }
  return { idf, averageLength: files ? totalLength / files : 0 };
}

/** The words of a path's folders and file name (extension dropped), split like identifiers. */
export function pathWords(path: string): Set<string> {
  return new Set(indexTerms(path.replace(/\.[^./]+$/, '').replace(/\//g, ' ')));
}

/** Paths whose words a vocabulary keeps (a few hundred bytes each). */
const KEPT_PATH_WORDS = 4096;

/**
 * How many of the index's files hold each word in their folder or file names: the rarity of a
 * path word. Built once, then kept up to date file by file as the index changes.
 */
export class PathVocabulary {
  private readonly frequency = new Map<string, number>();
  private readonly counted = new Set<string>();
  /**
   * The words of the paths questions scored lately: the same candidate files come back question
   * after question, and splitting a path builds several strings. Emptied when full.
   */
  private readonly words = new Map<string, readonly string[]>();

  constructor(paths: Iterable<string>) {
    for (const path of paths) this.count(path, 1);
  }

  get size(): number {
    return this.counted.size;
  }

  /** Follows the `changed` files: each is counted while `indexed` says the index holds it. */
  refresh(changed: Iterable<string>, indexed: (path: string) => boolean): void {
    for (const path of changed) {
      const held = indexed(path);
      if (held !== this.counted.has(path)) this.count(path, held ? 1 : -1);
    }
  }

  /** The distinct words of `path` (pathWords), kept for the next questions. */
  wordsOf(path: string): readonly string[] {
    let words = this.words.get(path);
    if (!words) {
      if (this.words.size >= KEPT_PATH_WORDS) this.words.clear();
      this.words.set(path, (words = [...pathWords(path)]));
    }
    return words;
  }

  idf(word: string): number {
    const frequency = this.frequency.get(word) ?? 0;
    return frequency ? bm25Idf(this.size, frequency) : 0;
  }

  private count(path: string, delta: 1 | -1): void {
    if (delta > 0) this.counted.add(path);
    else this.counted.delete(path);
    for (const word of pathWords(path)) {
      const frequency = (this.frequency.get(word) ?? 0) + delta;
      if (frequency > 0) this.frequency.set(word, frequency);
      else this.frequency.delete(word);
    }
  }
}

/**
 * Question words found among a file's folder and file names, each counted by its rarity among
 * the index's paths (a word every path holds says next to nothing). A question word and a path
 * word match when they are equal or one begins with the other and is at least half as long
 * (`client` and `clients`, `valid` and `validators`).
 */
export function pathScores(
  vocabulary: PathVocabulary,
  paths: readonly string[],
  terms: readonly string[],
  weights: ReadonlyMap<string, number> = new Map(),
): Map<string, number> {
  const scores = new Map<string, number>();
  const distinct = [...new Set(terms)];
  for (const path of paths) {
    const words = vocabulary.wordsOf(path);
    let score = 0;
    for (const term of distinct) {
      const rarity = matchedRarity(vocabulary, words, term);
      if (rarity !== null) score += (weights.get(term) ?? 1) * rarity;
    }
    if (score > 0) scores.set(path, score);
  }
  return scores;
}

/**
 * The rarity of the path word `term` matches: the word itself when the path holds it, else the
 * rarest of the words it matches by prefix; null when it matches none. Asked for every candidate
 * file and question word, so it builds no list of the matches.
 */
function matchedRarity(
  vocabulary: PathVocabulary,
  words: readonly string[],
  term: string,
): number | null {
  if (words.includes(term)) return vocabulary.idf(term);
  let rarest: number | null = null;
  for (let i = 0; i < words.length; i++)
    if (prefixMatch(term, words[i]!))
      rarest = Math.max(rarest ?? -Infinity, vocabulary.idf(words[i]!));
  return rarest;
}

/** One word begins with the other, which is at least half its length. */
function prefixMatch(a: string, b: string): boolean {
  // no pair built per call: asked for every candidate file, question word and path word
  const short = a.length <= b.length ? a : b;
  const long = short === a ? b : a;
  return short.length > 1 && short.length * 2 >= long.length && long.startsWith(short);
}

/**
 * The files holding the definitions the question names (the definition lookup's hits), each at
 * its best hit's score: the file that defines a named class outranks the files that only use it.
 */
export function definingScores(
  named: readonly { readonly chunkId: string; readonly score: number }[],
  fileOf: (chunkId: string) => string | null | undefined,
  paths: readonly string[],
): Map<string, number> {
  const candidates = new Set(paths);
  const scores = new Map<string, number>();
  for (const hit of named) {
    const path = fileOf(hit.chunkId);
    if (path && candidates.has(path)) scores.set(path, Math.max(scores.get(path) ?? 0, hit.score));
  }
  return scores;
}

/**
 * The best chunk of each file among the `retrieved` chunks (in the order given) that is not
 * `listed` yet: the further files considered for the files list.
 */
export function closestUnlisted(
  retrieved: readonly { readonly chunkId: string }[],
  fileOf: (chunkId: string) => string | null | undefined,
  listed: ReadonlySet<string>,
): string[] {
  const closest = new Map<string, string>();
  for (const hit of retrieved) {
    const path = fileOf(hit.chunkId);
    if (path && !listed.has(path) && !closest.has(path)) closest.set(path, hit.chunkId);
  }
  return [...closest.values()];
}
