import { strict as assert } from 'node:assert';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import type { Embedder } from '../../../src/engine/embed/embedder';
import { inflectionStems, NearestWords } from '../../../src/engine/search/expansion';
import { LexicalIndex } from '../../../src/engine/store/lexical';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { Scratch } from '../../helpers/workspace';

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

/** A model that points each word its own way (from a hash of it), in 8 dimensions. */
function hashingEmbedder(id: string, asked: string[]): Embedder {
  return {
    id,
    dimensions: 8,
    kind: 'static',
    embed: async (texts) => {
      asked.push(...texts);
      return texts.map((text) => {
        let state = [...text].reduce(
          (hash, c) => Math.imul(hash ^ c.charCodeAt(0), 16777619),
          2166136261,
        );
        return Float32Array.from({ length: 8 }, () => {
          state = Math.imul(state ^ (state >>> 15), 2246822507);
          return ((state >>> 0) / 2 ** 32) * 2 - 1;
        });
      });
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
    // a question embeds its words, and again only the index words that may be nearest them (its
    // own word too: the rows kept for a word rank the question's words as well)
    assert.deepEqual(asked[0], ['password']);
    assert.ok(asked.flat().length <= 4, `a question embedded ${asked.flat().join(' ')}`);
    lexical.add([document('hash', 'hashing')]);
    asked.length = 0;
    await nearest.catchUp();
    assert.deepEqual(asked, [['hashing']]);
    assert.deepEqual(await nearest.nearest(['password'], 1), ['hashing']);
    lexical.removePaths(['hash.py']);
    assert.deepEqual(await nearest.nearest(['password'], 1), ['template']);
  });

  it('answers a question asked during a take-in with every word taken in, as after it', async () => {
    const lexical = new LexicalIndex();
    lexical.add([
      document('many', Array.from({ length: 20_000 }, (_, i) => letterWord(i)).join(' ')),
      document('login', 'password hashing'),
    ]);
    const nearest = new NearestWords(lexical, embedder([]));
    // the take-in gives way between its batches: the question starts while it runs
    const takingIn = nearest.catchUp();
    assert.ok(nearest.busy);
    const during = await nearest.nearest(['password'], 1);
    await takingIn;
    assert.ok(!nearest.busy);
    assert.deepEqual(during, ['hashing']);
    assert.deepEqual(await nearest.nearest(['password'], 1), during);
  });

  it('takes in again, at the next call, the words of a take-in that failed', async () => {
    const lexical = new LexicalIndex();
    lexical.add([document('login', 'password hashing')]);
    let failures = 1;
    const asked: string[][] = [];
    const flaky = embedder(asked);
    const nearest = new NearestWords(lexical, {
      ...flaky,
      embed: async (texts, options) => {
        if (failures-- > 0) throw new Error('the model went away');
        return flaky.embed(texts, options);
      },
    });
    await assert.rejects(nearest.catchUp(), /the model went away/);
    assert.deepEqual(await nearest.nearest(['password'], 1), ['hashing']);
    assert.deepEqual(asked[0]!.sort(), ['hashing', 'password']);
  });

  describe('saved beside the index', () => {
    const scratch = new Scratch();
    after(() => scratch.cleanup());
    // words of five letters: every one is a word the nearest words take in
    const words = Array.from({ length: 6000 }, (_, i) => letterWord(20_000 + i));
    const indexOf = (held: readonly string[]) => {
      const lexical = new LexicalIndex();
      lexical.add([document('many', held.join(' '))]);
      return lexical;
    };
    const questions = ['wbdqa', 'wbmaz', 'password', 'wbhhh'];
    const answers = async (nearest: NearestWords) => {
      const out: string[][] = [];
      for (const question of questions) out.push(await nearest.nearest([question], 5));
      return out;
    };

    it('are taken back by the next opening, which embeds only the words not saved, finding the same words', async () => {
      const file = path.join(scratch.folder(), 'nearest-words.bin');
      const saved = { file, writable: () => true };
      const first = new NearestWords(
        indexOf(words.slice(0, 5000)),
        hashingEmbedder('m', []),
        saved,
      );
      const saving = await captureLogs(() => first.catchUp());
      assert.equal(eventsNamed(saving.events, 'nearest_words_saved')[0]?.words, 5000);
      assert.ok(existsSync(file));

      // opened again with a thousand words the saved rows lack, and a hundred fewer
      const held = words.slice(100);
      const asked: string[] = [];
      const reopened = new NearestWords(indexOf(held), hashingEmbedder('m', asked), saved);
      await reopened.catchUp();
      assert.deepEqual(asked.sort(), words.slice(5000).sort());
      const fresh = new NearestWords(indexOf(held), hashingEmbedder('m', []));
      assert.deepEqual(await answers(reopened), await answers(fresh));

      // saved again from the first five thousand words, then opened with them where they were
      // and the thousand after them
      const again = {
        file: path.join(scratch.folder(), 'nearest-words.bin'),
        writable: () => true,
      };
      await new NearestWords(
        indexOf(words.slice(0, 5000)),
        hashingEmbedder('m', []),
        again,
      ).catchUp();
      asked.length = 0;
      const grown = new NearestWords(indexOf(words), hashingEmbedder('m', asked), again);
      await grown.catchUp();
      assert.deepEqual(asked.sort(), words.slice(5000).sort());
      assert.deepEqual(
        await answers(grown),
        await answers(new NearestWords(indexOf(words), hashingEmbedder('m', []))),
      );
    });

    it('are taken back whatever order the next opening meets the words in', async () => {
      const file = path.join(scratch.folder(), 'nearest-words.bin');
      const saved = { file, writable: () => true };
      await new NearestWords(
        indexOf(words.slice(0, 3000)),
        hashingEmbedder('m', []),
        saved,
      ).catchUp();
      // runs of saved rows out of order, each broken by words the rows lack
      const reordered = [0, 2, 1].flatMap((part) => [
        ...words.slice(part * 1000, part * 1000 + 500).reverse(),
        ...words.slice(3000 + part * 10, 3000 + part * 10 + 10),
        ...words.slice(part * 1000 + 500, part * 1000 + 1000),
      ]);
      const asked: string[] = [];
      const reopened = new NearestWords(indexOf(reordered), hashingEmbedder('m', asked), saved);
      await reopened.catchUp();
      assert.deepEqual(asked.sort(), words.slice(3000, 3030).sort());
      assert.deepEqual(
        await answers(reopened),
        await answers(new NearestWords(indexOf(reordered), hashingEmbedder('m', []))),
      );
    });

    it("are not taken from another model's rows or a damaged file, nor written by a reader", async () => {
      const folder = scratch.folder();
      const file = path.join(folder, 'nearest-words.bin');
      const lexical = indexOf(words.slice(0, 300));
      await new NearestWords(lexical, hashingEmbedder('m', []), {
        file,
        writable: () => true,
      }).catchUp();
      const asked: string[] = [];
      const other = new NearestWords(lexical, hashingEmbedder('other', asked), {
        file,
        writable: () => false,
      });
      const { events } = await captureLogs(() => other.catchUp());
      assert.equal(asked.length, 300, "another model's rows are not taken");
      assert.equal(eventsNamed(events, 'nearest_words_saved').length, 0, 'a reader writes none');

      writeFileSync(file, 'not the rows');
      asked.length = 0;
      const damaged = new NearestWords(lexical, hashingEmbedder('m', asked), {
        file,
        writable: () => false,
      });
      const read = await captureLogs(() => damaged.catchUp());
      assert.equal(eventsNamed(read.events, 'nearest_words_not_read')[0]?.code, 'index_corrupt');
      assert.equal(asked.length, 300);
      assert.deepEqual(
        await answers(damaged),
        await answers(new NearestWords(lexical, hashingEmbedder('m', []))),
      );
      const reader = path.join(folder, 'reader.bin');
      await new NearestWords(lexical, hashingEmbedder('m', []), {
        file: reader,
        writable: () => false,
      }).catchUp();
      assert.ok(!existsSync(reader));
    });
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

  it('keeps the nearest rows of each question word across questions until the vocabulary changes', async () => {
    const lexical = new LexicalIndex();
    lexical.add([
      document('follow', 'redirect allowredirects location'),
      document('page', 'render template'),
    ]);
    const asked: string[][] = [];
    const nearest = new NearestWords(lexical, embedder(asked));
    assert.deepEqual(await nearest.nearest(['redirect', 'render'], 1), [
      'allowredirects',
      'template',
    ]);
    asked.length = 0;
    assert.deepEqual(await nearest.nearest(['render', 'location'], 1), [
      'template',
      'allowredirects',
    ]);
    assert.deepEqual(asked, [['location']], 'only the word not asked before is embedded');
    // a save that adds a word nearer `render` than `template`: the kept rows are dropped
    lexical.add([document('view', 'rendering')]);
    DIRECTIONS.rendering = [0, 1, 0.01];
    try {
      asked.length = 0;
      assert.deepEqual(await nearest.nearest(['render'], 1), ['rendering']);
      assert.deepEqual(asked[1], ['render']);
    } finally {
      delete DIRECTIONS.rendering;
    }
  });

  it('finds as many words for a question naming most of the kept nearest words of one of its words', async () => {
    // `start` points along x; eleven words tilt from it towards y, four further ones towards z and
    // four more towards y beyond the eleven: `start`'s nearest after the eleven tilt towards z,
    // and only it finds them
    const vectors = new Map<string, number[]>([['wstart', [1, 0, 0]]]);
    const towardsY = Array.from({ length: 11 }, (_, i) => `wtilty${letterWord(i + 1)}`);
    const towardsZ = Array.from({ length: 4 }, (_, i) => `wtiltz${letterWord(i + 1)}`);
    const beyond = Array.from({ length: 4 }, (_, i) => `wbeyond${letterWord(i + 1)}`);
    towardsY.forEach((word, i) => vectors.set(word, [1, 0.01 * (i + 1), 0]));
    towardsZ.forEach((word, i) => vectors.set(word, [1, 0, 0.12 + 0.01 * (i + 1)]));
    beyond.forEach((word, i) => vectors.set(word, [1, 0.15 + 0.01 * (i + 1), 0]));
    const direction = (word: string) => Float32Array.from(vectors.get(word) ?? [0, 0, 1]);
    const tilted: Embedder = {
      id: 'tilted',
      dimensions: 3,
      kind: 'static',
      embed: async (texts) => texts.map(direction),
      dispose: () => undefined,
    };
    const lexical = new LexicalIndex();
    lexical.add([document('all', [...vectors.keys()].join(' '))]);
    const nearest = new NearestWords(lexical, tilted);
    assert.deepEqual(await nearest.nearest(['wstart'], 4), towardsY.slice(0, 4));
    const question = ['wstart', ...towardsY];
    const found = await nearest.nearest(question, 4);
    assert.deepEqual(found, exactNearest(lexical, direction, question, 4));
    assert.deepEqual(found.slice(0, 4), towardsZ);
  });

  it('finds what an exact scan of the index words finds, whatever was kept from before', async () => {
    const vocabulary = Array.from({ length: 20 }, (_, i) => letterWord(26 ** 3 + i * 7));
    // few distinct directions of small whole numbers: many exact ties, broken by arrival order
    const direction = (word: string) =>
      Float32Array.from(
        [0, 1, 2].map((d) => ((word.charCodeAt(word.length - 1 - d) * (d + 2)) % 5) - 2),
      );
    const wordEmbedder: Embedder = {
      id: 'letters',
      dimensions: 3,
      kind: 'static',
      embed: async (texts) => texts.map(direction),
      dispose: () => undefined,
    };
    const ask = (count: number) =>
      fc.record({
        ask: fc.uniqueArray(fc.constantFrom(...vocabulary, 'wzzzq'), {
          minLength: 1,
          maxLength: 14,
        }),
        count: fc.constant(count),
      });
    // questions mostly ask as many words as the pipeline does; a question of many index words
    // drops most of a word's kept rows
    const step = fc.oneof(
      { arbitrary: ask(4), weight: 4 },
      { arbitrary: ask(1), weight: 1 },
      {
        arbitrary: fc.record({
          add: fc.uniqueArray(fc.constantFrom(...vocabulary), { minLength: 1, maxLength: 12 }),
        }),
        weight: 2,
      },
      { arbitrary: fc.record({ remove: fc.nat(9) }), weight: 1 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 16 }), async (steps) => {
        const lexical = new LexicalIndex();
        const nearest = new NearestWords(lexical, wordEmbedder);
        let added = 0;
        for (const step of steps) {
          if ('add' in step) lexical.add([document(`f${added++}`, step.add.join(' '))]);
          else if ('remove' in step) lexical.removePaths([`f${step.remove}.py`]);
          else
            assert.deepEqual(
              await nearest.nearest(step.ask, step.count),
              exactNearest(lexical, direction, step.ask, step.count),
            );
        }
      }),
      { numRuns: 200 },
    );
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

/**
 * The nearest index words as a plain float scan finds them: every word in the index but the
 * question's, by unit-vector product, ties to the word the index met first.
 */
function exactNearest(
  lexical: LexicalIndex,
  direction: (word: string) => Float32Array,
  terms: readonly string[],
  count: number,
): string[] {
  const unit = (word: string) => {
    const vector = direction(word);
    const norm = Math.hypot(...vector);
    return vector.map((value) => (norm > 0 ? value / norm : 0));
  };
  const rows = lexical
    .termsSince(0)
    .terms.filter((word) => lexical.hasTerm(word) && !terms.includes(word));
  const found = new Set<string>();
  for (const term of terms) {
    const query = unit(term);
    const product = (word: string) =>
      unit(word).reduce((sum, value, d) => sum + value * query[d]!, 0);
    const ranked = rows
      .map((word, at) => ({ word, at, similarity: product(word) }))
      .sort((a, b) => b.similarity - a.similarity || a.at - b.at);
    for (const { word } of ranked.slice(0, count)) found.add(word);
  }
  return [...found];
}

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
