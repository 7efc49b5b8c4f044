import { strict as assert } from 'node:assert';
import type { Engine } from '../../src/engine/engine';
import { callerSummary, resolveSymbol, traceCallers } from '../../src/engine/resolve/symbols';
import { unwrap } from '../../src/engine/util/result';
import { openEngine, Scratch } from '../helpers/workspace';

/**
 * Calls on receivers resolve through what the code states about their type; calls that cannot be
 * resolved but name a definition are kept as possible callers with a reason; functions passed as
 * values are references. Fixture repositories in Python, JavaScript and TypeScript.
 */
describe('callers through typed receivers', () => {
  const scratch = new Scratch();
  const engines: Engine[] = [];
  after(() => {
    engines.forEach((engine) => engine.dispose());
    scratch.cleanup();
  });

  async function indexed(fixture: string): Promise<Engine> {
    const engine = await openEngine(scratch, scratch.fixture(fixture));
    engines.push(engine);
    unwrap(await engine.index());
    return engine;
  }

  function callers(engine: Engine, id: string): string[] {
    assert.ok(engine.graph.fact(id), `fact ${id} exists`);
    return engine.graph
      .callers(id)
      .map((call) => `${engine.graph.fact(call.callerId)!.qualifiedName}@${call.site.line}`)
      .sort();
  }

  function possible(engine: Engine, id: string): { at: string; reason: string }[] {
    return engine.graph.possibleCallers(id).map((call) => ({
      at: `${engine.graph.fact(call.callerId)!.qualifiedName}@${call.site.line}`,
      reason: call.reason,
    }));
  }

  function references(engine: Engine, id: string): string[] {
    return engine.graph
      .references(id)
      .map((call) => `${engine.graph.fact(call.callerId)!.qualifiedName}@${call.site.line}`)
      .sort();
  }

  describe('Python', () => {
    let engine: Engine;
    before(async () => {
      engine = await indexed('receivers-py');
    });

    it('resolves a parameter with a string annotation', () => {
      assert.deepEqual(callers(engine, 'pkg/blueprints.py::Blueprint.register'), [
        'App.register_blueprint@15',
      ]);
    });

    it('resolves a parameter annotated with a class, and one imported only for type checking', () => {
      assert.deepEqual(callers(engine, 'pkg/app.py::App.fetch'), ['wire@34']);
      assert.deepEqual(callers(engine, 'pkg/app.py::App.record'), ['Blueprint.register@11']);
    });

    it('resolves an attribute assigned in the constructor, even for a built-in method name', () => {
      assert.ok(callers(engine, 'pkg/session.py::Session.send').includes('App.fetch@18'));
    });

    it('resolves an attribute a subclass inherits from its base class', () => {
      assert.ok(callers(engine, 'pkg/session.py::Session.send').includes('AdminApp.refresh@42'));
    });

    it('resolves an instance created in scope and a function return type one step deep', () => {
      assert.deepEqual(callers(engine, 'pkg/session.py::Session.close'), ['App.local_instance@22']);
      assert.ok(callers(engine, 'pkg/session.py::Session.send').includes('App.via_factory@26'));
    });

    it('resolves the name an exception handler binds to the one class it catches', () => {
      assert.deepEqual(callers(engine, 'pkg/errors.py::UsageError.show'), [
        'run@18',
        'run_each@34',
      ]);
      assert.deepEqual(callers(engine, 'pkg/errors.py::Panel.show'), []);
      const found = possible(engine, 'pkg/errors.py::UsageError.show');
      assert.deepEqual(
        found.map((entry) => entry.at),
        ['run_all@25', 'run_each@32'],
      );
    });

    it('follows typed attributes of the classes a file defines, two steps deep', () => {
      assert.deepEqual(callers(engine, 'pkg/chain.py::Store.open'), [
        'Service.load@23',
        'lookup@27',
      ]);
      assert.deepEqual(callers(engine, 'pkg/chain.py::Vault.open'), []);
    });

    it('types an instance built through a class-typed attribute or `cls.__new__(cls)`', () => {
      assert.deepEqual(callers(engine, 'pkg/factory.py::Context.enter'), [
        'Command.make_context@20',
      ]);
      assert.deepEqual(callers(engine, 'pkg/factory.py::Lock.enter'), ['Command.make_lock@24']);
      assert.deepEqual(callers(engine, 'pkg/factory.py::Model.prepare'), ['Model.construct@34']);
      assert.deepEqual(callers(engine, 'pkg/factory.py::Draft.prepare'), []);
    });

    it('types a property read by its return annotation', () => {
      assert.deepEqual(callers(engine, 'pkg/factory.py::Query.add'), ['Address.with_param@59']);
      assert.deepEqual(callers(engine, 'pkg/factory.py::Ledger.add'), []);
    });

    it('keeps a call on a receiver of unknown type as possible, with the reason', () => {
      const found = possible(engine, 'pkg/session.py::Session.close');
      assert.equal(found.length, 1);
      assert.equal(found[0]!.at, 'wire@36');
      assert.match(found[0]!.reason, /type of `thing` is not known/);
    });

    it('lists a function passed as an argument or put in a table as a reference, not a call', () => {
      assert.deepEqual(references(engine, 'pkg/app.py::handler'), ['wire@35', 'wire@37']);
      assert.deepEqual(callers(engine, 'pkg/app.py::handler'), []);
    });

    it('shows the same counts on every surface', () => {
      const id = 'pkg/session.py::Session.close';
      const [result] = unwrap(resolveSymbol(engine.graph, id, 'callers'));
      const [tree] = unwrap(traceCallers(engine.graph, id, 2));
      const outline = engine.outline('pkg/session.py').find((entry) => entry.id === id)!;
      const expected = { callers: 1, references: 0, possible: 1 };
      assert.deepEqual(result!.counts, expected);
      assert.deepEqual(tree!.counts, expected);
      assert.deepEqual(
        { callers: outline.callers, references: outline.references, possible: outline.possible },
        expected,
      );
      assert.equal(callerSummary(expected), '1 caller · 1 possible');
      assert.equal(result!.possible!.length, tree!.possible!.length);
    });
  });

  describe('JavaScript', () => {
    let engine: Engine;
    before(async () => {
      engine = await indexed('receivers-js');
    });

    it('resolves `this.name()` between methods assigned onto an exported object', () => {
      assert.deepEqual(callers(engine, 'lib/router.js::proto.process_params'), ['proto.handle@8']);
    });

    it('resolves prototype methods through `new`, whatever the name', () => {
      assert.deepEqual(callers(engine, 'lib/server.js::Server.listen'), ['start@11']);
      assert.deepEqual(callers(engine, 'lib/server.js::Server.bind'), ['Server.listen@6']);
    });

    it('resolves object-literal methods through the object', () => {
      assert.deepEqual(callers(engine, 'lib/router.js::cache.lookup'), ['cache.warm@20']);
    });

    it('lists a listener passed to addEventListener as a reference', () => {
      assert.deepEqual(references(engine, 'lib/main.js::onClick'), ['start@12']);
    });

    it('keeps an untyped receiver calling a method defined twice as possible for both', () => {
      for (const id of ['lib/router.js::proto.close', 'lib/server.js::Server.close']) {
        const found = possible(engine, id);
        assert.deepEqual(
          found.map((entry) => entry.at),
          ['start@13'],
        );
        assert.match(
          found[0]!.reason,
          /type of `other` is not known and `close` is defined 2 times/,
        );
        assert.deepEqual(callers(engine, id), []);
      }
    });
  });

  describe('TypeScript', () => {
    let engine: Engine;
    before(async () => {
      engine = await indexed('receivers-ts');
    });

    const target = 'src/core.ts::Vitest.globTestSpecifications';

    it('resolves this, parameter properties, typed fields, parameters and factory results', () => {
      assert.deepEqual(callers(engine, target), [
        'Pool.collect@8',
        'Runner.collect@20',
        'Vitest.rerun@7',
        'viaFactory@30',
        'viaParameter@25',
      ]);
    });

    it('keeps a receiver typed `any` as possible', () => {
      const found = possible(engine, target);
      assert.deepEqual(
        found.map((entry) => entry.at),
        ['viaUnknown@34'],
      );
      assert.equal(
        callerSummary({ callers: 5, references: 0, possible: found.length }),
        '5 callers · 1 possible',
      );
    });

    it('lists a function in a handler table as a reference', () => {
      assert.deepEqual(references(engine, 'src/pool.ts::viaParameter'), ['<module>@37']);
    });

    it('follows typed attributes of the classes a file defines, two steps deep', () => {
      assert.deepEqual(callers(engine, 'src/chain.ts::Cache.read'), [
        'Service.load@21',
        'lookup@26',
      ]);
      assert.deepEqual(callers(engine, 'src/chain.ts::Journal.read'), []);
    });

    it('binds a call to the same-named function of its own callback', () => {
      const [first, second] = [...engine.graph.allFacts()]
        .filter((fact) => fact.path === 'src/callbacks.test.ts' && fact.name === 'generator')
        .sort((a, b) => a.startLine - b.startLine);
      assert.deepEqual(callers(engine, first!.id), ['<module>@7']);
      assert.deepEqual(callers(engine, second!.id), ['<module>@14']);
    });
  });

  it('never reports none when the name occurs as a call', () => {
    assert.equal(
      callerSummary({ callers: 0, references: 0, possible: 5 }),
      'no resolved callers · 5 possible',
    );
    assert.equal(callerSummary({ callers: 0, references: 0, possible: 0 }), 'no callers found');
  });
});
