import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { rankWithEvidence } from '../../../src/engine/search/pipeline';
import type { RankedHits } from '../../../src/engine/search/retrievers';
import type { ChunkMeta } from '../../../src/engine/store/tables';
import { chunkMeta } from '../../helpers/chunks';

const IDS = Array.from({ length: 16 }, (_, i) => `c${i}`);

function meta(id: string, i: number): ChunkMeta {
  return chunkMeta({
    id,
    level: i % 3 === 0 ? 'file' : 'function',
    filePath: `src/f${i % 4}.py`,
    directoryPath: 'src',
    className: i % 5 === 0 ? 'K' : null,
    functionName: i % 3 === 0 ? null : `f${i}`,
    endLine: 9,
  });
}

const hit = fc.record(
  {
    chunkId: fc.constantFrom(...IDS),
    score: fc.double({ min: 0, max: 1, noNaN: true }),
    evidence: fc.constantFrom(
      'matches a, b',
      'matches c',
      'similar in meaning (0.50)',
      'similar in meaning (0.40)',
      'defines K.f',
      'raises E',
      'calls g',
    ),
    lines: fc.array(fc.integer({ min: 1, max: 9 }), { maxLength: 3 }),
    message: fc.record({
      text: fc.constantFrom('boom', 'bad'),
      line: fc.integer({ min: 1, max: 9 }),
    }),
  },
  { requiredKeys: ['chunkId', 'score', 'evidence'] },
);

describe('ranked chunks with their evidence', () => {
  it('are, for the order cut first, what gathering every hit and cutting after gives', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            source: fc.constantFrom<RankedHits['source']>('lexical', 'semantic', 'symbol', 'graph'),
            hits: fc.array(hit, { maxLength: 12 }),
          }),
          { maxLength: 5 },
        ),
        fc.uniqueArray(fc.constantFrom(...IDS, 'unknown'), { maxLength: 17 }),
        fc.integer({ min: 0, max: 18 }),
        (lists, order, cut) => {
          const catalog = new Map(
            IDS.filter((_, i) => i % 7 !== 6).map((id, i) => [id, meta(id, i)]),
          );
          // the whole order gathers the evidence of every hit it holds, as before the cut came first
          assert.deepEqual(
            rankWithEvidence(order.slice(0, cut), lists, catalog),
            rankWithEvidence(order, lists, catalog).slice(0, cut),
          );
        },
      ),
      { numRuns: 1000 },
    );
  });
});
