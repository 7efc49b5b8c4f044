import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { CodeGraph } from '../../../src/engine/graph/code-graph';
import type { CodeFact, ImportBinding, LanguageId } from '../../../src/engine/model';
import { factOf } from '../../helpers/chunks';

/**
 * The graph keeps a fact's path and language in a record its file's facts share, and its lists
 * in one record (shared by the facts that have none). Whatever it was given, a fact must read
 * back field for field as given, after opening and after every save.
 */

/** Every field of a fact as plain data, getters read. */
function fields(fact: CodeFact): Record<string, unknown> {
  return {
    id: fact.id,
    path: fact.path,
    language: fact.language,
    qualifiedName: fact.qualifiedName,
    name: fact.name,
    kind: fact.kind,
    className: fact.className,
    parent: fact.parent,
    startLine: fact.startLine,
    endLine: fact.endLine,
    signature: fact.signature,
    docstring: fact.docstring,
    calls: [...fact.calls],
    raises: [...fact.raises],
    errorStrings: [...fact.errorStrings],
    mutates: [...fact.mutates],
    imports: [...fact.imports],
    bases: [...fact.bases],
    chunkId: fact.chunkId,
  };
}

const LANGUAGES: readonly [string, LanguageId][] = [
  ['a.py', 'python'],
  ['b.ts', 'typescript'],
  ['pkg/c.go', 'go'],
];

const listArbitrary = fc.array(fc.constantFrom('ValueError', 'self.x', 'count', 'Base'), {
  maxLength: 2,
});
const importArbitrary: fc.Arbitrary<ImportBinding> = fc.record({
  local: fc.constantFrom('os', 'g'),
  module: fc.constantFrom('os', '.b'),
  imported: fc.constantFrom(null, 'g'),
  kind: fc.constantFrom('module' as const, 'named' as const),
  line: fc.integer({ min: 1, max: 9 }),
});

/** One file's facts as a save gives them: any mix of lists, empty or not. */
const fileArbitrary = fc
  .record({
    file: fc.integer({ min: 0, max: LANGUAGES.length - 1 }),
    functions: fc.array(
      fc.record({
        name: fc.constantFrom('f', 'g', 'h'),
        docstring: fc.option(fc.constantFrom('Does f.', 'Runs.'), { nil: null }),
        raises: listArbitrary,
        errorStrings: listArbitrary,
        mutates: listArbitrary,
        bases: listArbitrary,
        imports: fc.array(importArbitrary, { maxLength: 2 }),
        calls: fc.array(fc.constantFrom('f', 'g', 'h'), { maxLength: 3 }),
      }),
      { maxLength: 4 },
    ),
  })
  .map(({ file, functions }) => {
    const [path, language] = LANGUAGES[file]!;
    const seen = new Map<string, number>();
    const facts = functions.map(({ name, calls, ...lists }, index) => {
      const turn = (seen.get(name) ?? 0) + 1;
      seen.set(name, turn);
      return factOf({
        id: turn > 1 ? `${path}::${name}#${turn}` : `${path}::${name}`,
        path,
        language,
        qualifiedName: name,
        name,
        startLine: index * 10 + 1,
        endLine: index * 10 + 5,
        calls: calls.map((called, line) => ({ name: called, receiver: null, line: line + 1 })),
        ...lists,
      });
    });
    return { path, facts };
  });

describe('stored facts', () => {
  it('read back every field they were given, after opening and after each save', () => {
    fc.assert(
      fc.property(fc.array(fileArbitrary, { minLength: 1, maxLength: 8 }), (saves) => {
        const graph = new CodeGraph('');
        const current = new Map<string, readonly CodeFact[]>();
        for (const { path, facts } of saves) {
          graph.update([path], facts);
          current.set(path, facts);
          for (const given of [...current.values()].flat())
            assert.deepEqual(fields(graph.fact(given.id)!), fields(given), given.id);
          assert.equal(graph.size, [...current.values()].flat().length);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('keep their own path, language and lists once their file is saved again', () => {
    const graph = new CodeGraph('');
    const before = factOf({ id: 'a.py::f', raises: ['ValueError'], mutates: ['self.x'] });
    graph.update([], [before]);
    const held = graph.fact('a.py::f')!;
    const after = factOf({ id: 'a.py::f', raises: [], docstring: 'Changed.' });
    graph.update(['a.py'], [after]);
    assert.deepEqual(fields(graph.fact('a.py::f')!), fields(after));
    assert.deepEqual(held.raises, ['ValueError']);
    assert.deepEqual(held.mutates, ['self.x']);
    assert.equal(held.path, 'a.py');
    assert.equal(held.language, 'python');
    assert.equal(held.docstring, null);
  });
});
