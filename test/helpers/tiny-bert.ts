import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * Writes a tiny BERT-shaped model folder (config.json, tokenizer.json, tokenizer_config.json,
 * onnx/model.onnx) for testing the transformer embedding path without downloading anything.
 * The ONNX graph has BERT's interface (input_ids, attention_mask, token_type_ids →
 * last_hidden_state): word + token-type embeddings, tanh, masked. Words of one topic share a
 * direction, so similarity behaves like a real model's on the test sentences.
 */
const TOPICS: Record<string, string[]> = {
  database: ['database', 'sqlite', 'connection', 'connect', 'open', 'sql', 'query'],
  cli: ['parse', 'command', 'line', 'flags', 'argument', 'option', 'args'],
  web: ['request', 'response', 'http', 'route', 'server'],
};
const FILLER = ['a', 'to', 'the', 'of', 'and', 'for'];
const SPECIAL = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
const HIDDEN = 8;

export function writeTinyBert(directory: string): void {
  const words = [...SPECIAL, ...FILLER, ...Object.values(TOPICS).flat()];
  const vocab = Object.fromEntries(words.map((word, id) => [word, id]));
  const table = new Float32Array(words.length * HIDDEN);
  words.forEach((word, id) => {
    const topic = Object.keys(TOPICS).findIndex((name) => TOPICS[name]!.includes(word));
    for (let d = 0; d < HIDDEN; d++) {
      const base = topic >= 0 && d === topic ? 1.5 : 0;
      table[id * HIDDEN + d] = base + 0.05 * Math.sin(id * 7 + d * 3);
    }
  });
  const typeTable = new Float32Array(2 * HIDDEN).map((_, i) => 0.01 * (i % HIDDEN));

  mkdirSync(path.join(directory, 'onnx'), { recursive: true });
  writeFileSync(
    path.join(directory, 'onnx', 'model.onnx'),
    bertGraph(words.length, table, typeTable),
  );
  writeFileSync(
    path.join(directory, 'config.json'),
    JSON.stringify({
      model_type: 'bert',
      architectures: ['BertModel'],
      hidden_size: HIDDEN,
      vocab_size: words.length,
      max_position_embeddings: 512,
      type_vocab_size: 2,
    }),
  );
  writeFileSync(
    path.join(directory, 'tokenizer_config.json'),
    JSON.stringify({
      tokenizer_class: 'BertTokenizer',
      do_lower_case: true,
      model_max_length: 512,
      unk_token: '[UNK]',
      cls_token: '[CLS]',
      sep_token: '[SEP]',
      pad_token: '[PAD]',
      mask_token: '[MASK]',
    }),
  );
  writeFileSync(path.join(directory, 'tokenizer.json'), JSON.stringify(tokenizerJson(vocab)));
}

function tokenizerJson(vocab: Record<string, number>): unknown {
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
      ],
      pair: [
        { SpecialToken: { id: '[CLS]', type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } },
        { SpecialToken: { id: '[SEP]', type_id: 1 } },
      ],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [2], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [3], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}

// --- A minimal protobuf writer for the ONNX ModelProto --------------------------------------

const INT64 = 7;
const FLOAT = 1;

function bertGraph(vocabSize: number, table: Float32Array, typeTable: Float32Array): Buffer {
  const graph = concat(
    node(['word_embeddings', 'input_ids'], ['words'], 'Gather'),
    node(['type_embeddings', 'token_type_ids'], ['types'], 'Gather'),
    node(['words', 'types'], ['summed'], 'Add'),
    node(['summed'], ['activated'], 'Tanh'),
    node(['attention_mask'], ['mask_float'], 'Cast', [attributeInt('to', FLOAT)]),
    node(['mask_float', 'unsqueeze_axes'], ['mask_3d'], 'Unsqueeze'),
    node(['activated', 'mask_3d'], ['last_hidden_state'], 'Mul'),
    bytesField(2, Buffer.from('tiny-bert')),
    bytesField(5, tensor('word_embeddings', FLOAT, [vocabSize, HIDDEN], Buffer.from(table.buffer))),
    bytesField(5, tensor('type_embeddings', FLOAT, [2, HIDDEN], Buffer.from(typeTable.buffer))),
    bytesField(
      5,
      tensor('unsqueeze_axes', INT64, [1], Buffer.from(new BigInt64Array([2n]).buffer)),
    ),
    bytesField(11, valueInfo('input_ids', INT64, ['batch', 'sequence'])),
    bytesField(11, valueInfo('attention_mask', INT64, ['batch', 'sequence'])),
    bytesField(11, valueInfo('token_type_ids', INT64, ['batch', 'sequence'])),
    bytesField(12, valueInfo('last_hidden_state', FLOAT, ['batch', 'sequence', HIDDEN])),
  );
  return concat(
    varintField(1, 8),
    bytesField(2, Buffer.from('code-oracle-tests')),
    bytesField(7, graph),
    bytesField(8, concat(bytesField(1, Buffer.from('')), varintField(2, 14))),
  );
}

function node(inputs: string[], outputs: string[], op: string, attributes: Buffer[] = []): Buffer {
  return bytesField(
    1,
    concat(
      ...inputs.map((name) => bytesField(1, Buffer.from(name))),
      ...outputs.map((name) => bytesField(2, Buffer.from(name))),
      bytesField(4, Buffer.from(op)),
      ...attributes.map((attribute) => bytesField(5, attribute)),
    ),
  );
}

function attributeInt(name: string, value: number): Buffer {
  return concat(bytesField(1, Buffer.from(name)), varintField(3, value), varintField(20, 2));
}

function tensor(name: string, dataType: number, dims: number[], raw: Buffer): Buffer {
  return concat(
    ...dims.map((dim) => varintField(1, dim)),
    varintField(2, dataType),
    bytesField(8, Buffer.from(name)),
    bytesField(9, raw),
  );
}

function valueInfo(name: string, elemType: number, dims: (string | number)[]): Buffer {
  const shape = concat(
    ...dims.map((dim) =>
      bytesField(
        1,
        typeof dim === 'number' ? varintField(1, dim) : bytesField(2, Buffer.from(dim)),
      ),
    ),
  );
  const tensorType = concat(varintField(1, elemType), bytesField(2, shape));
  return concat(bytesField(1, Buffer.from(name)), bytesField(2, bytesField(1, tensorType)));
}

function varint(value: number): Buffer {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

function varintField(number: number, value: number): Buffer {
  return concat(varint(number << 3), varint(value));
}

function bytesField(number: number, payload: Buffer): Buffer {
  return concat(varint((number << 3) | 2), varint(payload.length), payload);
}

function concat(...parts: Buffer[]): Buffer {
  return Buffer.concat(parts);
}
