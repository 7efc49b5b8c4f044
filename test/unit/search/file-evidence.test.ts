import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ChunkLevel } from '../../../src/engine/model';
import {
  closestUnlisted,
  coverageScores,
  definingScores,
  pathScores,
  PathVocabulary,
  pathWords,
  wholeFileScores,
} from '../../../src/engine/search/file-evidence';
import { bm25Idf } from '../../../src/engine/search/bm25';
import { LexicalIndex } from '../../../src/engine/store/lexical';

/** A chunk of `path` at `level` holding `terms` (word → count). */
const chunk = (path: string, id: string, level: ChunkLevel, terms: Record<string, number>) => ({
  chunkId: `${path}::${id}`,
  path,
  level,
  terms: new Map(Object.entries(terms)),
  nameTerms: [],
});

/**
 * `spread.py` names retry in three small functions; `single.py` has one function that names it
 * twice and a long unrelated one; `other.py` never names it. Filler files make the words rare.
 */
function fixture(): LexicalIndex {
  const lexical = new LexicalIndex();
  lexical.add([
    chunk('spread.py', 'file', 'file', { import: 1 }),
    chunk('spread.py', 'a', 'function', { retry: 1, request: 1 }),
    chunk('spread.py', 'b', 'function', { retry: 1, backoff: 1 }),
    chunk('spread.py', 'c', 'function', { retry: 1, request: 1 }),
    chunk('single.py', 'file', 'file', { import: 1 }),
    chunk('single.py', 'a', 'function', { retry: 2, loop: 3 }),
    chunk('single.py', 'b', 'function', { parse: 6, token: 6 }),
    chunk('other.py', 'file', 'file', { import: 1 }),
    chunk('other.py', 'a', 'function', { parse: 2, request: 1 }),
    ...Array.from({ length: 8 }, (_, i) =>
      chunk(`filler${i}.py`, 'a', 'function', { loop: 1, value: 2, request: 1 }),
    ),
    // a folder summary is not part of any file's text
    chunk('.', 'dir', 'directory', { retry: 9, backoff: 9 }),
  ]);
  return lexical;
}

describe('whole-file evidence', () => {
  it('scores a file by the question words all its chunks hold, not its best chunk', () => {
    const scores = wholeFileScores(
      fixture(),
      ['single.py', 'spread.py', 'other.py'],
      ['retry', 'backoff'],
    );
    assert.ok(scores.get('spread.py')! > scores.get('single.py')!, JSON.stringify([...scores]));
    assert.equal(scores.has('other.py'), false, 'a file holding no question word has no score');
  });

  it('counts a related word at its lower weight', () => {
    const lexical = fixture();
    const full = wholeFileScores(lexical, ['spread.py'], ['backoff']).get('spread.py')!;
    const related = wholeFileScores(
      lexical,
      ['spread.py'],
      ['backoff'],
      new Map([['backoff', 0.5]]),
    );
    assert.ok(Math.abs(related.get('spread.py')! - full / 2) < 1e-9);
  });
});

describe('coverage evidence', () => {
  const words = (...list: string[][]) => new Map(list.map((forms) => [forms[0]!, forms]));

  it("gives each file the share of the question's words it holds, each by its rarity", () => {
    const lexical = fixture();
    const scores = coverageScores(
      lexical,
      ['single.py', 'spread.py', 'other.py'],
      words(['retry'], ['backoff']),
    );
    assert.equal(scores.get('spread.py'), 1, 'spread.py holds both words');
    assert.equal(scores.get('other.py'), 0, 'other.py holds neither');
    // single.py repeats retry but lacks the rarer backoff: its share is retry's part of the
    // two rarities (over the 17 file, class and function chunks: retry in 4, backoff in 1)
    const [retry, backoff] = [bm25Idf(17, 4), bm25Idf(17, 1)];
    assert.ok(Math.abs(scores.get('single.py')! - retry / (retry + backoff)) < 1e-9);
    assert.ok(scores.get('single.py')! < 0.5, 'the rarer word weighs more');
  });

  it('counts a word held in any of its forms, in the text or in the path', () => {
    const lexical = new LexicalIndex();
    lexical.add([
      chunk('src/multipart.py', 'a', 'function', { boundary: 1 }),
      chunk('src/formdata.py', 'a', 'function', { parse: 1, boundaries: 1 }),
      chunk('src/other.py', 'a', 'function', { multipart: 1 }),
    ]);
    const scores = coverageScores(
      lexical,
      ['src/multipart.py', 'src/formdata.py'],
      words(['multipart'], ['boundaries', 'boundary']),
    );
    assert.equal(scores.get('src/multipart.py'), 1, 'multipart in its name, a stem in its text');
    assert.ok(scores.get('src/formdata.py')! < 1, 'formdata.py never holds multipart');
  });

  it('counts nothing for a word the index lacks in every form', () => {
    const scores = coverageScores(fixture(), ['spread.py'], words(['retry'], ['zeppelin']));
    assert.equal(scores.get('spread.py'), 1);
  });
});

/** A file's length and term counts as read chunk by chunk through the index's per-chunk view. */
function countsChunkByChunk(lexical: LexicalIndex, path: string, terms: readonly string[]) {
  const documents = lexical
    .documentsAt(path)
    .filter((doc) => ['file', 'class', 'function'].includes(doc.level));
  return {
    length: documents.reduce((sum, doc) => sum + doc.length, 0),
    counts: terms.map((term) => documents.reduce((sum, doc) => sum + doc.termFrequency(term), 0)),
  };
}

describe('whole-file term counts', () => {
  const word = fc.constantFrom('retry', 'parse', 'token', 'loop', 'value', 'request', 'backoff');
  const chunkArbitrary = fc.record({
    file: fc.integer({ min: 0, max: 5 }),
    level: fc.constantFrom<ChunkLevel>('file', 'class', 'function', 'directory'),
    terms: fc.dictionary(word, fc.integer({ min: 1, max: 9 })),
  });

  it('equal the chunk-by-chunk sums on random indexes, after removals and re-adds', () => {
    fc.assert(
      fc.property(
        fc.array(chunkArbitrary, { maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 3 }),
        fc.array(chunkArbitrary, { maxLength: 10 }),
        fc.uniqueArray(fc.oneof(word, fc.constant('absent')), { maxLength: 5 }),
        // some of the files, one maybe twice: a term's postings then reach files not asked about
        fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 8 }),
        (chunks, removed, added, terms, asked) => {
          const lexical = new LexicalIndex();
          const add = (batch: typeof chunks, tag: string) =>
            lexical.add(
              batch.map((entry, i) =>
                chunk(`f${entry.file}.py`, `${tag}${i}`, entry.level, entry.terms),
              ),
            );
          add(chunks, 'a');
          lexical.removePaths(removed.map((file) => `f${file}.py`));
          add(added, 'b');
          for (const paths of [
            Array.from({ length: 7 }, (_, file) => `f${file}.py`),
            asked.map((file) => `f${file}.py`),
          ])
            assert.deepEqual(
              lexical.fileTermCounts(paths, ['file', 'class', 'function'], terms),
              paths.map((path) => countsChunkByChunk(lexical, path, terms)),
            );
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('path evidence', () => {
  const paths = [
    'src/http/retry.py',
    'src/http/client.py',
    'src/http/session_pool.py',
    'src/cli/main.py',
  ];

  it('splits folders and the file name like identifiers, without the extension', () => {
    assert.deepEqual(
      [...pathWords('src/httpClient/session_pool.py')].sort(),
      ['client', 'http', 'httpclient', 'pool', 'session', 'sessionpool', 'src'].sort(),
    );
  });

  it('weights a question word in a path by its rarity among the paths', () => {
    const vocabulary = new PathVocabulary(paths);
    const scores = pathScores(vocabulary, paths, ['retry', 'http', 'src']);
    const [retry, client, main] = [
      'src/http/retry.py',
      'src/http/client.py',
      'src/cli/main.py',
    ].map((path) => scores.get(path)!);
    assert.ok(retry > client && client > main, JSON.stringify([...scores]));
    assert.ok(main < retry / 10, 'src is in every path: it says next to nothing');
  });

  it('matches a word that begins another at least half as long (plurals, short forms)', () => {
    const held = ['src/clients.py', 'src/validators/base.py', 'src/settings.py', 'src/app.py'];
    const vocabulary = new PathVocabulary(held);
    const scores = pathScores(vocabulary, held, ['client', 'valid', 'set']);
    assert.ok(scores.get('src/clients.py')! > 0);
    assert.ok(scores.get('src/validators/base.py')! > 0);
    assert.equal(scores.has('src/settings.py'), false, 'set is less than half of settings');
    assert.equal(scores.has('src/app.py'), false);
  });

  it('scores paths as matching each word against a list of the path words did', () => {
    // the form before the matches were taken without lists: the reference
    const listed = (
      vocabulary: PathVocabulary,
      candidates: readonly string[],
      terms: readonly string[],
      weights: ReadonlyMap<string, number>,
    ) => {
      const scores = new Map<string, number>();
      for (const path of candidates) {
        const words = [...pathWords(path)];
        let score = 0;
        for (const term of new Set(terms)) {
          const matched = words.includes(term)
            ? [term]
            : words.filter(
                (word) =>
                  Math.min(word.length, term.length) > 1 &&
                  Math.min(word.length, term.length) * 2 >= Math.max(word.length, term.length) &&
                  (word.startsWith(term) || term.startsWith(word)),
              );
          if (matched.length)
            score +=
              (weights.get(term) ?? 1) * Math.max(...matched.map((word) => vocabulary.idf(word)));
        }
        if (score > 0) scores.set(path, score);
      }
      return scores;
    };
    const word = fc.constantFrom(
      'a',
      'ab',
      'http',
      'https',
      'client',
      'clients',
      'cli',
      'set',
      'settings',
      'valid',
      'validators',
      'src',
    );
    const path = fc
      .array(word, { minLength: 1, maxLength: 4 })
      .map((words) => `${words.join('/')}.py`);
    fc.assert(
      fc.property(
        fc.array(path, { minLength: 1, maxLength: 12 }),
        fc.array(word, { maxLength: 6 }),
        fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { minLength: 12, maxLength: 12 }),
        (held, terms, drawn) => {
          const vocabulary = new PathVocabulary(held);
          const weights = new Map(terms.slice(0, 3).map((term, i) => [term, drawn[i]!]));
          assert.deepEqual(
            [...pathScores(vocabulary, held, terms, weights)],
            [...listed(vocabulary, held, terms, weights)],
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it('keeps the words of the paths it scored, the same as splitting them again, when full too', () => {
    const vocabulary = new PathVocabulary(paths);
    const many = Array.from({ length: 5000 }, (_, i) => `src/part${i}/fileName_${i % 7}.ts`);
    for (const path of [...many, ...many.slice(0, 10)])
      assert.deepEqual([...vocabulary.wordsOf(path)], [...pathWords(path)]);
  });

  it('follows files added and removed without rebuilding', () => {
    const held = new Set(paths);
    const vocabulary = new PathVocabulary(held);
    const before = vocabulary.idf('http');
    held.add('src/http/auth.py');
    held.delete('src/cli/main.py');
    vocabulary.refresh(['src/http/auth.py', 'src/cli/main.py', 'src/http/retry.py'], (path) =>
      held.has(path),
    );
    assert.equal(vocabulary.size, 4);
    assert.ok(vocabulary.idf('http') < before, 'http is now in every path');
    assert.equal(vocabulary.idf('cli'), 0);
    assert.deepEqual(vocabulary.idf('auth'), new PathVocabulary(held).idf('auth'));
  });
});

describe('contender files', () => {
  // the model's nearest chunks, best first, as `file::chunk`
  const nearest = [
    'single.py::a',
    'spread.py::a',
    'spread.py::b',
    'outside.py::a',
    'far.py::a',
  ].map((chunkId) => ({ chunkId }));
  const fileOf = (chunkId: string) => chunkId.split('::')[0];

  it('takes the closest chunk of each file not listed yet, closest files first', () => {
    assert.deepEqual(closestUnlisted(nearest, fileOf, new Set(['single.py'])), [
      'spread.py::a',
      'outside.py::a',
      'far.py::a',
    ]);
  });
});

describe('definition evidence', () => {
  const fileOf = (chunkId: string) => chunkId.split('::')[0];

  it('scores the candidate files holding the named definitions at their best hit', () => {
    const named = [
      { chunkId: 'params.py::Depends', score: 1 },
      { chunkId: 'functions.py::Depends', score: 0.6 },
      { chunkId: 'functions.py::depends_on', score: 0.3 },
      { chunkId: 'elsewhere.py::Depends', score: 1 },
    ];
    const scores = definingScores(named, fileOf, ['params.py', 'functions.py', 'utils.py']);
    assert.deepEqual(
      [...scores],
      [
        ['params.py', 1],
        ['functions.py', 0.6],
      ],
    );
  });
});
