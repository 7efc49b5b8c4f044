import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { CodeGraph } from '../../../src/engine/graph/code-graph';
import type { CodeFact } from '../../../src/engine/model';

const TYPES = ['ValueError', 'KeyError', 'errors.New', 'TypeError'];

function fact(path: string, name: string, raises: string[]): CodeFact {
  return {
    id: `${path}::${name}`,
    path,
    language: 'python',
    qualifiedName: name,
    name,
    kind: 'function',
    className: null,
    parent: null,
    startLine: 1,
    endLine: 2,
    signature: `def ${name}()`,
    docstring: null,
    chunkId: `${path}::None::${name}::function`,
    calls: [],
    raises,
    errorStrings: [],
    mutates: [],
    imports: [],
    bases: [],
  };
}

const fileArbitrary = fc.record({
  path: fc.constantFrom('a.py', 'b.py', 'c.py', 'd.py'),
  facts: fc.array(
    fc.record({
      name: fc.constantFrom('f', 'g', 'h', 'k'),
      raises: fc.uniqueArray(fc.constantFrom(...TYPES), { maxLength: 3 }),
    }),
    { maxLength: 4 },
  ),
});

describe('code graph: definitions by the exceptions they raise', () => {
  it('finds what a scan of every fact finds, in the same order, through any updates', () => {
    fc.assert(
      fc.property(fc.array(fileArbitrary, { minLength: 1, maxLength: 12 }), (updates) => {
        const graph = new CodeGraph('root');
        for (const update of updates) {
          const facts = update.facts.map((drawn) => fact(update.path, drawn.name, drawn.raises));
          // a file's facts are replaced whole, as a save does (one fact per name in a file)
          const unique = [...new Map(facts.map((f) => [f.id, f])).values()];
          graph.update([update.path], unique);
          for (const type of [...TYPES, 'Missing'])
            assert.deepEqual(
              graph.factsRaising(type).map((f) => f.id),
              [...graph.allFacts()].filter((f) => f.raises.includes(type)).map((f) => f.id),
            );
        }
      }),
      { numRuns: 200 },
    );
  });
});
