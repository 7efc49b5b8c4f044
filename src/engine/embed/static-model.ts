import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { l2Normalize, type EmbedOptions, type Embedder } from './embedder';
import { readSafetensors } from './safetensors';
import { detached } from '../util/generations';
import { WordPieceTrie } from './word-piece-trie';
import { PieceCache } from './piece-cache';
import { fnv1a } from '../util/hash';

/**
 * A Model2Vec static embedding model in the hub layout (config.json, tokenizer.json,
 * model.safetensors). Inference: tokenize without special tokens, drop unknown tokens, keep
 * the first 512, average their rows, L2-normalise when the config says so.
 */
const Config = z.looseObject({
  model_type: z.string().optional(),
  normalize: z.boolean().optional(),
  hidden_dim: z.number().optional(),
});

/** Everything a worker thread needs to rebuild the model; the table is shared memory, not copied. */
export interface StaticModelPayload {
  readonly id: string;
  readonly tokenizerJson: string;
  readonly tokenizerConfig: Record<string, unknown>;
  readonly table: Float32Array;
  readonly dimensions: number;
  readonly normalize: boolean;
  /** Per-token weights and id remapping of vocabulary-quantised models, when present. */
  readonly weights: Float32Array | null;
  readonly mapping: Float32Array | null;
}

const MAX_TOKENS = 512;
/** Tokens rarely exceed this many characters, so text past MAX_TOKENS * this is never reached. */
const CHARACTERS_PER_TOKEN_BOUND = 8;
const WORD_CACHE_LIMIT = 200_000;

/** Character classes for the piece scanner: 0 word, 1 whitespace, 2 ASCII punctuation. */
const WORD = 0;
const SPACE = 1;
const PUNCT = 2;
const ASCII_CLASS = new Uint8Array(128).map((_, code) => {
  if (code <= 32 || code === 127) return SPACE;
  const isPunctuation =
    (code >= 33 && code <= 47) ||
    (code >= 58 && code <= 64) ||
    (code >= 91 && code <= 96) ||
    (code >= 123 && code <= 126);
  return isPunctuation ? PUNCT : WORD;
});

function charClass(code: number): number {
  if (code < 128) return ASCII_CLASS[code]!;
  // Unicode spaces; every other non-ASCII character is left for the tokenizer to split.
  return code === 0xa0 ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x3000 ||
    (code >= 0x2000 && code <= 0x200a)
    ? SPACE
    : WORD;
}

/** Tokenizers.js (pure JavaScript): no ONNX runtime or image library is loaded for a static model. */
interface WordPieceTokenizer {
  encode(text: string, options: { add_special_tokens: boolean }): { ids: number[] };
  token_to_id(token: string): number | undefined;
}

/**
 * WordPiece as a BERT tokenizer applies it to a word of ASCII letters and digits, or one ASCII
 * punctuation mark: lowercased, then the longest vocabulary entry from the left, again and again
 * with the `##` prefix. Such pieces are most of what code holds, and no normaliser,
 * pre-tokeniser or added token changes them, so this gives the tokenizer's ids without its
 * per-call machinery.
 */
class AsciiWordPiece {
  /** The vocabulary split by kind: word starts, and continuations without their prefix. */
  private readonly starts: WordPieceTrie;
  private readonly continuations: WordPieceTrie;

  private constructor(
    vocabulary: Readonly<Record<string, number>>,
    prefix: string,
    private readonly maxCharacters: number,
    private readonly unknownId: number,
  ) {
    const entries = Object.entries(vocabulary);
    this.starts = new WordPieceTrie(entries);
    this.continuations = new WordPieceTrie(
      entries
        .filter(([token]) => token.startsWith(prefix))
        .map(([token, id]) => [token.slice(prefix.length), id] as const),
    );
  }

  /** Null unless the tokenizer is BERT-style (the only kind this reproduces exactly). */
  static from(tokenizerJson: unknown): AsciiWordPiece | null {
    const json = tokenizerJson as {
      normalizer?: { type?: string; lowercase?: boolean } | null;
      pre_tokenizer?: { type?: string } | null;
      added_tokens?: { content: string }[];
      model?: {
        type?: string;
        vocab?: Record<string, number>;
        unk_token?: string;
        continuing_subword_prefix?: string;
        max_input_chars_per_word?: number;
      };
    };
    const model = json.model;
    const bert =
      json.normalizer?.type === 'BertNormalizer' &&
      json.normalizer.lowercase === true &&
      json.pre_tokenizer?.type === 'BertPreTokenizer' &&
      model?.type === 'WordPiece' &&
      model.vocab &&
      model.unk_token !== undefined &&
      model.vocab[model.unk_token] !== undefined &&
      // an added token that is a plain word would be split out before WordPiece runs
      (json.added_tokens ?? []).every((token) => !/^[A-Za-z0-9]+$/.test(token.content));
    if (!bert) return null;
    return new AsciiWordPiece(
      model.vocab!,
      model.continuing_subword_prefix ?? '##',
      model.max_input_chars_per_word ?? 100,
      model.vocab![model.unk_token!]!,
    );
  }

  /** Ids of an ASCII word or punctuation mark (not checked here). */
  encode(word: string): number[] {
    if (word.length > this.maxCharacters) return [this.unknownId];
    const ids: number[] = [];
    for (let start = 0; start < word.length;) {
      const piece = (start > 0 ? this.continuations : this.starts).longestFrom(word, start);
      if (!piece) return [this.unknownId];
      ids.push(piece.id);
      start = piece.end;
    }
    return ids;
  }
}

export class StaticModel implements Embedder {
  readonly kind = 'static' as const;
  readonly dimensions: number;
  readonly id: string;
  private readonly pieces = new PieceCache(WORD_CACHE_LIMIT);
  /** False while texts asked for once are embedded: their words are not cached. */
  private caching = true;
  private readonly unknownId: number | undefined;
  private readonly asciiWords: AsciiWordPiece | null;
  /** The token ids of the text being embedded (see fillTokenIds), `idCount` of them. */
  private readonly ids = new Int32Array(MAX_TOKENS);
  private idCount = 0;

  private constructor(
    private readonly payload: StaticModelPayload,
    private readonly tokenizer: WordPieceTokenizer,
    tokenizerJson: unknown,
  ) {
    this.id = payload.id;
    this.dimensions = payload.dimensions;
    this.unknownId = tokenizer.token_to_id('[UNK]');
    this.asciiWords = AsciiWordPiece.from(tokenizerJson);
  }

  static async loadPayload(directory: string, id: string): Promise<StaticModelPayload> {
    const [configText, tokenizerJson, tensorBytes, tokenizerConfigText] = await Promise.all([
      fs.readFile(path.join(directory, 'config.json'), 'utf8'),
      fs.readFile(path.join(directory, 'tokenizer.json'), 'utf8'),
      fs.readFile(path.join(directory, 'model.safetensors')),
      fs.readFile(path.join(directory, 'tokenizer_config.json'), 'utf8').catch(() => '{}'),
    ]);
    const config = Config.parse(JSON.parse(configText));
    const tensors = readSafetensors(tensorBytes);
    const embeddings = tensors.get('embeddings') ?? tensors.get('embedding.weight');
    if (!embeddings || embeddings.shape.length !== 2)
      throw new Error('model.safetensors has no 2-D "embeddings" tensor');
    const dimensions = embeddings.shape[1]!;
    return {
      id,
      tokenizerJson,
      tokenizerConfig: JSON.parse(tokenizerConfigText) as Record<string, unknown>,
      table: shared(embeddings.data),
      dimensions,
      normalize: config.normalize ?? false,
      weights: tensors.get('weights')?.data ?? null,
      mapping: tensors.get('mapping')?.data ?? null,
    };
  }

  static async fromPayload(payload: StaticModelPayload): Promise<StaticModel> {
    const { Tokenizer } = await import('@huggingface/tokenizers');
    const json: unknown = JSON.parse(payload.tokenizerJson);
    return new StaticModel(
      payload,
      new Tokenizer(json as object, payload.tokenizerConfig) as unknown as WordPieceTokenizer,
      json,
    );
  }

  static async load(directory: string, id: string): Promise<StaticModel> {
    return StaticModel.fromPayload(await StaticModel.loadPayload(directory, id));
  }

  toPayload(): StaticModelPayload {
    return this.payload;
  }

  async embed(texts: readonly string[], options: EmbedOptions = {}): Promise<Float32Array[]> {
    if (!options.once) return texts.map((text) => this.embedOne(text));
    this.caching = false;
    try {
      return texts.map((text) => this.embedOne(text));
    } finally {
      this.caching = true;
    }
  }

  embedOne(text: string): Float32Array {
    const { dimensions, normalize } = this.payload;
    const vector = new Float32Array(dimensions);
    const count = this.fillTokenIds(text);
    if (!count) return vector;
    sumRows(this.payload, this.ids, count, vector);
    for (let d = 0; d < dimensions; d++) vector[d]! /= count;
    return normalize ? l2Normalize(vector) : vector;
  }

  /**
   * Token ids of `text`, as the tokenizer gives them for the whole text. BERT-style tokenizers
   * normalise and split per character class, so encoding whitespace- and punctuation-delimited
   * pieces separately yields the same ids; caching pieces makes code (which repeats its words) fast.
   */
  tokenIds(text: string): number[] {
    return Array.from(this.ids.subarray(0, this.fillTokenIds(text)));
  }

  /**
   * Writes the token ids of `text` (see tokenIds) to the start of `ids` and returns how many.
   * One buffer for every text: an array of ids per chunk embedded was about a tenth of what a
   * first index of 10k files left the collector.
   */
  private fillTokenIds(text: string): number {
    this.idCount = 0;
    const end = Math.min(text.length, MAX_TOKENS * CHARACTERS_PER_TOKEN_BOUND);
    let start = -1;
    for (let i = 0; i <= end && this.idCount < MAX_TOKENS; i++) {
      const kind = i === end ? SPACE : charClass(text.charCodeAt(i));
      if (kind === WORD) {
        if (start < 0) start = i;
        continue;
      }
      if (start >= 0) {
        this.appendPiece(text, start, i);
        start = -1;
      }
      if (kind === PUNCT) this.appendPiece(text, i, i + 1);
    }
    return this.idCount;
  }

  /** Appends the ids of `text[start, end)` to `ids`, none past MAX_TOKENS. */
  private appendPiece(text: string, start: number, end: number): void {
    const hash = fnv1a(text, start, end);
    const ids =
      this.pieces.find(text, start, end, hash) ?? this.encodePiece(text.slice(start, end), hash);
    for (const id of ids)
      if (id !== this.unknownId && this.idCount < MAX_TOKENS) this.ids[this.idCount++] = id;
  }

  /** The ids of a piece met for the first time, kept unless the text is embedded once. */
  private encodePiece(piece: string, hash: number): readonly number[] {
    const ids =
      this.asciiWords && isAsciiWord(piece)
        ? this.asciiWords.encode(piece)
        : this.tokenizer.encode(piece, { add_special_tokens: false }).ids;
    // a piece cut from a chunk's text may be a view on the whole text: kept, it would keep the
    // text for as long as the cache holds the piece
    if (this.caching) this.pieces.keep(detached(piece), hash, ids);
    return ids;
  }

  /** Ids straight from the tokenizer, for checking that the cache changes nothing. */
  referenceTokenIds(text: string): number[] {
    return this.tokenizer
      .encode(text, { add_special_tokens: false })
      .ids.filter((id) => id !== this.unknownId)
      .slice(0, MAX_TOKENS);
  }

  dispose(): void {
    this.pieces.clear();
  }
}

/** Dimensions summed together (see sumRows): eight sums fit in registers. */
const BLOCK = 8;

/**
 * Adds the (weighted) rows of the first `count` of `ids` into `into` (zeros): for each
 * dimension, row after row in the order of `ids`, rounded to 32 bits after each addition, as
 * `into[d] += row[d] × weight` taken row by row rounds. The dimensions are taken eight at a time
 * with their sums in locals, each row read once per block: the sums stay out of memory, about
 * twice as fast as a row at a time, and the same numbers.
 */
function sumRows(
  payload: StaticModelPayload,
  ids: Int32Array,
  count: number,
  into: Float32Array,
): void {
  const { table, dimensions, weights, mapping } = payload;
  const round = Math.fround;
  const whole = dimensions - (dimensions % BLOCK);
  for (let d = 0; d < whole; d += BLOCK) {
    let s0 = 0,
      s1 = 0,
      s2 = 0,
      s3 = 0,
      s4 = 0,
      s5 = 0,
      s6 = 0,
      s7 = 0;
    for (let i = 0; i < count; i++) {
      const id = ids[i]!;
      const at = (mapping ? mapping[id]! : id) * dimensions + d;
      const weight = weights ? weights[id]! : 1;
      s0 = round(s0 + table[at]! * weight);
      s1 = round(s1 + table[at + 1]! * weight);
      s2 = round(s2 + table[at + 2]! * weight);
      s3 = round(s3 + table[at + 3]! * weight);
      s4 = round(s4 + table[at + 4]! * weight);
      s5 = round(s5 + table[at + 5]! * weight);
      s6 = round(s6 + table[at + 6]! * weight);
      s7 = round(s7 + table[at + 7]! * weight);
    }
    into[d] = s0;
    into[d + 1] = s1;
    into[d + 2] = s2;
    into[d + 3] = s3;
    into[d + 4] = s4;
    into[d + 5] = s5;
    into[d + 6] = s6;
    into[d + 7] = s7;
  }
  for (let i = 0; i < count; i++) {
    const id = ids[i]!;
    const at = (mapping ? mapping[id]! : id) * dimensions;
    const weight = weights ? weights[id]! : 1;
    for (let d = whole; d < dimensions; d++) into[d]! += table[at + d]! * weight;
  }
}

/** A piece of the scanner made of ASCII characters only: letters and digits (see charClass). */
function isAsciiWord(piece: string): boolean {
  for (let i = 0; i < piece.length; i++) if (piece.charCodeAt(i) >= 128) return false;
  return true;
}

/** Copies a table into shared memory so worker threads read it without their own copy. */
function shared(data: Float32Array): Float32Array {
  const table = new Float32Array(new SharedArrayBuffer(data.byteLength));
  table.set(data);
  return table;
}
