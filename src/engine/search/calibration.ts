import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Embedder } from '../embed/embedder';
import { cosine } from '../embed/embedder';
import type { ChunkMeta } from '../store/tables';
import { camelSnakeTokenize, countTerms } from '../text/tokenize';
import { getLogger } from '../log/logger';
import { describeError } from '../util/result';
import { writeFileAtomic } from '../util/atomic-file';
import { bm25Idf, bm25TermScore } from './bm25';
import { codeLines, DOCSTRING_OPEN, documentationLines } from './evidence';
import { RRF_K } from './fusion';
import { STOP_WORDS } from './preprocess';
import { PLAIN_ENGLISH_SEMANTIC_WEIGHT } from './technicality';

/**
 * How far the semantic retriever can be trusted on this codebase with this embedding model,
 * measured on the codebase itself. The default weights (lexical 0.3 + 0.5·technicality, semantic
 * the rest) assume a model that bridges plain English and code; a small general-purpose model
 * does not, and then its list buries what word matching found. A function's documentation is a
 * plain-English question whose answer is known — the function's code — so both retrievers rank
 * the documented functions' code (documentation removed) for each one's documentation, and the
 * semantic share of a weighted RRF of the two that ranks the answers best is what the semantic
 * list gets for a plain-English question. Questions are scaled from there by the technicality formula.
 */
export const RetrieverCalibration = z.object({
  /** The method's version: a calibration measured another way is measured again. */
  version: z.literal(3),
  modelId: z.string(),
  /** Function chunks in the index when it was measured: a codebase that grew a lot is measured again. */
  functions: z.number().int().nonnegative(),
  /** Documented functions used as questions (and, with their documentation removed, as the pool). */
  questions: z.number().int().nonnegative(),
  /** Null when no documented function could be measured: the default weights stay. */
  // ranges checked: a stored value out of them (a damaged or edited file) is measured again
  lexicalMrr: z.number().min(0).max(1).nullable(),
  semanticMrr: z.number().min(0).max(1).nullable(),
  /** The semantic share of the fusion that ranked the answers best. */
  semanticShare: z.number().min(0).max(1),
  /** semanticShare over the default semantic weight for plain English, at most 1. */
  semanticTrust: z.number().min(0).max(1),
  /**
   * Files indexed or removed since it was measured, kept across restarts: many changed files can
   * change the measure without changing the codebase's size.
   */
  changedFiles: z.number().int().nonnegative().default(0),
});
export type RetrieverCalibration = z.infer<typeof RetrieverCalibration>;

export interface CalibrationSample {
  readonly chunkId: string;
  /** The function's leading documentation, as plain text. */
  readonly question: string;
  /** The function's code without its documentation. */
  readonly code: string;
}

export const CALIBRATION_VERSION = 3;
/**
 * A measure over this many documented functions or more is taken as it is; one over fewer moves
 * the default weights only that share of the way towards it (10 functions: a third), so the
 * weights change smoothly with the number of functions measured, never at a threshold.
 */
export const FULL_TRUST_QUESTIONS = 30;
/** Static models embed in microseconds; a transformer costs a forward pass per text. */
const MAX_QUESTIONS: Record<Embedder['kind'], number> = { static: 400, transformer: 120 };
/** Functions read to find documented ones: a few times the questions wanted is enough. */
const CANDIDATES_PER_QUESTION = 4;
const MIN_QUESTION_WORDS = 6;
const MAX_QUESTION_CHARACTERS = 300;
const MIN_CODE_LINES = 3;
const MRR_DEPTH = 10;
const SHARE_STEP = 0.05;
/** Measured again when the number of functions changed by more than this share. */
const DRIFT = 0.2;
const FILE_NAME = 'calibration.json';
const DOC_MARKER = /^(\/\*\*?|\*\/|\*|\/\/+|#+|[rubfRUBF]{0,2}("""|'''))/;
const DOC_END = /("""|'''|\*\/)\s*$/;

const log = getLogger('search.calibration');

/** Whether the stored calibration (if any) still describes this model and this codebase. */
export function isCurrent(
  calibration: RetrieverCalibration | null,
  modelId: string,
  functions: number,
): boolean {
  return (
    !!calibration &&
    calibration.version === CALIBRATION_VERSION &&
    calibration.modelId === modelId &&
    Math.abs(functions - calibration.functions) <= DRIFT * Math.max(1, calibration.functions)
  );
}

/** Functions spread over the whole index (every n-th in id order: the same index, the same sample). */
export function calibrationCandidates(
  catalog: Iterable<ChunkMeta>,
  kind: Embedder['kind'],
): ChunkMeta[] {
  const functions = [...catalog]
    .filter((meta) => meta.level === 'function')
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return spread(functions, MAX_QUESTIONS[kind] * CANDIDATES_PER_QUESTION);
}

/** The documented candidates, each split into its documentation and its code. */
export function calibrationSamples(
  candidates: readonly ChunkMeta[],
  texts: ReadonlyMap<string, string>,
  kind: Embedder['kind'],
): CalibrationSample[] {
  const samples: CalibrationSample[] = [];
  for (const meta of candidates) {
    const text = texts.get(meta.id);
    const sample = text ? splitDocumentation(meta, text) : null;
    if (sample) samples.push(sample);
  }
  return spread(samples, MAX_QUESTIONS[kind]);
}

/** Ranks every sample's code for every sample's question, by words and by vectors, and fuses the two. */
export async function calibrate(
  samples: readonly CalibrationSample[],
  embedder: Embedder,
  functions: number,
): Promise<RetrieverCalibration> {
  if (!samples.length) {
    return {
      version: CALIBRATION_VERSION,
      modelId: embedder.id,
      functions,
      questions: samples.length,
      lexicalMrr: null,
      semanticMrr: null,
      semanticShare: PLAIN_ENGLISH_SEMANTIC_WEIGHT,
      semanticTrust: 1,
      changedFiles: 0,
    };
  }
  const lexical = new PoolBm25(samples.map((sample) => words(sample.code)));
  const vectors = await embedder.embed([
    ...samples.map((sample) => sample.code),
    ...samples.map((sample) => sample.question),
  ]);
  const codeVectors = vectors.slice(0, samples.length);
  const rankings = samples.map((sample, target) => ({
    lexical: ranks(lexical.scores(words(sample.question))),
    semantic: ranks(codeVectors.map((vector) => cosine(vectors[samples.length + target]!, vector))),
  }));
  const mrr = (scoresOf: (ranking: (typeof rankings)[number]) => number[]) =>
    rankings.reduce((sum, ranking, target) => sum + reciprocalRank(scoresOf(ranking), target), 0) /
    samples.length;
  const inverse = (list: readonly number[]) => list.map((rank) => 1 / rank);
  let best = { share: 0, mrr: -1 };
  for (let step = 0; step <= Math.round(1 / SHARE_STEP); step++) {
    const share = step * SHARE_STEP;
    const fused = mrr((ranking) =>
      ranking.lexical.map(
        (rank, i) => (1 - share) / (RRF_K + rank) + share / (RRF_K + ranking.semantic[i]!),
      ),
    );
    // the default weights change only as far as the measure asks: ties go to the share nearer them
    const nearer =
      Math.abs(share - PLAIN_ENGLISH_SEMANTIC_WEIGHT) <
      Math.abs(best.share - PLAIN_ENGLISH_SEMANTIC_WEIGHT);
    if (fused > best.mrr + 1e-9 || (Math.abs(fused - best.mrr) <= 1e-9 && nearer))
      best = { share, mrr: fused };
  }
  return {
    version: CALIBRATION_VERSION,
    modelId: embedder.id,
    functions,
    questions: samples.length,
    lexicalMrr: round(mrr((ranking) => inverse(ranking.lexical))),
    semanticMrr: round(mrr((ranking) => inverse(ranking.semantic))),
    semanticShare: round(best.share),
    semanticTrust: round(
      shrunk(Math.min(1, best.share / PLAIN_ENGLISH_SEMANTIC_WEIGHT), samples.length),
    ),
    changedFiles: 0,
  };
}

/** The measured trust moved back towards the default (1) as far as few samples leave it unsure. */
function shrunk(measured: number, samples: number): number {
  const confidence = Math.min(1, samples / FULL_TRUST_QUESTIONS);
  return 1 + (measured - 1) * confidence;
}

export async function readCalibration(storeDir: string): Promise<RetrieverCalibration | null> {
  const text = await fs.readFile(path.join(storeDir, FILE_NAME), 'utf8').catch(() => null);
  if (text === null) return null;
  try {
    const parsed = RetrieverCalibration.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch (cause) {
    // a damaged file is measured again, like a missing one
    log.warn('calibration_unreadable', { store: storeDir, error: describeError(cause) });
    return null;
  }
}

export function writeCalibration(
  storeDir: string,
  calibration: RetrieverCalibration,
): Promise<void> {
  return writeFileAtomic(path.join(storeDir, FILE_NAME), JSON.stringify(calibration, null, 2));
}

function splitDocumentation(meta: ChunkMeta, text: string): CalibrationSample | null {
  const lines = codeLines(meta, text);
  const docs = documentationLines(lines, meta.language);
  const code = lines.filter((line) => !docs.has(line.line) && line.text.trim());
  if (code.length < MIN_CODE_LINES) return null;
  const question = leadingDocumentation(lines, docs)
    .map((text) => text.trim().replace(DOC_MARKER, '').replace(DOC_END, '').trim())
    // parameter tags (@param, :param …) describe arguments, not what the function is for
    .filter((text) => text && !text.startsWith('@') && !text.startsWith(':'))
    .join(' ')
    .slice(0, MAX_QUESTION_CHARACTERS);
  if (words(question).length < MIN_QUESTION_WORDS) return null;
  return { chunkId: meta.id, question, code: code.map((line) => line.text).join('\n') };
}

/**
 * The function's own documentation: the first docstring or block comment (to its end), or the
 * first run of line comments — not the comments further down in its body.
 */
function leadingDocumentation(
  lines: readonly { line: number; text: string }[],
  docs: ReadonlySet<number>,
): string[] {
  const first = lines.findIndex((line) => docs.has(line.line) && line.text.trim());
  if (first < 0) return [];
  const opening = lines[first]!.text.trim();
  const quote = DOCSTRING_OPEN.exec(opening);
  const closer = quote ? quote[1]! : opening.startsWith('/*') ? '*/' : null;
  // line comments after code are remarks in the body, not the function's documentation
  if (!closer && lines.slice(0, first).some((line) => line.text.trim())) return [];
  const out: string[] = [];
  for (const [i, line] of lines.slice(first).entries()) {
    const text = line.text.trim();
    if (closer) {
      out.push(line.text);
      // on the opening line, only a closer after the opener ends the block
      if ((i === 0 ? text.slice(quote ? quote[0].length : 2) : text).includes(closer)) break;
    } else if (docs.has(line.line) && text) out.push(line.text);
    else break;
  }
  return out;
}

function spread<T>(items: readonly T[], limit: number): T[] {
  if (items.length <= limit) return [...items];
  const step = items.length / limit;
  return Array.from({ length: limit }, (_, i) => items[Math.floor(i * step)]!);
}

/**
 * Identifier parts, stop words dropped. Unlike the index, whole identifiers are left out: a
 * docstring often names code (`get_signing_serializer`) where a question in plain English does
 * not, and matching those names would credit word search with what real questions never give it.
 */
function words(text: string): string[] {
  return camelSnakeTokenize(text).filter((word) => !STOP_WORDS.has(word));
}

/** 1-based ranks by score, best first; a document with no score at all ranks after every other. */
function ranks(scores: readonly number[]): number[] {
  const order = scores.map((score, i) => ({ score, i })).sort((a, b) => b.score - a.score);
  const out = new Array<number>(scores.length);
  order.forEach(
    ({ score, i }, position) => (out[i] = score > 0 ? position + 1 : scores.length + 1),
  );
  return out;
}

/** 1 / rank of the target within the first MRR_DEPTH by score (ties count against it), else 0. */
function reciprocalRank(scores: readonly number[], target: number): number {
  const own = scores[target]!;
  if (!(own > 0)) return 0;
  let rank = 1;
  for (let i = 0; i < scores.length && rank <= MRR_DEPTH; i++)
    if (i !== target && scores[i]! >= own) rank++;
  return rank <= MRR_DEPTH ? 1 / rank : 0;
}

/** The lexical index's BM25 (without its name boost) over a small in-memory pool. */
class PoolBm25 {
  private readonly frequencies: Map<string, number>[];
  private readonly lengths: number[];
  private readonly documentFrequency = new Map<string, number>();
  private readonly averageLength: number;

  constructor(documents: readonly string[][]) {
    this.frequencies = documents.map((terms) => countTerms(terms));
    for (const counts of this.frequencies)
      for (const term of counts.keys())
        this.documentFrequency.set(term, (this.documentFrequency.get(term) ?? 0) + 1);
    this.lengths = documents.map((terms) => terms.length);
    this.averageLength = this.lengths.reduce((a, b) => a + b, 0) / Math.max(1, documents.length);
  }

  scores(query: readonly string[]): number[] {
    const idf = [...new Set(query)].flatMap((term) => {
      const frequency = this.documentFrequency.get(term) ?? 0;
      return frequency ? [[term, bm25Idf(this.frequencies.length, frequency)] as const] : [];
    });
    return this.frequencies.map((counts, doc) =>
      idf.reduce(
        (score, [term, weight]) =>
          score +
          bm25TermScore(weight, counts.get(term) ?? 0, this.lengths[doc]!, this.averageLength),
        0,
      ),
    );
  }
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
