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

  describe('a class cited by its header', () => {
    // a doc comment and the declaration (lines 1-4), then the constructor and a method: nested
    // definitions, outside the class's own segments
    const lines = [
      '/**',
      ' * Makes a client.',
      ' */',
      'class Client {',
      '  constructor(config) {',
      '    this.config = config;',
      '  }',
      '',
      '  request(url) {',
      '    return send(url, this.config);',
      '  }',
      '',
      '  close() {',
      '    this.closed = true;',
      '  }',
      '}',
    ];
    const client: ChunkMeta = {
      ...meta,
      id: 'client.js::Client::None::class',
      filePath: 'client.js',
      language: 'javascript',
      className: 'Client',
      startLine: 1,
      endLine: lines.length,
      segments: [
        [1, 4],
        [16, 16],
      ],
    };
    const cite = (
      question: Map<string, number>,
      classBodies: boolean,
      shown: ChunkMeta = client,
    ): [number, number][] =>
      shapeSpans(
        [{ chunkId: shown.id, score: 1, why: 'class Client', lines: [] }],
        new Map([[shown.id, shown]]),
        new Map([[shown.id, lines.slice(0, shown.endLine).join('\n')]]),
        question,
        () => undefined,
        undefined,
        classBodies,
      ).map((span) => [span.startLine, span.endLine]);

    it('shows the start of its body after the declaration, up to the header allowance', () => {
      // the question's word is in the header: the header segment is the one chosen
      assert.deepEqual(cite(new Map([['client', 1]]), true), [[1, 12]]);
      // no line holds the question's words: the class is cited by its first segment
      assert.deepEqual(cite(new Map([['socket', 1]]), true), [[1, 12]]);
    });

    it('shows its declaration alone with the class-bodies stage switched off', () => {
      assert.deepEqual(cite(new Map([['client', 1]]), false), [[1, 4]]);
    });

    it('ends with the class when the class is shorter than the allowance', () => {
      const short = { ...client, endLine: 7, segments: [[1, 4]] as [number, number][] };
      assert.deepEqual(cite(new Map([['client', 1]]), true, short), [[1, 7]]);
    });
  });
});
