import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { MODULE_CODE_MARKER } from '../../../src/engine/index/chunks';
import type { ChunkLevel } from '../../../src/engine/model';
import { NO_DEFINITIONS, rankFiles } from '../../../src/engine/search/files';
import { citableChunks, shapeSpans, type RankedChunk } from '../../../src/engine/search/shaping';
import type { Span } from '../../../src/engine/search/spans';
import type { ChunkMeta } from '../../../src/engine/store/tables';
import { indexTerms } from '../../../src/engine/text/tokenize';
import { chunkMeta } from '../../helpers/chunks';

/**
 * Contender files (the best chunk of files no ranked chunk brought in) are shaped only when they
 * take a place in the files list. Shaping them all first and ranking after must give the same list.
 */
const WORDS = Array.from({ length: 24 }, (_, i) => `w${i}`);

const lineArbitrary = fc.oneof(
  fc.constantFrom('', '# a note', '// a note', '/* a block', 'end */', '"""doc', 'more"""'),
  fc
    .array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 4 })
    .map((words) => `    x = ${words.join(' + ')}`),
);

const contenderArbitrary = fc.record({
  level: fc.constantFrom<ChunkLevel>('function', 'class', 'file', 'directory'),
  language: fc.constantFrom('python', 'typescript'),
  role: fc.constantFrom('src', 'tests', 'examples'),
  startLine: fc.integer({ min: 1, max: 20 }),
  lines: fc.array(lineArbitrary, { minLength: 0, maxLength: 90 }),
  // cuts, evidence lines and the message's line as percentages of the chunk's length
  segmentCuts: fc.array(fc.integer({ min: 0, max: 99 }), { maxLength: 6 }),
  marker: fc.boolean(),
  evidence: fc.array(fc.integer({ min: -10, max: 110 }), { maxLength: 3 }),
  definitionOffset: fc.option(fc.integer({ min: 0, max: 10 })),
  message: fc.option(fc.integer({ min: -10, max: 110 })),
});

type Drawn = typeof contenderArbitrary extends fc.Arbitrary<infer T> ? T : never;

/** Segments cut from the chunk's lines at the drawn points (every other piece kept). */
function segmentsOf(drawn: Drawn): [number, number][] {
  const cuts = [...new Set(drawn.segmentCuts.map((cut) => lineAt(drawn, cut)))].sort(
    (a, b) => a - b,
  );
  const pieces: [number, number][] = [];
  for (let i = 0; i + 1 < cuts.length; i += 2) pieces.push([cuts[i]!, cuts[i + 1]!]);
  return pieces;
}

/** The line `percent` of the way through the chunk (before or past it outside 0–99). */
function lineAt(drawn: Drawn, percent: number): number {
  return drawn.startLine + Math.floor((percent * drawn.lines.length) / 100);
}

function contender(drawn: Drawn, index: number) {
  const filePath = `${drawn.role}/c${index}.py`;
  const id = `${filePath}::${drawn.level}::${index}`;
  const endLine = drawn.startLine + Math.max(0, drawn.lines.length - 1);
  const segments = drawn.level === 'function' ? null : segmentsOf(drawn);
  const meta = chunkMeta({
    id,
    level: drawn.level,
    filePath: drawn.level === 'directory' ? null : filePath,
    directoryPath: `${drawn.role}/d${index}`,
    language: drawn.language,
    className: drawn.level === 'class' ? 'C' : null,
    functionName: drawn.level === 'function' ? 'f' : null,
    startLine: drawn.startLine,
    endLine,
    segments,
  });
  const body = drawn.lines.join('\n');
  const text =
    drawn.level === 'file'
      ? `summary\n${drawn.marker ? MODULE_CODE_MARKER : 'code:'}\n${body}`
      : body;
  const chunk: RankedChunk = {
    chunkId: id,
    score: 1 / (index + 1),
    why: 'contender',
    lines: drawn.evidence.map((percent) => lineAt(drawn, percent)),
    ...(drawn.message === null
      ? {}
      : { message: { text: 'a message', line: lineAt(drawn, drawn.message) } }),
  };
  const definitionLine =
    drawn.definitionOffset === null ? undefined : drawn.startLine + drawn.definitionOffset;
  return { meta, text, chunk, definitionLine };
}

const listedSpan = (index: number, score: number): Span => ({
  path: `src/listed${index}.py`,
  startLine: 1,
  endLine: 5,
  level: 'function',
  score,
  why: 'ranked',
  chunkId: `listed${index}`,
});

const caseArbitrary = fc.record({
  contenders: fc.array(contenderArbitrary, { maxLength: 12 }),
  listed: fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 5 }),
  // few question words, so many chunks hold none; weights in ratios of two, so a line scoring
  // exactly the strong-term floor is drawn too
  weights: fc.dictionary(fc.constantFrom(...WORDS), fc.constantFrom(1, 2, 4, 8), { maxKeys: 4 }),
  evidence: fc.array(
    fc.array(fc.tuple(fc.integer({ min: 0, max: 16 }), fc.integer({ min: 0, max: 6 })), {
      maxLength: 12,
    }),
    { maxLength: 3 },
  ),
  rolePriors: fc.boolean(),
});

/** A drawn case's contenders as the shaping functions take them. */
function shapingInputs(drawn: { contenders: Drawn[]; weights: Record<string, number> }) {
  const built = drawn.contenders.map(contender);
  return {
    catalog: new Map(built.map((entry) => [entry.meta.id, entry.meta])),
    texts: new Map(built.map((entry) => [entry.meta.id, entry.text])),
    weights: new Map(Object.entries(drawn.weights)),
    definitionLine: (id: string) => built.find((entry) => entry.meta.id === id)?.definitionLine,
    ranked: built.map((entry) => entry.chunk),
  };
}

describe('contender files, shaped only when they take a place', () => {
  it('gives the files list and spans that shaping every contender first gives', () => {
    fc.assert(
      fc.property(caseArbitrary, (drawn) => {
        const { catalog, texts, weights, definitionLine, ranked } = shapingInputs(drawn);
        const spans = drawn.listed.map((rank, i) => listedSpan(i, 1 / rank));
        const paths = [
          ...spans.map((span) => span.path),
          ...[...catalog.values()].map((meta) => meta.filePath ?? meta.directoryPath),
        ];
        // integer scores, so ties between files (broken by their order) are drawn too
        const evidence = drawn.evidence.map(
          (scores) => new Map(scores.map(([at, score]) => [paths[at % paths.length]!, score])),
        );

        const eager = shapeSpans(ranked, catalog, texts, weights, definitionLine);
        const eagerFiles = [...new Set(eager.map((span) => span.path))].map((path) => ({
          path,
          spans: () => eager.filter((span) => span.path === path),
        }));
        const lazy = citableChunks(ranked, catalog, texts, weights, definitionLine);
        let shapedCount = 0;
        const counted = lazy.map((cited) => ({
          path: cited.path,
          spans: () => {
            shapedCount++;
            return cited.spans();
          },
        }));
        const rank = (contenders: readonly { path: string; spans: () => readonly Span[] }[]) =>
          rankFiles(
            spans,
            'how does it work',
            () => NO_DEFINITIONS,
            drawn.rolePriors,
            evidence,
            contenders,
          );

        assert.deepEqual(rank(counted), rank(eagerFiles));
        assert.ok(shapedCount <= new Set(spans.map((span) => span.path)).size);
        assert.deepEqual(
          lazy.map((cited) => cited.path),
          eagerFiles.map((file) => file.path),
        );
        assert.deepEqual(
          lazy.flatMap((cited) => cited.spans()),
          eager,
        );
      }),
      { numRuns: 1000 },
    );
  });
});

/** The reach the pipeline gives a chunk: the summed weight of the question's terms its text holds. */
function reachOf(texts: ReadonlyMap<string, string>, weights: ReadonlyMap<string, number>) {
  return (meta: ChunkMeta) => {
    const held = new Set(indexTerms(texts.get(meta.id) ?? ''));
    let reach = 0;
    for (const [term, weight] of weights) if (held.has(term)) reach += weight;
    return reach;
  };
}

/** Term weights that count how often a line's terms are looked up. */
class CountedWeights extends Map<string, number> {
  lookups = 0;
  override get(term: string): number | undefined {
    this.lookups++;
    return super.get(term);
  }
}

describe("shaping with each chunk's reach known", () => {
  it('gives the spans and citable chunks that scoring every line gives', () => {
    fc.assert(
      fc.property(caseArbitrary, (drawn) => {
        const { catalog, texts, weights, definitionLine, ranked } = shapingInputs(drawn);
        const reach = reachOf(texts, weights);
        assert.deepEqual(
          shapeSpans(ranked, catalog, texts, weights, definitionLine, reach),
          shapeSpans(ranked, catalog, texts, weights, definitionLine),
        );
        const spansOf = (cited: ReturnType<typeof citableChunks>) =>
          cited.map((chunk) => ({ path: chunk.path, spans: chunk.spans() }));
        assert.deepEqual(
          spansOf(citableChunks(ranked, catalog, texts, weights, definitionLine, reach)),
          spansOf(citableChunks(ranked, catalog, texts, weights, definitionLine)),
        );
      }),
      { numRuns: 1000 },
    );
  });

  it('scores no line of a chunk that holds none of the question words', () => {
    const meta = chunkMeta({
      id: 'src/a.py::f',
      filePath: 'src/a.py',
      directoryPath: 'src',
      functionName: 'f',
      endLine: 3,
    });
    const texts = new Map([[meta.id, 'def f():\n    x = w1 + w2\n    return x']]);
    const ranked: RankedChunk[] = [{ chunkId: meta.id, score: 1, why: 'ranked', lines: [2] }];
    const shape = (weights: CountedWeights) =>
      shapeSpans(
        ranked,
        new Map([[meta.id, meta]]),
        texts,
        weights,
        () => undefined,
        () => 0,
      );
    const absent = new CountedWeights([['w7', 1]]);
    assert.deepEqual(
      shape(absent).map((span) => [span.startLine, span.endLine]),
      [[1, 3]],
    );
    assert.equal(absent.lookups, 0);
  });
});
