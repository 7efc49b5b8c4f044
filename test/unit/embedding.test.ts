import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { cosine, l2Normalize, type Embedder } from '../../src/engine/embed/embedder';
import { loadEmbedder } from '../../src/engine/embed/load';
import { StaticModel } from '../../src/engine/embed/static-model';
import { unwrap } from '../../src/engine/util/result';
import { heapUsedAfterCollecting } from '../helpers/heap';
import { writeTinyBert } from '../helpers/tiny-bert';
import { openEngine, POTION_MODEL, Scratch } from '../helpers/workspace';

const QUERY = 'open a database connection';
const RELATED = 'connect to sqlite';
const UNRELATED = 'parse command line flags';

async function similarities(embedder: Embedder): Promise<{ related: number; unrelated: number }> {
  const [query, related, unrelated] = await embedder.embed([QUERY, RELATED, UNRELATED]);
  return { related: cosine(query!, related!), unrelated: cosine(query!, unrelated!) };
}

describe('embeddings', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  describe('Model2Vec static model (potion-base-2M)', () => {
    let model: StaticModel;
    before(async () => {
      const loaded = unwrap(
        await loadEmbedder(
          { kind: 'directory', path: POTION_MODEL },
          { cacheRoot: scratch.folder() },
        ),
      );
      assert.ok(loaded instanceof StaticModel);
      model = loaded;
    });

    it('loads the real model and ranks a related sentence above an unrelated one', async () => {
      assert.equal(model.dimensions, 64);
      assert.equal(model.id, 'potion-base-2M');
      const { related, unrelated } = await similarities(model);
      assert.ok(related > unrelated, `${related} > ${unrelated}`);
      assert.ok(Math.abs(related - 0.62) < 0.01, `related ${related}`);
      assert.ok(Math.abs(unrelated + 0.132) < 0.01, `unrelated ${unrelated}`);
      const [vector] = await model.embed([QUERY]);
      assert.ok(Math.abs(Math.hypot(...vector!) - 1) < 1e-5, 'vectors are L2-normalised');
    });

    it('tokenizes ASCII words and mixed texts exactly as the tokenizer does', () => {
      const word = fc.stringMatching(/^[A-Za-z0-9]{1,130}$/);
      fc.assert(
        fc.property(word, (text) => {
          assert.deepEqual(model.tokenIds(text), model.referenceTokenIds(text));
        }),
        { numRuns: 2000 },
      );
      // words made of vocabulary entries, in any case, so that long entries and the choice
      // between an entry and its longer extensions are met, not only the short pieces random
      // letters fall into
      const vocabulary = Object.keys(
        (
          JSON.parse(readFileSync(path.join(POTION_MODEL, 'tokenizer.json'), 'utf8')) as {
            model: { vocab: Record<string, number> };
          }
        ).model.vocab,
      )
        .map((entry) => entry.replace(/^##/, ''))
        .filter((entry) => /^[a-z0-9]+$/.test(entry));
      const entryWord = fc
        .array(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 6 })
        .chain((entries) =>
          fc
            .array(fc.boolean(), {
              minLength: entries.join('').length,
              maxLength: entries.join('').length,
            })
            .map((upper) =>
              [...entries.join('')].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''),
            ),
        );
      fc.assert(
        fc.property(entryWord, (text) => {
          assert.deepEqual(model.tokenIds(text), model.referenceTokenIds(text));
        }),
        { numRuns: 3000 },
      );
      const piece = fc.oneof(
        word,
        fc.constantFrom(' ', '_', '.', '(', '\n', 'é', '日本', '\u00a0', '##', '[', ']'),
        fc.string({ maxLength: 8 }),
      );
      fc.assert(
        // a special token written out ("[CLS]") is one id to the whole-text tokenizer and three
        // pieces to the scanner, with or without the ASCII path: such texts are left out
        fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
          const text = pieces.join('');
          fc.pre(!/\[(PAD|UNK|CLS|SEP|MASK)\]/.test(text));
          assert.deepEqual(model.tokenIds(text), model.referenceTokenIds(text));
        }),
        { numRuns: 1000 },
      );
    });

    it('sums token rows as a plain row-by-row loop does, to the bit, whatever the dimensions, weights and row mapping', async () => {
      const payload = model.toPayload();
      const tokens = payload.table.length / payload.dimensions;
      const random = (length: number, scale: number) =>
        Float32Array.from({ length }, () => (Math.random() - 0.5) * scale);
      const variants = [
        payload,
        // dimensions that are not a multiple of the eight summed together, below and above it
        ...[3, 12].map((dimensions) => ({
          ...payload,
          dimensions,
          table: random(64 * dimensions, 2),
          weights: random(tokens, 3),
          mapping: Float32Array.from({ length: tokens }, () => Math.floor(Math.random() * 64)),
        })),
      ];
      const text = fc.array(fc.constantFrom('config', 'Reader', 'x', '_', 'parse', '(', 'é', ' '), {
        maxLength: 40,
      });
      for (const variant of variants) {
        const embedder = await StaticModel.fromPayload(variant);
        fc.assert(
          fc.property(text, (pieces) => {
            const words = pieces.join('');
            const ids = embedder.tokenIds(words);
            const expected = new Float32Array(variant.dimensions);
            for (const id of ids) {
              const row = variant.mapping ? variant.mapping[id]! : id;
              const weight = variant.weights ? variant.weights[id]! : 1;
              for (let d = 0; d < variant.dimensions; d++)
                expected[d]! += variant.table[row * variant.dimensions + d]! * weight;
            }
            if (ids.length) for (let d = 0; d < variant.dimensions; d++) expected[d]! /= ids.length;
            assert.deepEqual(
              embedder.embedOne(words),
              ids.length && variant.normalize ? l2Normalize(expected) : expected,
            );
          }),
          { numRuns: 300 },
        );
      }
    });

    it('embeds texts asked for once (kept out of the word cache) exactly as any other', async () => {
      const word = fc.stringMatching(/^[A-Za-z][a-z0-9_]{0,20}$/);
      await fc.assert(
        fc.asyncProperty(fc.array(word, { minLength: 1, maxLength: 20 }), async (words) => {
          const once = await model.embed(words, { once: true });
          assert.deepEqual(await model.embed(words), once);
          assert.deepEqual(await model.embed(words, { once: true }), once);
        }),
        { numRuns: 200 },
      );
    });

    it('keeps the words it caches, not the texts they were cut from', () => {
      // texts made at run time, each word long (V8 keeps a long piece cut from a text as a view
      // on the text) and new to the cache: 200 texts of about 270 KB are 54 MB if a cached word
      // holds its text, while the words themselves (about 70 a text, up to the 512-token bound)
      // take about 4 MB
      const text = (at: number) =>
        Array.from({ length: 10_000 }, (_, word) => `configurationsetting${at}x${word}`).join(' ');
      const before = heapUsedAfterCollecting();
      for (let at = 0; at < 200; at++) model.embedOne(text(at));
      const grown = heapUsedAfterCollecting() - before;
      assert.ok(grown < 20_000_000, `the word cache holds ${grown} bytes`);
    });

    it('tokenizes exactly as the tokenizer does on whole texts, only faster', () => {
      const code = readFileSync(
        path.resolve(__dirname, '..', 'fixtures', 'shop-ts', 'src', 'internal', 'Channel.ts'),
        'utf8',
      );
      for (const text of [
        code,
        'naïve café — 日本語 tokens\u00a0and\ttabs',
        'x'.repeat(5000),
        '',
      ]) {
        assert.deepEqual(model.tokenIds(text), model.referenceTokenIds(text));
      }
      assert.equal(
        model.tokenIds('word '.repeat(2000)).length,
        512,
        'at most 512 tokens, as Model2Vec',
      );
    });
  });

  describe('download from a model hub', () => {
    let server: Server;
    let hubUrl: string;
    const requests: string[] = [];
    before(async () => {
      server = createServer((request, response) => {
        requests.push(request.url!);
        const match = /^\/minishlab\/potion-base-2M\/resolve\/main\/([\w.]+)$/.exec(request.url!);
        try {
          if (!match) throw new Error('not found');
          response.end(readFileSync(path.join(POTION_MODEL, match[1]!)));
        } catch {
          response.statusCode = 404;
          response.end('Entry not found');
        }
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      hubUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => server.close());

    it('downloads a model into the store on first use, then reuses it', async () => {
      const cacheRoot = scratch.folder();
      const first = unwrap(
        await loadEmbedder(
          { kind: 'hub', repo: 'minishlab/potion-base-2M' },
          { cacheRoot, hubUrl },
        ),
      );
      assert.equal(first!.id, 'minishlab/potion-base-2M');
      assert.ok((await similarities(first!)).related > 0.6);
      const served = requests.length;
      assert.ok(served >= 3);
      unwrap(
        await loadEmbedder(
          { kind: 'hub', repo: 'minishlab/potion-base-2M' },
          { cacheRoot, hubUrl },
        ),
      );
      assert.equal(requests.length, served, 'the cached copy is used');
    });

    it('explains an unreachable hub, and without a shipped model the index is lexical-only', async () => {
      const closed = `http://127.0.0.1:1`;
      const failed = await loadEmbedder(
        { kind: 'hub', repo: 'minishlab/potion-code-16M' },
        { cacheRoot: scratch.folder(), hubUrl: closed },
      );
      assert.equal(failed.ok, false);
      if (!failed.ok) {
        assert.equal(failed.error.code, 'model_unavailable');
        assert.match(
          failed.error.message,
          /^Could not download the embedding model minishlab\/potion-code-16M from http:\/\/127\.0\.0\.1:1: /,
        );
      }
      const engine = await openEngine(scratch, scratch.fixture('shop-js'), {
        model: { kind: 'hub', repo: 'minishlab/potion-code-16M' },
        hubUrl: closed,
        offlineFallback: null,
      });
      try {
        assert.equal(engine.embedding.available, false);
        assert.match(engine.embedding.reason!, /^Lexical search only: Could not download/);
        const summary = unwrap(await engine.index());
        assert.ok(summary.chunks.function > 0, 'the index is still built');
        assert.equal(engine.stats().embedding.available, false);
      } finally {
        engine.dispose();
      }
    });

    it('explains a model folder it cannot use', async () => {
      const missing = await loadEmbedder(
        { kind: 'directory', path: path.join(scratch.folder(), 'nope') },
        { cacheRoot: scratch.folder() },
      );
      assert.ok(!missing.ok && /does not exist/.test(missing.error.message));
      const empty = await loadEmbedder(
        { kind: 'directory', path: scratch.folder() },
        { cacheRoot: scratch.folder() },
      );
      assert.ok(
        !empty.ok &&
          /neither model\.safetensors \(Model2Vec\) nor onnx\/model\.onnx/.test(
            empty.error.message,
          ),
      );
    });
  });

  describe('transformer model through transformers.js', () => {
    let directory: string;
    before(() => {
      directory = scratch.folder('oracle-tiny-bert-');
      writeTinyBert(directory);
    });

    it('loads a BERT-shaped ONNX model and embeds with mean pooling', async () => {
      const model = unwrap(
        await loadEmbedder({ kind: 'directory', path: directory }, { cacheRoot: scratch.folder() }),
      )!;
      try {
        assert.equal(model.kind, 'transformer');
        assert.equal(model.dimensions, 8);
        const { related, unrelated } = await similarities(model);
        assert.ok(related > 0.8 && unrelated < 0.5, `related ${related}, unrelated ${unrelated}`);
        const [again] = await model.embed([QUERY]);
        const [first] = await model.embed([QUERY]);
        assert.deepEqual(Array.from(again!), Array.from(first!), 'deterministic');
      } finally {
        model.dispose();
      }
    });

    it('indexes a workspace with it, vectors written on the engine thread', async () => {
      const engine = await openEngine(scratch, scratch.fixture('shop-py'), {
        model: { kind: 'directory', path: directory },
      });
      try {
        unwrap(await engine.index());
        assert.equal(engine.stats().embedding.dimensions, 8);
        const [query] = await engine.embedder!.embed(['open the sqlite database connection']);
        const nearest = await engine.store.tables.nearest(query!, 5, ['function']);
        assert.equal(nearest.length, 5);
      } finally {
        engine.dispose();
      }
    });
  });
});
