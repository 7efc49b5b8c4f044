import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { CHUNK_LEVELS, type ChunkLevel } from '../../src/engine/model';
import { bm25Search } from '../../src/engine/search/bm25';
import { Strings } from '../../src/engine/store/columns';
import { LexicalIndex, type LexicalDocument } from '../../src/engine/store/lexical';
import { readSnapshotHeader } from '../../src/engine/store/lexical-header';
import { WordFile } from '../../src/engine/store/snapshot-file';

/**
 * The lexical index keeps each chunk's terms in one arena addressed by per-chunk columns, reuses
 * the room of removed chunks, and reads a snapshot's posting lists and chunk terms from its file.
 * Whatever it goes through, it must answer what a plain list of the live documents answers.
 */

// a word and a path beyond ASCII each: the snapshot writes its strings as UTF-8 bytes
const VOCABULARY = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta', 'größe'];
const PATHS = ['a.py', 'b.py', 'c.py', 'd.py', 'e.py', 'ü/日本.py'];

const documentArbitrary = fc.record({
  path: fc.constantFrom(...PATHS),
  level: fc.constantFrom<ChunkLevel>(...CHUNK_LEVELS),
  terms: fc.array(fc.tuple(fc.constantFrom(...VOCABULARY), fc.integer({ min: 1, max: 5 })), {
    maxLength: 6,
  }),
  names: fc.array(fc.constantFrom(...VOCABULARY), { maxLength: 3 }),
});

type Step =
  | { readonly kind: 'add'; readonly documents: readonly DrawnDocument[] }
  | { readonly kind: 'remove'; readonly paths: string[] }
  | { readonly kind: 'snapshot' }
  | { readonly kind: 'rewrite' };

type DrawnDocument = typeof documentArbitrary extends fc.Arbitrary<infer T> ? T : never;

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .array(documentArbitrary, { maxLength: 6 })
      .map((documents) => ({ kind: 'add' as const, documents })),
  },
  {
    weight: 3,
    arbitrary: fc
      .uniqueArray(fc.constantFrom(...PATHS), { maxLength: 3 })
      .map((paths) => ({ kind: 'remove' as const, paths })),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'snapshot' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'rewrite' as const }) },
);

/** What a live document looks like from outside, in the reference's terms. */
interface Held {
  readonly chunkId: string;
  readonly path: string;
  readonly level: ChunkLevel;
  readonly terms: Map<string, number>;
  readonly names: Set<string>;
}

function answers(index: LexicalIndex): unknown {
  const out: Record<string, unknown> = { size: index.size };
  out.documents = [...index.documents()].map((document) => ({
    ...document,
    terms: [...document.terms].sort(),
  }));
  for (const level of CHUNK_LEVELS) {
    out[`stats ${level}`] = index.levelStats(level);
    for (const term of [...VOCABULARY, 'absent']) {
      const docs = index.postings(level, term).map((docId) => {
        const stats = index.document(docId)!;
        assert.equal(index.chunkIdOf(docId), stats.chunkId);
        return {
          chunkId: stats.chunkId,
          length: stats.length,
          frequency: stats.termFrequency(term),
          named: stats.hasNameTerm(term),
          terms: index.termsOf(docId).sort(),
        };
      });
      out[`postings ${level} ${term}`] = docs;
      out[`frequency ${level} ${term}`] = index.documentFrequencyOf(level, term);
    }
  }
  for (const file of PATHS) {
    const documents = index.documentsAt(file);
    // the lookups search makes without building statistics agree with them
    for (const stats of documents) {
      const docId = index.docIdAt(file, stats.chunkId);
      assert.equal(docId === undefined ? undefined : index.chunkIdOf(docId), stats.chunkId);
      for (const term of [...VOCABULARY, 'absent'])
        assert.equal(index.termFrequencyIn(docId!, term), stats.termFrequency(term));
    }
    out[`at ${file}`] = documents.map((stats) => [stats.chunkId, stats.level]);
  }
  out.vocabulary = [...index.vocabulary()].sort();
  return out;
}

/** The same answers computed from the live documents alone. */
function expected(held: readonly Held[]): unknown {
  const out: Record<string, unknown> = { size: held.length };
  const length = (document: Held) => [...document.terms.values()].reduce((sum, n) => sum + n, 0);
  out.documents = held.map((document) => ({
    chunkId: document.chunkId,
    path: document.path,
    level: document.level,
    length: length(document),
    terms: [...document.terms].sort(),
  }));
  for (const level of CHUNK_LEVELS) {
    const atLevel = held.filter((document) => document.level === level);
    out[`stats ${level}`] = {
      documents: atLevel.length,
      averageLength: atLevel.length
        ? atLevel.reduce((sum, document) => sum + length(document), 0) / atLevel.length
        : 0,
    };
    for (const term of [...VOCABULARY, 'absent']) {
      const holding = atLevel.filter(
        (document) => document.terms.has(term) || document.names.has(term),
      );
      out[`postings ${level} ${term}`] = holding.map((document) => ({
        chunkId: document.chunkId,
        length: length(document),
        frequency: document.terms.get(term) ?? 0,
        named: document.names.has(term),
        terms: [...document.terms.keys()].sort(),
      }));
      out[`frequency ${level} ${term}`] = holding.length;
    }
  }
  for (const file of PATHS)
    out[`at ${file}`] = held
      .filter((document) => document.path === file)
      .map((document) => [document.chunkId, document.level]);
  out.vocabulary = [
    ...new Set(held.flatMap((document) => [...document.terms.keys(), ...document.names])),
  ].sort();
  return out;
}

describe('lexical index: chunk terms in one arena', () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(path.join(tmpdir(), 'lexical-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  let snapshots = 0;

  /**
   * Runs `steps` on a new index, calling `check` with the index and its live documents after each;
   * with a `spillBudget`, the index spills (see LexicalIndex.spillInto) past it, read back too.
   */
  async function run(
    steps: readonly Step[],
    check: (index: LexicalIndex, held: readonly Held[]) => void,
    spillBudget: number | null = null,
  ): Promise<void> {
    let index = new LexicalIndex();
    if (spillBudget !== null) index.spillInto(directory, spillBudget);
    let held: Held[] = [];
    let next = 0;
    for (const step of steps) {
      if (step.kind === 'add') {
        const documents: LexicalDocument[] = step.documents.map((drawn) => ({
          chunkId: `${drawn.path}::c${next++}`,
          path: drawn.path,
          level: drawn.level,
          terms: new Map(drawn.terms),
          nameTerms: drawn.names,
        }));
        index.add(documents);
        held.push(
          ...documents.map((document) => ({
            chunkId: document.chunkId,
            path: document.path,
            level: document.level,
            terms: new Map(document.terms),
            names: new Set(document.nameTerms),
          })),
        );
      } else if (step.kind === 'remove') {
        index.removePaths(step.paths);
        held = held.filter((document) => !step.paths.includes(document.path));
      } else {
        const file = path.join(directory, `snapshot-${snapshots++}.bin`);
        await index.writeSnapshot(file);
        // a snapshot read back, or the index that wrote it going on from its own file
        if (step.kind === 'snapshot') {
          index.close();
          index = await LexicalIndex.readSnapshot(file);
          if (spillBudget !== null) index.spillInto(directory, spillBudget);
        }
      }
      check(index, held);
    }
    index.close();
  }

  it('answers what the live documents say through adds, removals, snapshots read back and snapshots written and read on', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 1, maxLength: 16 }), (steps) =>
        run(steps, (index, held) => assert.deepEqual(answers(index), expected(held))),
      ),
      { numRuns: 150 },
    );
  });

  it('answers the same when what it adds spills to scratch files, at every add or past a budget', async () => {
    // the empty lists alone take about 9k words: budgets around them spill some adds and not others
    const budget = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40_000 }));
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArbitrary, { minLength: 1, maxLength: 16 }),
        budget,
        (steps, spillBudget) =>
          run(
            steps,
            (index, held) => assert.deepEqual(answers(index), expected(held)),
            spillBudget,
          ),
      ),
      { numRuns: 150 },
    );
  });

  it('writes the same snapshot, byte for byte, whether what it added spilled or stayed in memory', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(documentArbitrary, { minLength: 1, maxLength: 6 }), { maxLength: 8 }),
        fc.uniqueArray(fc.constantFrom(...PATHS), { maxLength: 2 }),
        async (batches, removed) => {
          const written = async (spills: boolean) => {
            const index = new LexicalIndex();
            if (spills) index.spillInto(directory, 0);
            let next = 0;
            for (const batch of batches)
              index.add(
                batch.map((drawn) => ({
                  chunkId: `${drawn.path}::c${next++}`,
                  path: drawn.path,
                  level: drawn.level,
                  terms: new Map(drawn.terms),
                  nameTerms: drawn.names,
                })),
              );
            index.removePaths(removed);
            const file = path.join(directory, `snapshot-${snapshots++}.bin`);
            await index.writeSnapshot(file);
            index.close();
            return readFileSync(file);
          };
          assert.deepEqual(await written(true), await written(false));
        },
      ),
      { numRuns: 60 },
    );
    // the scratch files are unlinked once open: nothing of them is left in the folder
    assert.deepEqual(
      readdirSync(directory).filter((name) => !name.startsWith('snapshot-')),
      [],
    );
  });

  it('reads every posting list, main list then what was appended since, as a freshly built index does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArbitrary, { minLength: 1, maxLength: 16 }), (steps) =>
        run(steps, (index, held) => {
          const fresh = new LexicalIndex();
          fresh.add(
            held.map((document) => ({
              chunkId: document.chunkId,
              path: document.path,
              level: document.level,
              terms: document.terms,
              nameTerms: [...document.names],
            })),
          );
          for (const level of CHUNK_LEVELS) {
            for (const term of VOCABULARY)
              assert.deepEqual(livePostings(index, level, term), livePostings(fresh, level, term));
            const query = VOCABULARY.slice(0, 4);
            const hits = (of: LexicalIndex) =>
              bm25Search(of, level, query, 5).map((hit) => [hit.chunkId, hit.score, hit.matched]);
            assert.deepEqual(hits(index), hits(fresh));
          }
        }),
      ),
      { numRuns: 150 },
    );
  });

  it('holds every term and count of chunks larger than any before them, whatever order their terms come in', () => {
    // terms numbered in one order and handed over in another, by chunks that outgrow the room
    // the index sorts a chunk's terms in (it starts at 1,024 terms)
    const vocabulary = Array.from({ length: 3000 }, (_, i) => `term${i}`);
    fc.assert(
      fc.property(
        fc.array(fc.shuffledSubarray(vocabulary, { minLength: 1 }), { minLength: 1, maxLength: 4 }),
        (chunks) => {
          const index = new LexicalIndex();
          const added = chunks.map(
            (terms, chunk) => new Map(terms.map((term, i) => [term, 1 + ((i * 31 + chunk) % 9)])),
          );
          index.add(
            added.map((terms, i) => ({
              chunkId: `c${i}`,
              path: 'a.py',
              level: 'function' as const,
              terms,
              nameTerms: [],
            })),
          );
          const documents = index.documentsAt('a.py');
          assert.equal(documents.length, added.length);
          documents.forEach((stats, i) => {
            const terms = added[i]!;
            assert.equal(
              stats.length,
              [...terms.values()].reduce((sum, count) => sum + count, 0),
            );
            for (const term of vocabulary)
              assert.equal(stats.termFrequency(term), terms.get(term) ?? 0, `${term} in c${i}`);
            const docId = index.docIdAt('a.py', stats.chunkId)!;
            assert.deepEqual(index.termsOf(docId).sort(), [...terms.keys()].sort());
          });
          for (const term of vocabulary.slice(0, 100))
            assert.equal(
              index.documentFrequencyOf('function', term),
              added.filter((terms) => terms.has(term)).length,
            );
        },
      ),
      {
        numRuns: 10,
        // a chunk that outgrows the room twice, its terms in an order unlike their ids'
        examples: [
          [
            [
              vocabulary.slice(0, 10),
              vocabulary.slice(0, 1500).reverse(),
              vocabulary.map((_, k) => vocabulary[(k * 7) % vocabulary.length]!),
            ],
          ],
        ],
      },
    );
  });
});

describe('lexical index: posting lists and chunk terms read from the snapshot file', () => {
  let directory: string;
  beforeEach(() => (directory = mkdtempSync(path.join(tmpdir(), 'lexical-disk-'))));
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  /** Chunks enough that runs and lists cross the blocks the file is read in (16 KB and 1 MB). */
  function largeDocuments(count: number, from = 0): LexicalDocument[] {
    let seed = 7 + from;
    const random = (below: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % below;
    };
    return Array.from({ length: count }, (_, i) => {
      const terms = new Map<string, number>();
      const distinct = 20 + random(300);
      for (let k = 0; k < distinct; k++) terms.set(`t${random(3000)}`, 1 + random(4));
      return {
        chunkId: `f${(from + i) % 97}.py::c${from + i}`,
        path: `f${(from + i) % 97}.py`,
        // most at one level, so its lists outgrow a 1 MB block
        level: i % 10 ? 'function' : CHUNK_LEVELS[random(CHUNK_LEVELS.length)]!,
        terms,
        nameTerms: [`t${random(3000)}`, `name${i % 13}`],
      };
    });
  }

  /** Writes `documents` as a snapshot in the test's folder and says where it is. */
  async function snapshotOf(documents: readonly LexicalDocument[]): Promise<string> {
    const writer = new LexicalIndex();
    writer.add(documents);
    const file = path.join(directory, 'lexical-1.bin');
    await writer.writeSnapshot(file);
    writer.close();
    return file;
  }

  /** Each list and each chunk's terms must be what the documents themselves say. */
  function assertSameAs(index: LexicalIndex, documents: readonly LexicalDocument[]): void {
    const expected = new Map<string, [string, number][]>();
    for (const d of documents)
      for (const term of new Set([...d.terms.keys(), ...d.nameTerms])) {
        const key = `${d.level} ${term}`;
        const payload = ((d.terms.get(term) ?? 0) << 1) | (d.nameTerms.includes(term) ? 1 : 0);
        const list = expected.get(key);
        if (list) list.push([d.chunkId, payload]);
        else expected.set(key, [[d.chunkId, payload]]);
      }
    const vocabulary = new Set(documents.flatMap((d) => [...d.terms.keys(), ...d.nameTerms]));
    for (const level of CHUNK_LEVELS)
      for (const term of vocabulary)
        assert.deepEqual(
          livePostings(index, level, term),
          expected.get(`${level} ${term}`) ?? [],
          `${level} ${term}`,
        );
    assert.deepEqual(
      [...index.documents()].map((document) => [document.chunkId, [...document.terms].sort()]),
      documents.map((d) => [d.chunkId, [...d.terms].sort()]),
    );
  }

  it('reads back every list and chunk across the blocks it is read in, before and after changes', async () => {
    const first = largeDocuments(1200);
    const index = new LexicalIndex();
    // enough postings at one level that its tails are folded into the lists in memory
    index.add(first);
    assertSameAs(index, first);
    const file = path.join(directory, 'lexical-1.bin');
    await index.writeSnapshot(file);
    const read = await LexicalIndex.readSnapshot(file);
    assertSameAs(read, first);
    read.removePaths(['f3.py', 'f50.py']);
    const added = largeDocuments(300, 1200);
    read.add(added);
    const live = [...first.filter((d) => d.path !== 'f3.py' && d.path !== 'f50.py'), ...added];
    assertSameAs(read, live);
    await read.writeSnapshot(path.join(directory, 'lexical-2.bin'));
    assertSameAs(read, live);
    assert.equal(read.tombstoneCount, 0);
    index.close();
    read.close();
  });

  it('reads a list once per search from the snapshot, and again after a change or in the next search', async () => {
    const documents = largeDocuments(200);
    const file = await snapshotOf(documents);
    const index = await LexicalIndex.readSnapshot(file);
    const term = 'name3';
    index.startReading();
    const first = index.postingList('function', term)!;
    assert.ok(first.size > 0);
    const before = livePostings(index, 'function', term);
    assert.equal(index.postingList('function', term), first, 'read again in one search');
    // a change between two reads of one search: the second gives the changed list
    const added = largeDocuments(20, 200).filter((d) => d.level === 'function');
    index.add(added);
    const changed = livePostings(index, 'function', term);
    assert.equal(
      changed.length,
      before.length + added.filter((d) => d.nameTerms.includes(term)).length,
    );
    assert.ok(changed.length > before.length);
    index.startReading();
    const next = index.postingList('function', term)!;
    assert.notEqual(next, first);
    assert.deepEqual(livePostings(index, 'function', term), changed);
    // no change since: the next search still reads the list afresh (its room is reused)
    index.startReading();
    assert.notEqual(index.postingList('function', term), next, 'kept into the next search');
    assert.deepEqual(livePostings(index, 'function', term), changed);
    index.close();
  });

  it('counts a term in a chunk from the list this search read, to the count the chunk holds, with no read of the chunk', async () => {
    const documents = largeDocuments(400);
    const file = await snapshotOf(documents);
    const truth = (d: LexicalDocument, term: string) => d.terms.get(term) ?? 0;
    const docIdOf = (index: LexicalIndex, d: LexicalDocument) => index.docIdAt(d.path, d.chunkId)!;
    // a name-only term (payload 0 << 1 | 1), a common term and a term no chunk holds
    const terms = ['name3', 't17', 't2500', 'absent'];

    const index = await LexicalIndex.readSnapshot(file);
    index.startReading();
    // before any list is read: from the chunks' own terms
    for (const d of documents)
      for (const term of terms)
        assert.equal(index.termFrequencyIn(docIdOf(index, d), term), truth(d, term));
    const paths = [...new Set(documents.map((d) => d.path))].slice(0, 30);
    const byChunks = index.fileTermCounts(paths, CHUNK_LEVELS, terms);

    const docIds = documents.map((d) => docIdOf(index, d));
    index.startReading();
    for (const level of CHUNK_LEVELS) for (const term of terms) index.postingList(level, term);
    // the snapshot closed: a count that read a chunk's terms would fail
    index.close();
    documents.forEach((d, i) => {
      for (const term of terms)
        assert.equal(index.termFrequencyIn(docIds[i]!, term), truth(d, term));
    });
    assert.deepEqual(index.fileTermCounts(paths, CHUNK_LEVELS, terms), byChunks);
    // the same count with no list read would read the chunk's terms, and fail
    const unread = await LexicalIndex.readSnapshot(file);
    unread.startReading();
    unread.close();
    const [held] = documents[0]!.terms.keys();
    assert.throws(() => unread.termFrequencyIn(docIds[0]!, held!), /closed while a search read it/);

    // after a change the lists in memory (main list and tail) count as they are
    const reread = await LexicalIndex.readSnapshot(file);
    reread.removePaths(['f3.py']);
    const added = largeDocuments(60, 400);
    reread.add(added);
    reread.startReading();
    for (const level of CHUNK_LEVELS) for (const term of terms) reread.postingList(level, term);
    for (const d of [...documents.filter((d) => d.path !== 'f3.py'), ...added])
      for (const term of terms)
        assert.equal(reread.termFrequencyIn(docIdOf(reread, d), term), truth(d, term));
    reread.close();
  });

  it('keeps reading the generation it opened when a new snapshot is renamed over its file', async () => {
    const documents = largeDocuments(200);
    const writer = new LexicalIndex();
    writer.add(documents);
    const file = path.join(directory, 'lexical-1.bin');
    await writer.writeSnapshot(file);
    const reader = await LexicalIndex.readSnapshot(file);
    writer.removePaths(['f1.py']);
    writer.add(largeDocuments(50, 200));
    await writer.writeSnapshot(file);
    assertSameAs(reader, documents);
    reader.close();
    writer.close();
  });

  it('reads a snapshot of the format before (its columns in the JSON header) as it reads its own', async () => {
    const documents = [
      ...largeDocuments(400),
      {
        chunkId: 'ü/日本.py::größe',
        path: 'ü/日本.py',
        level: 'function' as const,
        terms: new Map([['größe', 2]]),
        nameTerms: ['größe'],
      },
    ];
    const current = await snapshotOf(documents);
    const file = WordFile.open(current);
    const { columns, layout } = readSnapshotHeader(file, new Strings());
    file.close();
    const json = Buffer.from(
      JSON.stringify({
        version: 3,
        nextDocId: columns.nextDocId,
        terms: columns.terms,
        docs: {
          ids: [...columns.ids],
          chunkIds: columns.chunkIds,
          paths: columns.paths,
          levels: [...columns.levels],
          lengths: [...columns.lengths],
          termCounts: [...columns.termCounts],
          nameCounts: [...columns.nameCounts],
        },
        postings: columns.postings,
      }),
      'utf8',
    );
    // the same body and lists after the JSON header, padded to a word
    const prefix = Buffer.alloc(4 + json.length + ((4 - ((4 + json.length) % 4)) % 4));
    prefix.writeUInt32LE(json.length, 0);
    json.copy(prefix, 4);
    const older = path.join(directory, 'lexical-3.bin');
    writeFileSync(
      older,
      Buffer.concat([prefix, readFileSync(current).subarray(layout.bodyOffset)]),
    );
    const read = await LexicalIndex.readSnapshot(older);
    assertSameAs(read, documents);
    read.close();
  });

  it('says an older snapshot format is not read, and reads nothing after closing', async () => {
    const file = path.join(directory, 'lexical-1.bin');
    const header = Buffer.from(JSON.stringify({ version: 2, nextDocId: 1, terms: [] }), 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(header.length);
    writeFileSync(file, Buffer.concat([length, header]));
    await assert.rejects(LexicalIndex.readSnapshot(file), /format version 2, this version reads 4/);
    const index = new LexicalIndex();
    index.add(largeDocuments(5));
    await index.writeSnapshot(file);
    index.close();
    assert.throws(
      () => CHUNK_LEVELS.forEach((level) => index.postingList(level, 'name0')),
      /closed while a search read it/,
    );
  });
});

/** The live postings of `term` at `level`, in list order, as chunk ids with their payloads. */
function livePostings(index: LexicalIndex, level: ChunkLevel, term: string): [string, number][] {
  const list = index.postingList(level, term);
  const out: [string, number][] = [];
  for (let at = 0; at < (list?.size ?? 0); at++) {
    const docId = list!.docs[at]!;
    if (index.isLive(docId)) out.push([index.document(docId)!.chunkId, list!.payload[at]!]);
  }
  return out;
}
