import { strict as assert } from 'node:assert';
import type { Embedder } from '../../../src/engine/embed/embedder';
import { inflectionStems, NearestWords } from '../../../src/engine/search/expansion';
import { LexicalIndex } from '../../../src/engine/store/lexical';

/** Three ideas as directions: words of one idea point the same way, so they are each other's nearest. */
const DIRECTIONS: Record<string, number[]> = {
  redirect: [1, 0, 0],
  allowredirects: [0.9, 0.1, 0],
  location: [0.8, 0.3, 0],
  render: [0, 1, 0],
  template: [0.1, 0.9, 0.05],
  password: [0, 0, 1],
  hashing: [0, 0.1, 0.9],
};

function embedder(asked: string[][]): Embedder {
  return {
    id: 'directions',
    dimensions: 3,
    kind: 'static',
    embed: async (texts) => {
      asked.push([...texts]);
      return texts.map((text) => Float32Array.from(DIRECTIONS[text] ?? [0.3, 0.3, 0.3]));
    },
    dispose: () => undefined,
  };
}

/** A distinct word of letters only, as index words are (a 10k-file index has about 180k of them). */
const letterWord = (i: number) =>
  `w${[...i.toString(26)].map((digit) => String.fromCharCode(97 + parseInt(digit, 26))).join('')}`;

const document = (chunkId: string, words: string) => ({
  chunkId,
  path: `${chunkId}.py`,
  level: 'function' as const,
  terms: new Map(words.split(' ').map((word) => [word, 1])),
  nameTerms: [],
});

describe('expansion from the embedding model: nearest index words', () => {
  it('finds the index words nearest each question word, nearest first, never a given word', async () => {
    const lexical = new LexicalIndex();
    lexical.add([
      document('follow', 'redirect allowredirects location self'),
      document('page', 'render template'),
    ]);
    const nearest = new NearestWords(lexical, embedder([]));
    const found = await nearest.nearest(['redirect'], 2);
    assert.deepEqual(found, ['allowredirects', 'location']);
    assert.ok(!(await nearest.nearest(['redirect'], 5)).includes('self'), 'nor a stop word');
  });

  it('takes in an index of a few hundred thousand words at once', async () => {
    const lexical = new LexicalIndex();
    lexical.add([
      document('many', Array.from({ length: 300_000 }, (_, i) => letterWord(i)).join(' ')),
    ]);
    lexical.add([document('login', 'password hashing')]);
    const nearest = new NearestWords(lexical, embedder([]));
    assert.deepEqual(await nearest.nearest(['password'], 1), ['hashing']);
  });

  it('embeds words as they enter the index, once, and skips words that left it', async () => {
    const lexical = new LexicalIndex();
    lexical.add([document('login', 'password'), document('page', 'render template')]);
    const asked: string[][] = [];
    const nearest = new NearestWords(lexical, embedder(asked));
    await nearest.catchUp();
    assert.deepEqual(asked.flat().sort(), ['password', 'render', 'template']);
    asked.length = 0;
    assert.deepEqual(await nearest.nearest(['password'], 1), ['template']);
    // a question embeds its words, and again only the index words that may be nearest them
    assert.deepEqual(asked[0], ['password']);
    assert.ok(asked.flat().length <= 3, `a question embedded ${asked.flat().join(' ')}`);
    lexical.add([document('hash', 'hashing')]);
    asked.length = 0;
    await nearest.catchUp();
    assert.deepEqual(asked, [['hashing']]);
    assert.deepEqual(await nearest.nearest(['password'], 1), ['hashing']);
    lexical.removePaths(['hash.py']);
    assert.deepEqual(await nearest.nearest(['password'], 1), ['template']);
  });

  it('keeps the candidate words of a static model across questions, finding the same words', async () => {
    for (const kind of ['static', 'transformer'] as const) {
      const lexical = new LexicalIndex();
      lexical.add([
        document('follow', 'redirect allowredirects location'),
        document('page', 'render template'),
        document('login', 'password hashing'),
      ]);
      const asked: string[][] = [];
      const nearest = new NearestWords(lexical, { ...embedder(asked), kind });
      await nearest.catchUp();
      const first = await nearest.nearest(['redirect', 'password'], 2);
      asked.length = 0;
      assert.deepEqual(await nearest.nearest(['redirect', 'password'], 2), first);
      const candidates = asked.slice(1).flat();
      if (kind === 'static') assert.deepEqual(candidates, [], 'no candidate embedded again');
      else assert.ok(candidates.includes('allowredirects'), 'a transformer embeds them again');
    }
  });

  it('takes the vocabulary in batches, each word once, in the order the index met them', async () => {
    const lexical = new LexicalIndex();
    const words = Array.from({ length: 9000 }, (_, i) => letterWord(26 ** 3 + i));
    lexical.add([document('many', words.join(' '))]);
    const asked: string[][] = [];
    const nearest = new NearestWords(lexical, embedder(asked));
    await nearest.catchUp();
    assert.ok(asked.length > 1, 'more than one batch');
    assert.deepEqual(asked.flat(), lexical.termsSince(0).terms);
  });
});

describe('inflection stems', () => {
  it('drops plural, past, gerund and adverb endings, never returning the word itself', () => {
    assert.ok(inflectionStems('skipped').includes('skip'));
    assert.ok(inflectionStems('retries').includes('retry'));
    assert.ok(inflectionStems('caching').includes('cache'));
    assert.ok(inflectionStems('Headers').includes('header'));
    assert.deepEqual(inflectionStems('class'), []);
    assert.ok(!inflectionStems('redirects').includes('redirects'));
  });

  it('keeps only stems holding a vowel: a word ending like a gerund is not always one', () => {
    assert.deepEqual(inflectionStems('string'), []);
    assert.deepEqual(inflectionStems('thing'), []);
    assert.ok(inflectionStems('sorting').includes('sort'));
  });
});
