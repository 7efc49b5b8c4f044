import * as assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { bm25Search, bm25SearchExhaustive } from '../../../src/engine/search/bm25';
import { LexicalIndex, type LexicalDocument } from '../../../src/engine/store/lexical';
import type { ChunkLevel } from '../../../src/engine/model';

/** A small vocabulary with a skewed spread, so some terms are common and most are rare. */
const VOCABULARY = Array.from({ length: 60 }, (_, i) => `t${i}`);

const documentArbitrary = fc.record({
  file: fc.integer({ min: 0, max: 30 }),
  level: fc.constantFrom<ChunkLevel>('function', 'class'),
  terms: fc.array(
    fc.tuple(fc.integer({ min: 0, max: 59 }), fc.integer({ min: 1, max: 6 })).map(
      // squaring the index over the vocabulary makes low-numbered terms far more frequent
      ([term, count]) => [VOCABULARY[Math.floor(term ** 2 / 60)]!, count] as const,
    ),
    { minLength: 1, maxLength: 25 },
  ),
  names: fc.array(fc.constantFrom(...VOCABULARY), { maxLength: 3 }),
});

function toDocuments(
  drawn: {
    file: number;
    level: ChunkLevel;
    terms: (readonly [string, number])[];
    names: string[];
  }[],
): LexicalDocument[] {
  return drawn.map((document, i) => ({
    chunkId: `f${document.file}.py::c${i}`,
    path: `f${document.file}.py`,
    level: document.level,
    terms: new Map(document.terms),
    nameTerms: document.names,
  }));
}

const queryArbitrary = fc.record({
  terms: fc.array(fc.constantFrom(...VOCABULARY, 'absent'), { minLength: 1, maxLength: 8 }),
  weights: fc.array(fc.double({ min: 0, max: 2, noNaN: true }), { minLength: 8, maxLength: 8 }),
  limit: fc.integer({ min: 1, max: 30 }),
  level: fc.constantFrom<ChunkLevel>('function', 'class'),
});

describe('BM25 top-k search', () => {
  it('returns exactly what scoring every chunk returns, on random indexes and queries', () => {
    fc.assert(
      fc.property(
        fc.array(documentArbitrary, { minLength: 1, maxLength: 120 }),
        fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 6 }),
        fc.array(queryArbitrary, { minLength: 1, maxLength: 5 }),
        (drawn, removedFiles, queries) => {
          const index = new LexicalIndex();
          index.add(toDocuments(drawn));
          // removed files leave tombstones in the posting lists, which both must skip
          index.removePaths(removedFiles.map((file) => `f${file}.py`));
          for (const query of queries) {
            const queryWeights = new Map(query.terms.map((term, i) => [term, query.weights[i]!]));
            const fast = bm25Search(index, query.level, query.terms, query.limit, {
              queryWeights,
            });
            const reference = bm25SearchExhaustive(index, query.level, query.terms, query.limit, {
              queryWeights,
            });
            assert.deepEqual(fast, reference);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps the exhaustive top-k for small limits with name weights', () => {
    fc.assert(
      fc.property(
        fc.array(documentArbitrary, { minLength: 20, maxLength: 200 }),
        fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 3 }),
        fc.array(
          fc.record({
            // rare terms (high numbers) beside common ones (low numbers), named or not
            terms: fc.array(fc.constantFrom(...VOCABULARY), { minLength: 2, maxLength: 10 }),
            weights: fc.array(fc.double({ min: 0, max: 2, noNaN: true }), {
              minLength: 10,
              maxLength: 10,
            }),
            nameWeights: fc.array(fc.double({ min: 0, max: 2, noNaN: true }), {
              minLength: 10,
              maxLength: 10,
            }),
            limit: fc.integer({ min: 1, max: 4 }),
            level: fc.constantFrom<ChunkLevel>('function', 'class'),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        (drawn, removedFiles, queries) => {
          const index = new LexicalIndex();
          index.add(toDocuments(drawn));
          index.removePaths(removedFiles.map((file) => `f${file}.py`));
          for (const query of queries) {
            const options = {
              queryWeights: new Map(query.terms.map((term, i) => [term, query.weights[i]!])),
              nameWeights: new Map(query.terms.map((term, i) => [term, query.nameWeights[i]!])),
            };
            assert.deepEqual(
              bm25Search(index, query.level, query.terms, query.limit, options),
              bm25SearchExhaustive(index, query.level, query.terms, query.limit, options),
            );
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('ranks by BM25 with the name boost and skips terms most chunks hold', () => {
    const index = new LexicalIndex();
    index.add([
      doc('a.py::parse', { parse: 3, config: 1 }, ['parse']),
      doc('b.py::load', { parse: 1, load: 2, config: 1 }, ['load']),
      doc('c.py::save', { save: 1, config: 1 }, ['save']),
      doc('d.py::other', { other: 4, config: 1 }, []),
    ]);
    const hits = bm25Search(index, 'function', ['parse', 'config'], 10);
    // "config" is in every chunk: past half of them, it is not worth its postings
    assert.deepEqual(
      hits.map((hit) => [hit.chunkId, hit.matched]),
      [
        ['a.py::parse', ['parse']],
        ['b.py::load', ['parse']],
      ],
    );
    assert.ok(hits[0]!.score > hits[1]!.score);
  });

  it('boosts a name match by the name weight, apart from the text weight', () => {
    const index = new LexicalIndex();
    index.add([
      doc('a.py::handle', { handle: 1, request: 1 }, ['handle']),
      doc('b.py::wrap', { handle: 2, request: 1 }, ['wrap']),
      doc('c.py::other', { other: 1 }, []),
    ]);
    const order = (nameWeights?: Map<string, number>) =>
      bm25Search(index, 'function', ['handle'], 10, {
        queryWeights: new Map([['handle', 0.7]]),
        ...(nameWeights ? { nameWeights } : {}),
      }).map((hit) => hit.chunkId);
    assert.deepEqual(order(), ['a.py::handle', 'b.py::wrap']);
    assert.deepEqual(order(new Map([['handle', 0]])), ['b.py::wrap', 'a.py::handle']);
  });

  it('reads back from a snapshot the posting lists it wrote, and keeps adding to them alike', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bm25-'));
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.array(documentArbitrary, { minLength: 1, maxLength: 80 }),
          fc.array(fc.integer({ min: 0, max: 30 }), { maxLength: 6 }),
          fc.array(documentArbitrary, { maxLength: 20 }),
          async (drawn, removedFiles, later) => {
            const index = new LexicalIndex();
            index.add(toDocuments(drawn));
            index.removePaths(removedFiles.map((file) => `f${file}.py`));
            const file = path.join(dir, 'lexical.bin');
            await index.writeSnapshot(file);
            const read = await LexicalIndex.readSnapshot(file);
            const more = toDocuments(later).map((document, i) => ({
              ...document,
              chunkId: `${document.chunkId}-later${i}`,
            }));
            for (const [stage, written] of [
              ['read back', read],
              ['then added to', read],
            ] as const) {
              if (stage === 'then added to') {
                index.add(more);
                written.add(more);
              }
              for (const level of ['function', 'class'] as const)
                for (const term of VOCABULARY)
                  assert.deepEqual(
                    written.postings(level, term),
                    index.postings(level, term),
                    `${stage}: ${level} ${term}`,
                  );
            }
          },
        ),
        { numRuns: 100 },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('finds the same chunks after a snapshot is written and read back', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bm25-'));
    try {
      const index = new LexicalIndex();
      index.add([
        doc('a.py::parse', { parse: 3 }, ['parse']),
        doc('b.py::load', { parse: 1, load: 2 }, ['load']),
        doc('c.py::save', { save: 1 }, ['save']),
      ]);
      index.removePaths(['b.py']);
      const file = path.join(dir, 'lexical.bin');
      await index.writeSnapshot(file);
      const read = await LexicalIndex.readSnapshot(file);
      const terms = ['parse', 'load', 'save'];
      assert.deepEqual(
        bm25Search(read, 'function', terms, 10).map((hit) => [hit.chunkId, hit.score]),
        bm25Search(index, 'function', terms, 10).map((hit) => [hit.chunkId, hit.score]),
      );
      assert.deepEqual(read.postings('function', 'parse').length, 1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function doc(chunkId: string, terms: Record<string, number>, names: string[]): LexicalDocument {
  return {
    chunkId,
    path: chunkId.slice(0, chunkId.indexOf('::')),
    level: 'function',
    terms: new Map(Object.entries(terms)),
    nameTerms: names,
  };
}
