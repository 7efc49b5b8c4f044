import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { CodeGraph } from '../../../src/engine/graph/code-graph';
import type { CodeFact } from '../../../src/engine/model';
import { factOf } from '../../helpers/chunks';

/**
 * A graph of functions `f0`…, each calling the functions `calls[i]` names, in that order, and
 * naming those `references[i]` names as values (which are not calls).
 */
function graphOf(
  calls: readonly (readonly number[])[],
  references: readonly (readonly number[])[] = [],
): CodeGraph {
  const graph = new CodeGraph('root');
  graph.update(
    [],
    calls.map((targets, i) =>
      factOf({
        id: `a.py::f${i}`,
        qualifiedName: `f${i}`,
        name: `f${i}`,
        startLine: i * 3 + 1,
        endLine: i * 3 + 2,
        calls: [
          ...targets.map((target) => ({ name: `f${target}`, receiver: null, line: i * 3 + 2 })),
          ...(references[i] ?? []).map((target) => ({
            name: `f${target}`,
            receiver: null,
            line: i * 3 + 2,
            kind: 'reference' as const,
          })),
        ],
      }),
    ),
  );
  return graph;
}

/** The functions each function reaches by one call or more, from the calls alone. */
function reachable(calls: readonly (readonly number[])[]): Set<number>[] {
  return calls.map((_, from) => {
    const seen = new Set<number>();
    const next = [...calls[from]!];
    while (next.length) {
      const at = next.pop()!;
      if (seen.has(at)) continue;
      seen.add(at);
      next.push(...calls[at]!);
    }
    return seen;
  });
}

const names = (cycle: readonly CodeFact[]) => cycle.map((fact) => fact.name);

describe('call cycles', () => {
  it('are the groups of two or more functions that each reach all the others by calls', () => {
    const targets = (size: number) =>
      fc.array(fc.array(fc.integer({ min: 0, max: size - 1 }), { maxLength: 3 }), {
        minLength: size,
        maxLength: size,
      });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }).chain((size) => fc.tuple(targets(size), targets(size))),
        ([calls, references]) => {
          const reach = reachable(calls);
          const expected = calls
            .map((_, i) =>
              calls
                .map((__, j) => j)
                .filter((j) => j === i || (reach[i]!.has(j) && reach[j]!.has(i))),
            )
            .filter((group, i) => group.length > 1 && group[0] === i)
            .map((group) => group.map((i) => `f${i}`))
            .sort();
          const graph = graphOf(calls, references);
          const found = graph
            .callCycles(graph.allFacts())
            .map((cycle) => names(cycle).sort((a, b) => Number(a.slice(1)) - Number(b.slice(1))))
            .sort();
          assert.deepEqual(found, expected);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('finds a cycle through twenty thousand functions, in call order, without overflowing the stack', () => {
    const length = 20_000;
    const calls = Array.from({ length }, (_, i) => [(i + 1) % length]);
    const graph = graphOf(calls);
    const [cycle, ...others] = graph.callCycles(graph.allFacts());
    assert.equal(others.length, 0);
    assert.deepEqual(
      names(cycle!),
      calls.map((_, i) => `f${i}`),
    );
  });
});
