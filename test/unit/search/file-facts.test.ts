import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { fileFactsOf } from '../../../src/engine/search/pipeline';

describe('a file’s facts read once for shaping and ranking', () => {
  it('gives each chunk’s definition line and the definitions’ names and type declarations as reading the facts each time did', () => {
    const fact = fc.record({
      chunkId: fc.option(fc.constantFrom('a', 'b', 'c', 'd'), { nil: null }),
      startLine: fc.integer({ min: 1, max: 500 }),
      kind: fc.constantFrom('function', 'method', 'class', 'interface', 'type', 'module' as const),
      name: fc.constantFrom('test_one', 'TestTwo', 'run', 'main'),
    });
    fc.assert(
      fc.property(fc.array(fact, { maxLength: 30 }), (facts) => {
        const read = fileFactsOf(facts);
        for (const chunkId of ['a', 'b', 'c', 'd', 'e'])
          assert.equal(
            read.definitionLines.get(chunkId),
            facts.find((each) => each.chunkId === chunkId)?.startLine,
          );
        assert.deepEqual(read.definitions, {
          names: facts.filter((each) => each.kind !== 'module').map((each) => each.name),
          typeDeclarations: facts.filter(
            (each) => each.kind === 'interface' || each.kind === 'type',
          ).length,
        });
      }),
      { numRuns: 500 },
    );
  });
});
