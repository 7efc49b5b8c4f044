import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Engine } from '../../../src/engine/engine';
import { CHUNK_LEVELS } from '../../../src/engine/model';
import { readVectorRows, writeVectorRows } from '../../../src/engine/search/vector-rows-file';
import { savedVectorsOf, VectorScan } from '../../../src/engine/search/vectors';
import { SAVED_VECTORS_FILE } from '../../../src/engine/store/store';
import { unwrap } from '../../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { openEngine, POTION_MODEL, Scratch } from '../../helpers/workspace';

describe('saved vectors: the file', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('gives back the rows written under its key, nothing under another key or dimension, and an error when damaged', async () => {
    const file = path.join(scratch.folder(), 'vectors.bin');
    assert.deepEqual(unwrap(await readVectorRows(file, 'k', 3)), null);
    const rows = {
      ids: ['a.py::None::f::function', 'dir/é.py::C::None::class', ''],
      codes: Int8Array.from([1, -2, 3, 127, -127, 0, 5, 6, 7]),
    };
    await writeVectorRows(file, 'k', 3, rows);
    const read = unwrap(await readVectorRows(file, 'k', 3));
    assert.deepEqual(
      [0, 1, 2].map((row) => read?.idAt(row)),
      rows.ids,
    );
    assert.equal(read?.count, 3);
    assert.deepEqual([...read!.codes], [...rows.codes]);
    assert.equal(unwrap(await readVectorRows(file, 'other', 3)), null);
    assert.equal(unwrap(await readVectorRows(file, 'k', 4)), null);
    const bytes = readFileSync(file);
    bytes[bytes.length - 8] = bytes[bytes.length - 8]! ^ 0x01;
    writeFileSync(file, bytes);
    const damaged = await readVectorRows(file, 'k', 3);
    assert.equal(damaged.ok, false);
  });
});

describe("saved vectors: the engine's openings", () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  const files = {
    'shop/db.py':
      'def reset_connections():\n    """Close every pooled connection."""\n    return 0\n\n\ndef open_db():\n    return reset_connections()\n',
    'shop/jobs.py':
      'from shop.db import reset_connections\n\n\ndef nightly():\n    """Run the nightly clean-up."""\n    reset_connections()\n    return 1\n',
    'shop/web/routes.py': 'def login(user):\n    """Check the password."""\n    return user\n',
  };

  /** Every chunk ranked against a few chunks' vectors (as the table holds them), as `scan` holds them. */
  const ranked = async (engine: Engine, scan: VectorScan) => {
    const queries: Float32Array[] = [];
    for await (const batch of engine.store.tables.vectors())
      for (let row = 0; row < Math.min(3, batch.ids.length); row++)
        queries.push(batch.values.slice(row * 64, (row + 1) * 64));
    const out = [];
    for (const query of queries) out.push(await scan.nearest(query, 100, CHUNK_LEVELS));
    return out;
  };
  /** The same from the table, read afresh, and from the rows saved for the store's commit. */
  const fromTable = (engine: Engine) =>
    ranked(engine, new VectorScan(engine.store.tables, engine.store.catalog));
  const fromSaved = async (engine: Engine) => {
    const scan = new VectorScan(engine.store.tables, engine.store.catalog, {
      saved: savedVectorsOf(engine.store),
    });
    const { result, events } = await captureLogs(() => ranked(engine, scan));
    assert.deepEqual(
      eventsNamed(events, 'vectors_loaded').map((event) => event.saved),
      [true],
    );
    return result;
  };

  it('take back the vectors saved for the commit, and read the table when they are of another or damaged', async () => {
    const root = scratch.tree(files);
    const storeDir = path.join(scratch.folder('oracle-store-'), 'store');
    const file = path.join(storeDir, SAVED_VECTORS_FILE);
    const options = { storeDir, model: { kind: 'directory', path: POTION_MODEL } as const };
    const open = async () => {
      const opening = await captureLogs(async () => {
        const engine = await openEngine(scratch, root, options);
        // the first question waits for the vectors read at the opening
        unwrap(await engine.search({ query: 'connections' }));
        return engine;
      });
      const loaded = eventsNamed(opening.events, 'vectors_loaded');
      return { engine: opening.result, loaded, events: opening.events };
    };
    const save = async (engine: Engine) =>
      eventsNamed((await captureLogs(() => engine.saveForNextOpening())).events, 'vectors_saved');

    const first = await open();
    unwrap(await first.engine.index());
    unwrap(await first.engine.search({ query: 'connections' }));
    const saved = await save(first.engine);
    assert.equal(saved.length, 1);
    assert.equal(saved[0]!.chunks, first.engine.store.catalog.size);
    assert.ok(existsSync(file));
    first.engine.dispose();

    const second = await open();
    assert.deepEqual(
      second.loaded.map((event) => event.saved),
      [true],
    );
    assert.deepEqual(await fromSaved(second.engine), await fromTable(second.engine));
    // nothing changed since: nothing is written
    assert.equal((await save(second.engine)).length, 0);
    writeFileSync(
      path.join(root, 'shop/report.py'),
      'def report():\n    """Print sales."""\n    return 2\n',
    );
    unwrap(await second.engine.updateFiles(['shop/report.py']));
    unwrap(await second.engine.search({ query: 'sales report' }));
    assert.equal((await save(second.engine)).length, 1);
    second.engine.dispose();

    const third = await open();
    assert.deepEqual(
      third.loaded.map((event) => event.saved),
      [true],
    );
    assert.deepEqual(await fromSaved(third.engine), await fromTable(third.engine));
    third.engine.dispose();

    // rows of another commit are not taken
    const stale = readFileSync(file);
    writeFileSync(path.join(root, 'shop/report.py'), 'def report():\n    return 3\n');
    const fourth = await open();
    unwrap(await fourth.engine.updateFiles(['shop/report.py']));
    fourth.engine.dispose();
    writeFileSync(file, stale);
    const fifth = await open();
    assert.deepEqual(
      fifth.loaded.map((event) => event.saved),
      [undefined],
    );
    fifth.engine.dispose();

    // a damaged file: the table is read, with a warning, and the rows are saved again
    const bytes = readFileSync(file);
    bytes[100] = bytes[100]! ^ 0x01;
    writeFileSync(file, bytes);
    const sixth = await open();
    assert.deepEqual(
      sixth.loaded.map((event) => event.saved),
      [undefined],
    );
    assert.equal(eventsNamed(sixth.events, 'saved_vectors_not_read').length, 1);
    assert.equal((await save(sixth.engine)).length, 1);
    sixth.engine.dispose();
  });
});
