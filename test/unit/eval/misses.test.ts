import { strict as assert } from 'node:assert';
import * as path from 'node:path';

type Located = [string, number, number, string];
interface Span {
  path: string;
  startLine: number;
  endLine: number;
}
interface Traced {
  results: Span[];
  files: { path: string; ranges: [number, number][] }[];
  trace: { lists: { source: string; chunks: Located[] }[]; ranked: Located[]; roles: object };
}
interface Misses {
  lineMisses(
    question: { gold: { path: string; line: number }[] },
    result: Traced,
    budget: number,
  ): { path: string; line: number; share: number; mechanism: string }[];
  peerMisses(
    targets: { path: string; start: number | null; end: number | null }[],
    result: Traced,
    k?: number,
  ): { loss: number; mechanism: string }[];
}

/** The classification of scripts/eval-mechanisms.mjs that eval-misses.mjs tabulates, on hand-made traces. */
describe('eval misses by mechanism', () => {
  let misses: Misses;
  before(async () => {
    misses = (await import(
      path.resolve(__dirname, '..', '..', '..', 'scripts', 'eval-mechanisms.mjs')
    )) as Misses;
  });

  const traced = (
    results: Span[],
    chunks: Located[],
    roles: Record<string, string> = {},
  ): Traced => ({
    results,
    files: [...new Set(results.map((span) => span.path))].map((file) => ({
      path: file,
      ranges: results
        .filter((span) => span.path === file)
        .map((span): [number, number] => [span.startLine, span.endLine]),
    })),
    trace: { lists: [{ source: 'lexical', chunks }], ranked: [], roles },
  });
  const span = (file: string, startLine: number, endLine: number): Span => ({
    path: file,
    startLine,
    endLine,
  });

  it('tells a line lost to retrieval, to the budget, to span shaping and to a class chunk apart', () => {
    const result = traced(
      [span('a.py', 1, 300), span('b.py', 10, 20), span('b.py', 100, 400), span('c.py', 1, 10)],
      [
        ['a.py', 1, 300, 'function'],
        ['b.py', 10, 60, 'function'],
        ['b.py', 100, 400, 'function'],
        ['b.py', 500, 900, 'class'],
        ['c.py', 1, 10, 'function'],
        ['d.py', 1, 50, 'function'],
      ],
    );
    const lost = (path: string, line: number) =>
      misses.lineMisses({ gold: [{ path, line }] }, result, 400).map((miss) => miss.mechanism);
    assert.deepEqual(lost('a.py', 5), [], 'a line inside a span within the budget is found');
    assert.deepEqual(lost('e.py', 5), ['fileNeverRetrieved']);
    assert.deepEqual(lost('d.py', 5), ['fileOutsideBudget']);
    assert.deepEqual(lost('b.py', 40), ['lineLeftOut']);
    assert.deepEqual(
      lost('b.py', 380),
      ['functionPastBudget'],
      'the 400-line budget ends at b.py line 188',
    );
    assert.deepEqual(lost('b.py', 700), ['onlyClassRetrieved']);
    assert.deepEqual(lost('b.py', 950), ['lineNeverReached']);
    const two = misses.lineMisses(
      {
        gold: [
          { path: 'a.py', line: 5 },
          { path: 'e.py', line: 1 },
        ],
      },
      result,
      400,
    );
    assert.deepEqual(
      two,
      [{ path: 'e.py', line: 1, share: 0.5, mechanism: 'fileNeverRetrieved' }],
      'each miss names the gold line it lost, to be read one by one',
    );
  });

  it('tells a function shaped but left out by the token budget from one ranked past the shaping', () => {
    const cited = [span('a.py', 1, 20)];
    const result: Traced = {
      results: cited,
      // the files list holds every shaped span: a.py's 40-60 was shaped, then left out
      files: [
        {
          path: 'a.py',
          ranges: [
            [1, 20],
            [40, 60],
          ],
        },
      ],
      trace: {
        lists: [
          {
            source: 'semantic',
            chunks: [
              ['a.py', 1, 20, 'function'],
              ['a.py', 40, 60, 'function'],
              ['a.py', 80, 90, 'function'],
            ],
          },
        ],
        ranked: [],
        roles: {},
      },
    };
    const lost = (line: number) =>
      misses.lineMisses({ gold: [{ path: 'a.py', line }] }, result, 600).map((m) => m.mechanism);
    assert.deepEqual(lost(50), ['functionDropped']);
    assert.deepEqual(lost(85), ['functionNotShaped']);
  });

  it('splits a peer query’s lost nDCG among its targets by what ranked above them', () => {
    const result = traced(
      [span('pkg/big.py', 1, 9), span('tests/test_x.py', 1, 9), span('pkg/x.py', 1, 9)],
      [
        ['pkg/big.py', 1, 9, 'function'],
        ['pkg/x.py', 1, 9, 'function'],
        ['pkg/y.py', 1, 9, 'function'],
      ],
      { 'tests/test_x.py': 'test' },
    );
    const target = (file: string) => ({ path: file, start: null, end: null });
    const one = misses.peerMisses([target('pkg/x.py')], result);
    assert.equal(one.length, 1);
    assert.equal(one[0]!.mechanism, 'beatenByRole');
    assert.ok(Math.abs(one[0]!.loss - (1 - 1 / Math.log2(4))) < 1e-9, 'nDCG 1/log2(4) at 3rd');
    assert.deepEqual(
      misses.peerMisses([target('pkg/big.py'), target('pkg/y.py')], result).map((m) => m.mechanism),
      ['retrievedNotListed'],
    );
    assert.deepEqual(
      misses.peerMisses([target('pkg/z.py')], result).map((m) => m.mechanism),
      ['neverRetrieved'],
    );
    assert.deepEqual(misses.peerMisses([target('pkg/big.py')], result), [], 'first: nothing lost');
    assert.deepEqual(
      misses
        .peerMisses([{ path: 'pkg/big.py', start: 20, end: 30 }], result)
        .map((m) => m.mechanism),
      ['spanMissed'],
    );
    const sibling = traced([span('pkg/big.py', 1, 9), span('pkg/x.py', 1, 9)], []);
    assert.deepEqual(
      misses.peerMisses([target('pkg/x.py')], sibling).map((m) => m.mechanism),
      ['beatenBySibling'],
    );
    const other = traced([span('lib/big.py', 1, 9), span('pkg/x.py', 1, 9)], []);
    assert.deepEqual(
      misses.peerMisses([target('pkg/x.py')], other).map((m) => m.mechanism),
      ['beatenByOther'],
    );
    const deep = traced(
      Array.from({ length: 11 }, (_, i) => span(`f${i}.py`, 1, 9)),
      [],
    );
    assert.deepEqual(
      misses.peerMisses([target('f10.py')], deep).map((m) => m.mechanism),
      ['fileBelowTen'],
    );
  });
});
