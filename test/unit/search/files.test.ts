import { strict as assert } from 'node:assert';
import { fileRole, NO_DEFINITIONS, rankFiles, rolesAsked } from '../../../src/engine/search/files';
import type { Span } from '../../../src/engine/search/spans';

const span = (path: string, chunkId: string, score: number, startLine = 1): Span => ({
  path,
  startLine,
  endLine: startLine + 4,
  level: 'function',
  score,
  why: 'test span',
  chunkId,
});
const noNames = () => NO_DEFINITIONS;

describe('search results as files with spans', () => {
  it('lists each file once, with its spans best first and one chunk’s spans together', () => {
    const files = rankFiles(
      [
        span('a.py', 'a1', 1, 10),
        span('b.py', 'b1', 0.5),
        span('a.py', 'a2', 0.33, 40),
        span('a.py', 'a1', 1, 20),
      ],
      'how does it work',
      noNames,
      true,
    );
    assert.deepEqual(
      files.map((file) => file.path),
      ['a.py', 'b.py'],
    );
    assert.deepEqual(
      files[0]!.spans.map((s) => [s.chunkId, s.startLine]),
      [
        ['a1', 10],
        ['a1', 20],
        ['a2', 40],
      ],
    );
  });

  it('orders files by the chunk standing given for them, the spans keeping their own scores', () => {
    const spans = [span('first.py', 'x', 1), span('second.py', 'y', 0.5)];
    const standing = new Map([
      ['x', 0.5],
      ['y', 1],
    ]);
    const ranked = rankFiles(spans, 'q', noNames, true, [], [], null, standing);
    assert.deepEqual(
      ranked.map((file) => [file.path, file.score]),
      [
        ['second.py', 1],
        ['first.py', 0.5],
      ],
    );
    assert.deepEqual(
      ranked.map((file) => file.spans),
      [[spans[1]], [spans[0]]],
    );
  });

  it('ranks a file by its best chunk, not by how many chunks it has', () => {
    const spans = [
      span('one.py', 'x', 0.5),
      span('many.py', 'y1', 0.45),
      span('many.py', 'y2', 0.4),
    ];
    const ranked = rankFiles(spans, 'q', noNames, true);
    assert.deepEqual(
      ranked.map((file) => [file.path, file.score]),
      [
        ['one.py', 0.5],
        ['many.py', 0.45],
      ],
    );
  });

  it('lifts a file that leads on whole-file evidence by the standing of the second chunk', () => {
    const spans = [
      span('best-chunk.py', 'x', 1),
      span('more-words.py', 'y', 1 / 3),
      span('third.py', 'z', 1 / 4),
    ];
    const words = new Map([
      ['more-words.py', 8],
      ['third.py', 4],
      // a file the spans do not hold is not ranked, and does not set the scale
      ['elsewhere.py', 80],
    ]);
    const paths = new Map([['more-words.py', 2]]);
    const ranked = rankFiles(spans, 'q', noNames, true, [words, paths]);
    assert.deepEqual(
      ranked.map((file) => [file.path, Math.round(file.score * 1000) / 1000]),
      [
        ['more-words.py', 1.333],
        ['best-chunk.py', 1],
        ['third.py', 0.5],
      ],
    );
    const without = rankFiles(spans, 'q', noNames, true, []);
    assert.equal(without[0]!.path, 'best-chunk.py');
  });

  it('lets contenders take a place on evidence alone, without lengthening the list', () => {
    const spans = [span('best.py', 'x', 1), span('weak.py', 'y', 1 / 4)];
    const shapedFor: string[] = [];
    const contenders = [span('close.py', 'c', 1), span('unproven.py', 'u', 1)].map((best) => ({
      path: best.path,
      spans: () => {
        shapedFor.push(best.path);
        return [best];
      },
    }));
    const words = new Map([['close.py', 4]]);
    const ranked = rankFiles(spans, 'q', noNames, true, [words], contenders);
    assert.deepEqual(
      ranked.map((file) => [file.path, file.score, file.spans.map((cited) => cited.score)]),
      [
        ['best.py', 1, [1]],
        ['close.py', 0.5, [0]],
      ],
      'a contender stands only on its evidence, and the list keeps two places',
    );
    assert.deepEqual(shapedFor, ['close.py'], 'only the contender that took a place is shaped');
    assert.deepEqual(
      rankFiles(spans, 'q', noNames, true, [], contenders).map((file) => file.path),
      ['best.py', 'weak.py'],
    );
  });

  it("orders the listed files by their share of the question's words, never changing who is listed", () => {
    const spans = [
      span('http/urls.py', 'u', 1),
      span('http/urlparse.py', 'p', 0.9),
      span('http/client.py', 'c', 0.5),
    ];
    const contenders = [span('http/parse.py', 'x', 1)].map((best) => ({
      path: best.path,
      spans: () => [best],
    }));
    const coverage = new Map([
      ['http/urls.py', 0.5],
      ['http/urlparse.py', 1],
      ['http/client.py', 0.25],
      ['http/parse.py', 1],
    ]);
    const asked: string[][] = [];
    const ranked = rankFiles(spans, 'q', noNames, true, [], contenders, (paths) => {
      asked.push([...paths]);
      return coverage;
    });
    assert.deepEqual(
      asked,
      [['http/urls.py', 'http/urlparse.py', 'http/client.py']],
      'the shares are asked for once, for the listed files only',
    );
    assert.deepEqual(
      ranked.map((file) => [file.path, Math.round(file.score * 1000) / 1000]),
      [
        ['http/urlparse.py', 0.9],
        ['http/urls.py', 0.707],
        ['http/client.py', 0.25],
      ],
      'the file holding every word goes first; the square root softens a missing word',
    );
    assert.deepEqual(
      rankFiles(spans, 'q', noNames, true, [], contenders).map((file) => file.path),
      ['http/urls.py', 'http/urlparse.py', 'http/client.py'],
    );
  });

  it('ranks tests, stubs and examples below source unless the question asks about them', () => {
    const spans = [span('tests/test_client.py', 't', 1), span('src/client.py', 's', 0.7)];
    const ranked = rankFiles(spans, 'how is the client configured', noNames, true);
    assert.deepEqual(
      ranked.map((file) => [file.path, file.role]),
      [
        ['src/client.py', null],
        ['tests/test_client.py', 'test'],
      ],
    );
    const asked = rankFiles(spans, 'which tests cover the client', noNames, true);
    assert.equal(asked[0]!.path, 'tests/test_client.py');
    const off = rankFiles(spans, 'how is the client configured', noNames, false);
    assert.equal(off[0]!.path, 'tests/test_client.py');
  });

  it('tells the same role asked again, whatever the definitions say after the path', () => {
    const tests = { names: ['test_a', 'test_b', 'helper'], typeDeclarations: 0 };
    for (let round = 0; round < 2; round++) {
      assert.equal(fileRole('src/router.ts', tests), 'test');
      assert.equal(fileRole('src/router.ts'), null);
      assert.equal(fileRole('docs/router.ts', tests), 'docs');
      assert.equal(fileRole('docs/guide.md', NO_DEFINITIONS), 'docs');
    }
  });

  it('tells a file’s role from its path, or from its content for tests and type declarations', () => {
    assert.equal(fileRole('src/__tests__/router.ts'), 'test');
    assert.equal(fileRole('lib/router.spec.js'), 'test');
    assert.equal(fileRole('pkg/conftest.py'), 'test');
    assert.equal(fileRole('types/index.d.ts'), 'type-stub');
    assert.equal(fileRole('src/router.test-d.ts'), 'type-stub');
    assert.equal(fileRole('examples/basic/app.py'), 'example');
    assert.equal(fileRole('docs/guide.md'), 'docs');
    assert.equal(fileRole('pkg/_vendor/six.py'), 'vendored');
    assert.equal(fileRole('pkg/_compat.py'), 'compat');
    assert.equal(fileRole('pkg/api_pb2.py'), 'generated');
    assert.equal(fileRole('src/router.ts'), null);
    assert.equal(fileRole('src/contest.py'), null);
    const named = (names: string[], typeDeclarations = 0) => ({ names, typeDeclarations });
    assert.equal(fileRole('pkg/checks.py', named(['test_login', 'test_logout', 'helper'])), 'test');
    assert.equal(fileRole('pkg/login.py', named(['login', 'test_login'])), null);
    assert.equal(
      fileRole('src/http/types.ts', named(['Handler', 'Options', 'parse'], 2)),
      'type-stub',
    );
    assert.equal(fileRole('src/http/handler.ts', named(['Options', 'handle', 'parse'], 1)), null);
  });

  it('reads the roles a question asks about', () => {
    assert.deepEqual([...rolesAsked('Where are the fixtures for tests?')], ['test']);
    assert.deepEqual([...rolesAsked('show an example of the .d.ts types')].sort(), [
      'example',
      'type-stub',
    ]);
    assert.equal(rolesAsked('how are requests retried').size, 0);
  });
});
