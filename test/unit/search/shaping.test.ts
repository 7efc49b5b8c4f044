import { strict as assert } from 'node:assert';
import { shapeSpans, type RankedChunk } from '../../../src/engine/search/shaping';
import type { ChunkMeta } from '../../../src/engine/store/tables';

/** How ranked chunks become spans: what each rank may spend of the reader's budget. */
describe('span shaping', () => {
  // A class whose body is one long table of settings: three far-apart lines name the question's word.
  const body = Array.from({ length: 90 }, (_, i) =>
    [10, 45, 80].includes(i) ? `    retry_limit_${i} = ${i}` : `    setting_${i} = ${i}`,
  );
  const meta: ChunkMeta = {
    id: 'config.py::Settings::None::class',
    level: 'class',
    filePath: 'config.py',
    directoryPath: '.',
    language: 'python',
    className: 'Settings',
    functionName: null,
    startLine: 1,
    endLine: 91,
    parentDirectoryId: null,
    parentFileId: 'config.py::None::None::file',
    parentClassId: null,
    isSummarized: false,
    originalLineCount: null,
    segments: [[2, 91]],
  };
  const filler = (index: number): { chunk: RankedChunk; meta: ChunkMeta; text: string } => {
    const id = `other${index}.py::None::f${index}::function`;
    return {
      chunk: { chunkId: id, score: 1, why: 'filler', lines: [] },
      meta: {
        ...meta,
        id,
        level: 'function',
        filePath: `other${index}.py`,
        className: null,
        functionName: `f${index}`,
        startLine: 1,
        endLine: 2,
        segments: null,
      },
      text: `def f${index}():\n    return ${index}`,
    };
  };
  const shape = (rank: number) => {
    const fillers = Array.from({ length: rank }, (_, i) => filler(i));
    const chunk: RankedChunk = { chunkId: meta.id, score: 0.5, why: 'class Settings', lines: [] };
    const catalog = new Map<string, ChunkMeta>([
      ...fillers.map((entry) => [entry.meta.id, entry.meta] as const),
      [meta.id, meta],
    ]);
    const texts = new Map<string, string>([
      ...fillers.map((entry) => [entry.meta.id, entry.text] as const),
      [meta.id, body.join('\n')],
    ]);
    return shapeSpans(
      [...fillers.map((entry) => entry.chunk), chunk],
      catalog,
      texts,
      new Map([
        ['retry', 3],
        ['limit', 2],
      ]),
      () => undefined,
    ).filter((span) => span.chunkId === meta.id);
  };

  it('cites a leading class by windows around each of its strong lines', () => {
    assert.deepEqual(
      shape(0).map((span) => [span.startLine, span.endLine]),
      [
        [6, 18],
        [41, 53],
        [76, 88],
      ],
    );
  });

  it('cites a class past the leading chunks by one window, leaving the budget to function code', () => {
    assert.deepEqual(
      shape(6).map((span) => [span.startLine, span.endLine]),
      [[6, 18]],
    );
  });
});
