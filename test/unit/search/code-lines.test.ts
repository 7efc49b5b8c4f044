import * as assert from 'node:assert/strict';
import { codeLines } from '../../../src/engine/search/evidence';
import type { ChunkMeta } from '../../../src/engine/store/tables';
import { chunkMeta } from '../../helpers/chunks';

/** The code lines of chunk texts, kept between reads: each chunk gets the lines of its own place. */
/** The file line numbers of a chunk's code lines. */
const numbers = (meta: ChunkMeta, text: string) => codeLines(meta, text).map((line) => line.line);

describe('code lines of a chunk', () => {
  const body = 'def run(x):\n    total = x + 1\n    return total';

  it("numbers a function's lines from its first line, read after read", () => {
    const meta = chunkMeta({ id: 'a.py::None::run::function', startLine: 10, endLine: 12 });
    const first = codeLines(meta, body);
    assert.deepEqual(
      first.map(({ line, text, index }) => [line, text, index]),
      [
        [10, 'def run(x):', 0],
        [11, '    total = x + 1', 1],
        [12, '    return total', 2],
      ],
    );
    assert.deepEqual(codeLines({ ...meta }, body), first);
  });

  it('gives a second chunk holding the same text the lines of its own place', () => {
    const here = chunkMeta({ id: 'a.py::None::run::function', startLine: 10, endLine: 12 });
    const there = chunkMeta({ id: 'b.py::None::run::function', startLine: 40, endLine: 42 });
    assert.deepEqual(numbers(here, body), [10, 11, 12]);
    assert.deepEqual(numbers(there, body), [40, 41, 42]);
    assert.deepEqual(numbers(here, body), [10, 11, 12]);
  });

  it("lays a class's own code over its segments, whichever segments the chunk has now", () => {
    const text = 'class Pool:\n    size = 10\n    timeout = 5';
    const before = chunkMeta({ id: 'p.py::Pool::None::class', level: 'class', segments: [[3, 5]] });
    const after = {
      ...before,
      segments: [
        [3, 3],
        [8, 9],
      ] as [number, number][],
    };
    assert.deepEqual(numbers(before, text), [3, 4, 5]);
    assert.deepEqual(numbers(after, text), [3, 8, 9]);
    assert.deepEqual(codeLines({ ...before, segments: null }, text), []);
  });
});
