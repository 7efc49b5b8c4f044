import { strict as assert } from 'node:assert';
import type { Engine } from '../../src/engine/engine';
import type { CodeFact } from '../../src/engine/model';
import { unwrap } from '../../src/engine/util/result';
import { openEngine, Scratch } from '../helpers/workspace';

/** Facts and the calls graph on small Python, JavaScript and TypeScript repositories. */
describe('code facts', () => {
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

  function fact(engine: Engine, id: string): CodeFact {
    const found = engine.graph.fact(id);
    assert.ok(found, `fact ${id} exists`);
    return found;
  }

  function callers(engine: Engine, id: string): string[] {
    return engine.graph
      .callers(id)
      .map((call) => `${engine.graph.fact(call.callerId)!.qualifiedName}@${call.site.line}`)
      .sort();
  }

  describe('Python', () => {
    let engine: Engine;
    before(async () => {
      engine = await indexed('shop-py');
    });

    it('records qualified names, kinds, lines, signatures and docstrings', () => {
      const connect = fact(engine, 'shop/db.py::Database.connect');
      assert.equal(connect.kind, 'method');
      assert.equal(connect.className, 'Database');
      assert.equal(connect.signature, 'def connect(self)');
      assert.equal(connect.docstring, 'Open the connection, refusing writes on read-only files.');
      assert.deepEqual([connect.startLine, connect.endLine], [20, 26]);
      assert.equal(fact(engine, 'shop/db.py::Database').kind, 'class');
      assert.equal(fact(engine, 'shop/errors.py::DatabaseError').bases[0], 'ShopError');
    });

    it('extracts raises and the error strings of raises and error-logging calls', () => {
      const connect = fact(engine, 'shop/db.py::Database.connect');
      assert.deepEqual(connect.raises, ['DatabaseError']);
      assert.deepEqual([...connect.errorStrings].sort(), [
        'attempt to write a readonly database',
        'refusing to open %s for writing',
      ]);
      assert.deepEqual(fact(engine, 'shop/service.py::OrderService._validate').raises, [
        'ValueError',
      ]);
    });

    it('extracts mutations of self attributes and of module-level state', () => {
      assert.deepEqual([...fact(engine, 'shop/db.py::Database.__init__').mutates].sort(), [
        'self.handle',
        'self.path',
        'self.readonly',
      ]);
      assert.deepEqual(fact(engine, 'shop/db.py::reset_connections').mutates, ['_connections']);
      assert.deepEqual(fact(engine, 'shop/db.py::get_connection').mutates, ['_connections']);
      assert.deepEqual(fact(engine, 'shop/util.py::log_event').mutates, ['events']);
      assert.deepEqual(
        [...fact(engine, 'shop/service.py::OrderService.create_order').mutates],
        ['self.created'],
      );
    });

    it('resolves calls through imports, self and modules, and inverts them into calledBy', () => {
      const calls = fact(engine, 'shop/service.py::OrderService.create_order').calls.map(
        (call) => `${call.receiver ?? ''}.${call.name}`,
      );
      assert.ok(
        calls.includes('self._validate') &&
          calls.includes('.get_connection') &&
          calls.includes('.log_event'),
      );
      assert.deepEqual(callers(engine, 'shop/db.py::get_connection'), [
        'OrderService.create_order@16',
      ]);
      assert.deepEqual(callers(engine, 'shop/service.py::OrderService._validate'), [
        'OrderService.create_order@15',
      ]);
      assert.deepEqual(callers(engine, 'shop/db.py::reset_connections'), [
        'OrderService.regenerate@28',
      ]);
      assert.deepEqual(callers(engine, 'shop/api.py::authenticate'), ['handle_login@16']);
      assert.deepEqual(
        callers(engine, 'shop/cycle_b.py::pong'),
        ['ping@7'],
        'module-attribute call cycle_b.pong()',
      );
      assert.deepEqual(callers(engine, 'shop/util.py::log_event').length, 4);
    });

    it('keeps module-level imports and calls on the module fact', () => {
      const module = fact(engine, 'shop/db.py::<module>');
      assert.equal(module.kind, 'module');
      assert.deepEqual(
        module.imports.map((binding) => binding.local),
        ['logging', 'sqlite3', 'DatabaseError'],
      );
      assert.ok(
        module.calls.some((call) => call.name === 'getLogger' && call.receiver === 'logging'),
      );
    });
  });

  describe('JavaScript', () => {
    let engine: Engine;
    before(async () => {
      engine = await indexed('shop-js');
    });

    it('names prototype and owner-assigned functions after their owner', () => {
      assert.equal(fact(engine, 'lib/cart.js::Cart.add').kind, 'method');
      assert.equal(fact(engine, 'lib/app.js::app.lazyrouter').className, 'app');
      assert.equal(
        fact(engine, 'lib/pricing.js::priceOf').className,
        null,
        'exports.f is a module function',
      );
      assert.equal(
        fact(engine, 'lib/cart.js::Cart.add').docstring,
        'Add an item, checking its price first.',
      );
    });

    it('extracts throws, console.error messages and mutations', () => {
      const add = fact(engine, 'lib/cart.js::Cart.add');
      assert.deepEqual(add.raises, ['CartError']);
      assert.deepEqual(add.errorStrings, ['cannot add an empty item']);
      assert.deepEqual(add.mutates, ['this.items']);
      const check = fact(engine, 'lib/cart.js::Cart.checkPrice');
      assert.deepEqual(check.raises, ['TypeError']);
      assert.deepEqual([...check.errorStrings].sort(), [
        'negative price for',
        'price must not be negative',
      ]);
      assert.deepEqual(fact(engine, 'lib/cart.js::clearCarts').mutates, ['carts']);
      assert.deepEqual(fact(engine, 'lib/cart.js::cartFor').mutates, ['carts']);
    });

    it('resolves this-calls, require()d modules and constructors', () => {
      assert.deepEqual(callers(engine, 'lib/app.js::app.lazyrouter'), [
        'app.checkout@24',
        'app.route@13',
      ]);
      assert.deepEqual(callers(engine, 'lib/pricing.js::priceOf'), ['Cart.checkPrice@29']);
      assert.deepEqual(callers(engine, 'lib/cart.js::cartFor'), ['app.checkout@25']);
      assert.deepEqual(callers(engine, 'lib/cart.js::Cart'), ['cartFor@40']);
      assert.deepEqual(callers(engine, 'lib/cart.js::Cart.checkPrice'), ['Cart.add@23']);
    });
  });

  describe('TypeScript', () => {
    let engine: Engine;
    before(async () => {
      engine = await indexed('shop-ts');
    });

    it('extracts classes, inherited this-calls and throws', () => {
      const throwIfClosed = fact(engine, 'src/internal/Channel.ts::Channel.throwIfClosed');
      assert.deepEqual(throwIfClosed.raises, ['ChannelClosedError']);
      assert.deepEqual(callers(engine, throwIfClosed.id), [
        'BufferedChannel.latest@13',
        'Channel.listen@23',
        'Channel.send@18',
      ]);
      assert.deepEqual(fact(engine, 'src/internal/BufferedChannel.ts::BufferedChannel').bases, [
        'Channel',
      ]);
      // `result = new Channel()`: a receiver of known type resolves whatever the method's name.
      assert.deepEqual(callers(engine, 'src/internal/Channel.ts::Channel.send'), [
        'BufferedChannel.send@9',
        'filter@17',
        'map@10',
      ]);
      assert.deepEqual([...fact(engine, 'src/internal/Channel.ts::Channel.close').mutates].sort(), [
        'this.closed',
        'this.listeners',
      ]);
    });

    it('follows re-exports from an index file and attributes calls in closures', () => {
      assert.deepEqual(callers(engine, 'src/internal/operators.ts::map'), ['doubled@5']);
      assert.deepEqual(callers(engine, 'src/internal/BufferedChannel.ts::BufferedChannel'), [
        'doubled@4',
      ]);
      const filter = fact(engine, 'src/internal/operators.ts::filter');
      assert.equal(
        filter.signature,
        'const filter = <T>(source: Channel<T>, keep: (value: T) => boolean): Channel<T> =>',
      );
      assert.equal(
        fact(engine, 'src/internal/operators.ts::map').docstring,
        'A channel of the projected values of `source`.',
      );
    });
  });
});
