import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  callSites,
  CodeGraph,
  stringHash,
  type GraphChange,
  type ResolvedCall,
} from '../../../src/engine/graph/code-graph';
import {
  MODULE_QUALIFIED_NAME,
  type CallSite,
  type CodeFact,
  type ImportBinding,
} from '../../../src/engine/model';
import { factOf } from '../../helpers/chunks';

/**
 * The graph keeps resolved calls by fact slot, reuses the slots of removed facts and keeps the
 * slot (and the callers) of a definition that comes back unchanged in shape. Whatever sequence
 * of saves, removals and renames it goes through, it must answer what a graph built at once
 * from the final facts answers.
 */

const PATHS = ['a.py', 'b.py', 'c.py', 'pkg/d.py'];
const NAMES = ['f', 'g', 'h', 'run_job'];
const METHODS = ['save', 'load'];
/** A name only an import gives (`from .a import f as aliased`): its calls reach another name. */
const ALIAS = 'aliased';

interface DrawnFunction {
  readonly name: string;
  readonly inClass: boolean;
  readonly calls: readonly DrawnCall[];
  readonly raises: readonly string[];
}

interface DrawnCall {
  readonly name: string;
  readonly receiver: 'none' | 'self' | 'Model' | 'obj';
  readonly reference: boolean;
}

interface DrawnFile {
  readonly path: string;
  readonly imports: readonly {
    readonly from: string;
    readonly name: string;
    readonly local: string;
  }[];
  readonly functions: readonly DrawnFunction[];
  readonly moduleCalls: readonly DrawnCall[];
}

const callArbitrary: fc.Arbitrary<DrawnCall> = fc.record({
  name: fc.constantFrom(...NAMES, ...METHODS, ALIAS),
  receiver: fc.constantFrom('none', 'self', 'Model', 'obj'),
  reference: fc.boolean(),
});

const fileArbitrary: fc.Arbitrary<DrawnFile> = fc.record({
  path: fc.constantFrom(...PATHS),
  imports: fc.array(
    fc.record({
      from: fc.constantFrom('.a', '.b', '.c', 'pkg.d', 'os'),
      name: fc.constantFrom(...NAMES),
      local: fc.constantFrom(...NAMES, ALIAS),
    }),
    { maxLength: 3 },
  ),
  functions: fc.array(
    fc.record({
      name: fc.constantFrom(...NAMES, ...METHODS),
      inClass: fc.boolean(),
      calls: fc.array(callArbitrary, { maxLength: 5 }),
      raises: fc.uniqueArray(fc.constantFrom('ValueError', 'KeyError'), { maxLength: 2 }),
    }),
    { maxLength: 5 },
  ),
  moduleCalls: fc.array(callArbitrary, { maxLength: 3 }),
});

function sites(calls: readonly DrawnCall[]): CallSite[] {
  return calls.map((call, index) => ({
    name: call.name,
    receiver: call.receiver === 'none' ? null : call.receiver,
    line: index + 2,
    ...(call.reference && call.receiver === 'none' ? { kind: 'reference' as const } : {}),
  }));
}

function baseFact(path: string, qualifiedName: string, name: string): CodeFact {
  const id = `${path}::${qualifiedName}`;
  return factOf({ id, path, qualifiedName, name, endLine: 10, signature: `def ${name}()` });
}

/** A drawn file as the facts extraction would give: a module fact, a class, its methods, functions. */
function factsOf(file: DrawnFile): CodeFact[] {
  const imports: ImportBinding[] = file.imports.map((binding, index) => ({
    local: binding.local,
    module: binding.from,
    imported: binding.name,
    kind: 'named',
    line: index + 1,
  }));
  const module: CodeFact = {
    ...baseFact(file.path, MODULE_QUALIFIED_NAME, file.path),
    kind: 'module',
    calls: sites(file.moduleCalls),
    imports,
  };
  const facts = new Map<string, CodeFact>([[module.id, module]]);
  if (file.functions.some((drawn) => drawn.inClass)) {
    const model = { ...baseFact(file.path, 'Model', 'Model'), kind: 'class' as const };
    facts.set(model.id, model);
  }
  for (const drawn of file.functions) {
    const qualifiedName = drawn.inClass ? `Model.${drawn.name}` : drawn.name;
    const fact: CodeFact = {
      ...baseFact(file.path, qualifiedName, drawn.name),
      kind: drawn.inClass ? 'method' : 'function',
      className: drawn.inClass ? 'Model' : null,
      calls: sites(drawn.calls),
      raises: drawn.raises,
    };
    // one definition per id, as extraction numbers repeated ones
    if (!facts.has(fact.id)) facts.set(fact.id, fact);
  }
  return [...facts.values()];
}

type Step =
  | { readonly kind: 'save'; readonly file: DrawnFile }
  | { readonly kind: 'remove'; readonly path: string }
  | { readonly kind: 'rename'; readonly from: string; readonly to: string };

const stepArbitrary: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fileArbitrary.map((file) => ({ kind: 'save' as const, file })) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(...PATHS).map((path) => ({ kind: 'remove' as const, path })),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.constantFrom(...PATHS), fc.constantFrom(...PATHS))
      .map(([from, to]) => ({ kind: 'rename' as const, from, to })),
  },
);

/**
 * Applies a step to the graph and to the record of each file's current facts; `given` is how the
 * step's facts reach the graph (as they are, unless told).
 */
function apply(
  graph: CodeGraph,
  files: Map<string, CodeFact[]>,
  step: Step,
  given: (facts: CodeFact[]) => readonly CodeFact[] = (facts) => facts,
): GraphChange {
  if (step.kind === 'save') {
    const facts = factsOf(step.file);
    files.set(step.file.path, facts);
    return graph.update([step.file.path], given(facts));
  } else if (step.kind === 'remove') {
    files.delete(step.path);
    return graph.update([step.path], []);
  } else {
    const moved = (files.get(step.from) ?? []).map((fact) => ({
      ...fact,
      path: step.to,
      id: `${step.to}::${fact.qualifiedName}`,
    }));
    files.delete(step.from);
    files.delete(step.to);
    if (moved.length) files.set(step.to, moved);
    return graph.update([step.from, step.to], given(moved));
  }
}

/** Each definition's incoming calls and references, as caller and line. */
function incoming(graph: CodeGraph): Map<string, string> {
  const out = new Map<string, string>();
  for (const fact of graph.allFacts()) {
    const calls = [...graph.callers(fact.id), ...graph.references(fact.id)];
    out.set(
      fact.id,
      calls
        .map((call) => `${call.callerId}@${call.site.line}`)
        .sort()
        .join(),
    );
  }
  return out;
}

/** The definitions whose incoming calls differ between two states of the graph. */
function changedBetween(before: Map<string, string>, after: Map<string, string>): string[] {
  const ids = new Set([...before.keys(), ...after.keys()]);
  return [...ids].filter((id) => (before.get(id) ?? '') !== (after.get(id) ?? '')).sort();
}

function described(calls: readonly ResolvedCall[]): string[] {
  return calls
    .map(
      (call) => `${call.callerId}>${call.targetId}@${call.site.line}:${call.site.name}:${call.how}`,
    )
    .sort();
}

/** Every question the graph answers about its facts, in a comparable form. */
function answers(graph: CodeGraph): Record<string, unknown> {
  const ids = [...graph.allFacts()].map((fact) => fact.id).sort();
  const out: Record<string, unknown> = { ids, size: graph.size };
  for (const id of ids) {
    out[`callers ${id}`] = described(graph.callers(id));
    out[`references ${id}`] = described(graph.references(id));
    // a caller's calls come in the order of its call sites, however it was reached
    out[`callees ${id}`] = graph.callees(id).map((call) => `${call.targetId}@${call.site.line}`);
    out[`possible ${id}`] = graph
      .possibleCallers(id)
      .map((call) => `${call.callerId}@${call.site.line}:${call.reason}`)
      .sort();
    const fact = graph.fact(id)!;
    out[`fact ${id}`] = fact.startLine;
    // what whole-graph analyses count and follow without building calls agrees with the calls
    assert.equal(graph.callerCount(fact), graph.callers(id).length);
    assert.deepEqual(
      graph.calledFacts(fact).map((target) => target.id),
      graph.callees(id).map((call) => call.targetId),
    );
    assert.equal(
      graph.calledNameCount(fact),
      new Set(callSites(fact).map((call) => call.name)).size,
    );
    out[`named ${id}`] = graph
      .definitionsNamed(fact.name)
      .map((named) => named.id)
      .sort();
  }
  for (const name of [...NAMES, ...METHODS]) {
    out[`calling ${name}`] = graph
      .factsCalling(name)
      .map((fact) => fact.id)
      .sort();
  }
  for (const type of ['ValueError', 'KeyError'])
    out[`raising ${type}`] = graph
      .factsRaising(type)
      .map((fact) => fact.id)
      .sort();
  for (const path of PATHS)
    out[`file ${path}`] = graph
      .factsInFile(path)
      .map((fact) => fact.id)
      .sort();
  return out;
}

describe('code graph: incremental updates', () => {
  it('answers after any saves, removals and renames what a graph built from the final facts answers, and says whose callers changed', () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { minLength: 1, maxLength: 14 }), (steps) => {
        const graph = new CodeGraph('root');
        const files = new Map<string, CodeFact[]>();
        for (const step of steps) {
          const before = incoming(graph);
          const change = apply(graph, files, step);
          assert.deepEqual(
            [...change.changedTargets].sort(),
            changedBetween(before, incoming(graph)),
          );
          const fresh = new CodeGraph('root');
          fresh.update([], [...files.values()].flat());
          assert.deepEqual(answers(graph), answers(fresh));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('counts the callers from outside a file as the callers list does, after any saves', () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { minLength: 1, maxLength: 10 }), (steps) => {
        const graph = new CodeGraph('root');
        const files = new Map<string, CodeFact[]>();
        const earlier: CodeFact[] = [];
        for (const step of steps) {
          earlier.push(...graph.allFacts());
          apply(graph, files, step);
        }
        // a fact the graph held before a save, its slot perhaps another's now, counts as the fact
        // of its id does now
        for (const old of earlier) {
          const now = graph.fact(old.id);
          for (const path of PATHS)
            assert.equal(
              graph.callersOutside(old, path),
              now ? graph.callersOutside(now, path) : 0,
            );
        }
        // the graph's own facts (their slots taken as they are) and the facts as they were given
        // (looked up by id) count the same
        const given = new Map([...files.values()].flat().map((fact) => [fact.id, fact]));
        for (const fact of graph.allFacts())
          for (const path of PATHS) {
            const outside = graph
              .callers(fact.id)
              .filter((call) => graph.fact(call.callerId)!.path !== path).length;
            assert.equal(graph.callersOutside(fact, path), outside, `${fact.id} ${path}`);
            assert.equal(graph.callersOutside(given.get(fact.id)!, path), outside);
          }
      }),
      { numRuns: 200 },
    );
  });

  it("lists definitions, callers, raisers and a file's lookups in the order the facts were (last) added, after any saves", () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { minLength: 1, maxLength: 14 }), (steps) => {
        const graph = new CodeGraph('root');
        const files = new Map<string, CodeFact[]>();
        /** Every fact in the order it was last added: a saved file's facts go to the end. */
        let order: CodeFact[] = [];
        for (const step of steps) {
          const removed =
            step.kind === 'rename'
              ? [step.from, step.to]
              : [step.kind === 'save' ? step.file.path : step.path];
          apply(graph, files, step);
          const added =
            step.kind === 'rename'
              ? (files.get(step.to) ?? [])
              : step.kind === 'save'
                ? files.get(step.file.path)!
                : [];
          order = [...order.filter((fact) => !removed.includes(fact.path)), ...added];
          assertAddedOrder(graph, order);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('takes facts gathered beforehand (as an index run gathers them) as it takes the facts themselves, through any saves', () => {
    fc.assert(
      fc.property(fc.array(stepArbitrary, { minLength: 1, maxLength: 14 }), (steps) => {
        const direct = new CodeGraph('root');
        const gathered = new CodeGraph('root');
        const files = new Map<string, CodeFact[]>();
        const gatheredFiles = new Map<string, CodeFact[]>();
        for (const step of steps) {
          const change = apply(direct, files, step);
          const gatheredChange = apply(gathered, gatheredFiles, step, (facts) => {
            const pending = gathered.pending();
            for (const fact of facts) pending.add(fact);
            const taken = pending.take();
            // what was taken is given up: the next take starts empty
            assert.equal(pending.take().length, 0);
            return taken;
          });
          assert.deepEqual([...gatheredChange.changedTargets], [...change.changedTargets]);
          assert.deepEqual(answers(gathered), answers(direct));
          assert.deepEqual(
            [...gathered.allFacts()].map((fact) => [fact.id, fact.path, fact.calls]),
            [...direct.allFacts()].map((fact) => [fact.id, fact.path, fact.calls]),
          );
        }
      }),
      { numRuns: 200 },
    );
  });

  it('tells apart qualified names of one hash in a file, through saves and removals', () => {
    // two names whose hashes collide share a key: the graph compares the names themselves
    assert.equal(stringHash('f6059'), stringHash('f264602'));
    const graph = new CodeGraph('root');
    const first = baseFact('a.py', 'f6059', 'f6059');
    const second = baseFact('a.py', 'f264602', 'f264602');
    graph.update([], [first, second]);
    assert.equal(graph.factByQualifiedName('a.py', 'f6059')?.id, first.id);
    assert.equal(graph.factByQualifiedName('a.py', 'f264602')?.id, second.id);
    const later = { ...baseFact('a.py', 'f6059', 'f6059'), id: 'a.py::f6059#2', startLine: 20 };
    graph.update(['a.py'], [second, first, later]);
    assert.equal(graph.factByQualifiedName('a.py', 'f6059')?.id, later.id);
    assert.equal(graph.factByQualifiedName('a.py', 'f264602')?.id, second.id);
    graph.update(['a.py'], []);
    assert.equal(graph.factByQualifiedName('a.py', 'f6059'), undefined);
    assert.equal(graph.factByQualifiedName('a.py', 'f264602'), undefined);
  });

  it('keeps the callers of a definition whose file is saved unchanged in shape', () => {
    const graph = new CodeGraph('root');
    const callee = baseFact('a.py', 'target', 'target');
    const caller = {
      ...baseFact('b.py', 'caller', 'caller'),
      calls: [{ name: 'target', receiver: null, line: 3 }],
    };
    graph.update([], [callee, caller]);
    graph.update(['a.py'], [{ ...callee, endLine: 40 }]);
    assert.deepEqual(described(graph.callers(callee.id)), [
      'b.py::caller>a.py::target@3:target:unique',
    ]);
    assert.equal(graph.fact(callee.id)!.endLine, 40);
  });

  it('resolves a call through an aliased import once the module it names is added, and lets it go when removed', () => {
    const graph = new CodeGraph('root');
    const importer: CodeFact = {
      ...baseFact('a.py', MODULE_QUALIFIED_NAME, 'a.py'),
      kind: 'module',
      calls: [{ name: 'h', receiver: null, line: 2 }],
      imports: [{ local: 'h', module: 'pkg.d', imported: 'g', kind: 'named', line: 1 }],
    };
    const target: CodeFact = { ...baseFact('pkg/d.py', 'g', 'g'), kind: 'function' };
    graph.update([], [importer]);
    graph.update(
      ['pkg/d.py'],
      [{ ...baseFact('pkg/d.py', MODULE_QUALIFIED_NAME, 'pkg/d.py'), kind: 'module' }, target],
    );
    assert.deepEqual(described(graph.callers(target.id)), [
      'a.py::<module>>pkg/d.py::g@2:h:import',
    ]);
    graph.update(['pkg/d.py'], []);
    assert.deepEqual(graph.callees(importer.id), []);
  });
});

describe('code graph: saved calls', () => {
  /** Every list of calls in the order the graph holds it (answers() sorts them). */
  const heldLists = (graph: CodeGraph) =>
    [...graph.allFacts()]
      .map((fact) => fact.id)
      .sort()
      .map((id) =>
        [graph.callers(id), graph.references(id), graph.callees(id)].map((calls) =>
          calls.map((call) => `${call.callerId}>${call.targetId}@${call.site.line}:${call.how}`),
        ),
      );

  /**
   * Asserts that `opened` (a graph opened on the facts of `files` with `graph`'s calls) answers as
   * `graph` does and holds its lists in its order, and answers alike after each of `later`.
   */
  function assertOpenedAlike(
    graph: CodeGraph,
    opened: CodeGraph,
    files: Map<string, CodeFact[]>,
    later: readonly Step[],
  ): void {
    assert.deepEqual(answers(opened), answers(graph));
    assert.deepEqual(heldLists(opened), heldLists(graph));
    const openedFiles = new Map(files);
    for (const step of later) {
      apply(graph, files, step);
      apply(opened, openedFiles, step);
      assert.deepEqual(answers(opened), answers(graph));
    }
  }

  it('opened on facts it gathered itself, holds those very facts (their ids as given) and answers what the graph that saved the calls answers, through more saves; facts another graph gathered are copied', () => {
    fc.assert(
      fc.property(
        fc.array(stepArbitrary, { minLength: 1, maxLength: 12 }),
        fc.array(stepArbitrary, { maxLength: 3 }),
        fc.boolean(),
        (steps, later, own) => {
          const graph = new CodeGraph('root');
          const files = new Map<string, CodeFact[]>();
          for (const step of steps) apply(graph, files, step);
          const facts = [...files.values()].flat();
          const opened = new CodeGraph('root');
          // as an opening gathers them: into the graph's own pending facts, or another graph's
          const pending = (own ? opened : new CodeGraph('root')).pending();
          for (const fact of facts) pending.add(fact);
          const gathered = pending.take();
          assert.equal(opened.open(gathered, graph.resolvedCalls()), true);
          const held = facts.map((fact) => opened.fact(fact.id));
          assert.deepEqual(
            held.map((fact, at) => fact === gathered[at]),
            facts.map(() => own),
          );
          assert.deepEqual(
            held.map((fact) => [fact?.id, fact?.calls]),
            facts.map((fact) => [fact.id, fact.calls]),
          );
          assertOpenedAlike(graph, opened, files, later);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('opened on facts it gathered itself, gives each its id as given: repeated names and ids of another form too', () => {
    const callee = baseFact('a.py', 'f', 'f');
    const again = { ...baseFact('a.py', 'f', 'f'), id: 'a.py::f#2', startLine: 20 };
    const other = { ...baseFact('b.py', 'g', 'g'), id: 'an id of its own' };
    const caller = {
      ...baseFact('b.py', 'h', 'h'),
      calls: [{ name: 'f', receiver: null, line: 3 }],
    };
    const facts = [callee, again, other, caller];
    const graph = new CodeGraph('root');
    graph.update([], facts);
    const opened = new CodeGraph('root');
    const pending = opened.pending();
    for (const fact of facts) pending.add(fact);
    const gathered = pending.take();
    assert.equal(opened.open(gathered, graph.resolvedCalls()), true);
    assert.deepEqual(
      gathered.map((fact) => fact.id),
      facts.map((fact) => fact.id),
    );
    assert.deepEqual(
      facts.map((fact, at) => opened.fact(fact.id) === gathered[at]),
      [true, true, true, true],
    );
    assert.deepEqual(answers(opened), answers(graph));
  });

  it('opened with the calls of a graph after any saves, in any order of the facts, answers what that graph answers, and after more saves too', () => {
    fc.assert(
      fc.property(
        fc.array(stepArbitrary, { minLength: 1, maxLength: 12 }),
        fc.array(stepArbitrary, { maxLength: 3 }),
        fc.boolean(),
        (steps, later, reversed) => {
          const graph = new CodeGraph('root');
          const files = new Map<string, CodeFact[]>();
          for (const step of steps) apply(graph, files, step);
          const facts = [...files.values()].flat();
          const opened = new CodeGraph('root');
          assert.equal(
            opened.open(reversed ? facts.reverse() : facts, graph.resolvedCalls()),
            true,
          );
          assertOpenedAlike(graph, opened, files, later);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('are not taken for facts they were not saved for: the calls are resolved afresh', () => {
    const callee = baseFact('a.py', 'target', 'target');
    const other = baseFact('c.py', 'other', 'other');
    const caller = {
      ...baseFact('b.py', 'caller', 'caller'),
      calls: [{ name: 'target', receiver: null, line: 3 }],
    };
    const graph = new CodeGraph('root');
    graph.update([], [callee, caller]);
    const saved = graph.resolvedCalls();
    const cases: [string, readonly CodeFact[]][] = [
      ['a fact more', [callee, caller, other]],
      ['a fact less', [callee]],
      ['another fact instead', [other, caller]],
      ['one id twice', [callee, callee]],
    ];
    for (const [what, facts] of cases) {
      const opened = new CodeGraph('root');
      assert.equal(opened.open(facts, saved), false, what);
      const fresh = new CodeGraph('root');
      fresh.update([], facts);
      assert.deepEqual(answers(opened), answers(fresh), what);
    }
    const outOfRange = { ...saved, outgoing: saved.outgoing.map((value, at) => (at ? value : 9)) };
    assert.equal(new CodeGraph('root').open([callee, caller], outOfRange), false);
    const unpaired = { ...saved, outgoingSizes: saved.outgoingSizes.map((size) => size && 1) };
    assert.equal(new CodeGraph('root').open([callee, caller], unpaired), false);
    // a graph that holds facts, or held some, resolves instead of taking saved calls
    const full = new CodeGraph('root');
    full.update([], [other]);
    const emptied = new CodeGraph('root');
    emptied.update([], [other, callee]);
    emptied.update(['c.py', 'a.py'], []);
    for (const graph of [full, emptied]) {
      assert.equal(graph.open([callee, caller], saved), false);
      assert.deepEqual(described(graph.callers(callee.id)), [
        'b.py::caller>a.py::target@3:target:unique',
      ]);
    }
  });
});

/** What each lookup must give when facts were added in `order`: all matches, or the last one. */
function assertAddedOrder(graph: CodeGraph, order: readonly CodeFact[]): void {
  const ids = (facts: readonly CodeFact[]) => facts.map((fact) => fact.id);
  const definitions = order.filter((fact) => fact.kind !== 'module');
  assert.deepEqual(ids([...graph.allFacts()]), ids(order));
  for (const name of [...NAMES, ...METHODS, 'Model', 'missing']) {
    assert.deepEqual(
      ids(graph.definitionsNamed(name)),
      ids(definitions.filter((fact) => fact.name === name)),
    );
    // the first few a filter takes, looked through only until they are found
    const functions = (fact: CodeFact) => fact.kind === 'function' || fact.kind === 'method';
    for (const limit of [0, 1, 2])
      assert.deepEqual(
        ids(graph.someDefinitionsNamed(name, functions, limit)),
        ids(definitions.filter((fact) => fact.name === name && functions(fact)).slice(0, limit)),
      );
    assert.deepEqual(
      ids(graph.factsCalling(name)),
      ids(order.filter((fact) => fact.calls.some((site) => site.name === name))),
    );
  }
  for (const { qualifiedName } of definitions.filter((fact) => fact.qualifiedName.includes('.')))
    assert.deepEqual(
      ids(graph.definitionsNamed(qualifiedName)),
      ids(
        definitions.filter(
          (fact) =>
            fact.qualifiedName === qualifiedName ||
            fact.qualifiedName.endsWith(`.${qualifiedName}`),
        ),
      ),
    );
  for (const type of ['ValueError', 'KeyError'])
    assert.deepEqual(
      ids(graph.factsRaising(type)),
      ids(order.filter((fact) => fact.raises.includes(type))),
    );
  for (const path of [...PATHS, 'missing.py']) {
    const inFile = order.filter((fact) => fact.path === path);
    assert.deepEqual(ids(graph.factsInFile(path)), ids(inFile));
    const last = (accept: (fact: CodeFact) => boolean) => inFile.filter(accept).pop()?.id;
    for (const name of [...NAMES, ...METHODS, 'Model', MODULE_QUALIFIED_NAME]) {
      assert.equal(
        graph.topLevel(path, name)?.id,
        last((fact) => fact.name === name && fact.kind !== 'module' && fact.className === null),
      );
      assert.equal(
        graph.member(path, 'Model', name)?.id,
        last((fact) => fact.name === name && fact.kind === 'method' && fact.className === 'Model'),
      );
      for (const qualifiedName of [name, `Model.${name}`])
        assert.equal(
          graph.factByQualifiedName(path, qualifiedName)?.id,
          last((fact) => fact.qualifiedName === qualifiedName),
        );
    }
    assert.equal(
      graph.moduleFact(path)?.id,
      last((fact) => fact.kind === 'module'),
    );
  }
}
