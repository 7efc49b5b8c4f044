import * as assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  factHash,
  readSavedCalls,
  writeSavedCalls,
  type SavedCalls,
} from '../../../src/engine/graph/saved-calls';
import type { Engine } from '../../../src/engine/engine';
import { SAVED_CALLS_FILE } from '../../../src/engine/store/store';
import { unwrap } from '../../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { openEngine, Scratch } from '../../helpers/workspace';

const KEY = '{"generation":3}';

function someCalls(): SavedCalls {
  return {
    hashes: Float64Array.from(['a.py::f', 'b.py::g', 'b.py::h'], factHash),
    outgoingSizes: Int32Array.from([0, 4, 2]),
    outgoing: Int32Array.from([0, 9, 2, 17, 0, 8]),
    incomingSizes: Int32Array.from([4, 0, 2]),
    incoming: Int32Array.from([1, 9, 2, 8, 1, 17]),
  };
}

const plain = (calls: SavedCalls) => Object.entries(calls).map(([name, list]) => [name, [...list]]);

describe('saved calls: the file', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('gives back what was written under its key, nothing under another, and no file as nothing', async () => {
    for (const key of [KEY, 'é', '{"a key of seven!"}']) {
      const file = path.join(scratch.folder(), SAVED_CALLS_FILE);
      await writeSavedCalls(file, key, someCalls());
      assert.deepEqual(plain(unwrap(await readSavedCalls(file, key))!), plain(someCalls()));
      assert.equal(unwrap(await readSavedCalls(file, `${key} `)), null);
    }
    assert.equal(unwrap(await readSavedCalls(path.join(scratch.folder(), 'none.bin'), KEY)), null);
  });

  it('damaged anywhere, or cut short, is an error saying so', async () => {
    const file = path.join(scratch.folder(), SAVED_CALLS_FILE);
    await writeSavedCalls(file, KEY, someCalls());
    const bytes = readFileSync(file);
    for (const at of [0, 30, bytes.length - 9, bytes.length - 1]) {
      const damaged = Buffer.from(bytes);
      damaged[at] = damaged[at]! ^ 0x10;
      writeFileSync(file, damaged);
      const read = await readSavedCalls(file, KEY);
      assert.equal(read.ok ? 'read' : read.error.code, 'index_corrupt', `byte ${at}`);
    }
    writeFileSync(file, bytes.subarray(0, bytes.length - 12));
    const cut = await readSavedCalls(file, KEY);
    assert.equal(cut.ok ? 'read' : cut.error.code, 'index_corrupt');
  });
});

describe("saved calls: the engine's openings", () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  const files = {
    'shop/db.py':
      'def reset_connections():\n    return 0\n\n\ndef open_db():\n    return reset_connections()\n',
    'shop/jobs.py':
      'from shop.db import reset_connections\n\n\ndef nightly():\n    reset_connections()\n    return 1\n',
  };
  const target = 'shop/db.py::reset_connections';
  const callerIds = (engine: Engine) =>
    engine.graph
      .callers(target)
      .map((call) => call.callerId)
      .sort();

  it('take the calls saved after the index changed, resolve afresh when they are damaged, and see every change', async () => {
    const root = scratch.tree(files);
    const storeDir = path.join(scratch.folder('oracle-store-'), 'store');
    const open = async () => {
      const opening = await captureLogs(() => openEngine(scratch, root, { storeDir }));
      const taken = eventsNamed(opening.events, 'resolved_calls_taken').length === 1;
      assert.equal(eventsNamed(opening.events, 'calls_resolved').length, taken ? 0 : 1);
      return { engine: opening.result, taken, events: opening.events };
    };

    const first = await open();
    assert.equal(first.taken, false);
    unwrap(await first.engine.index());
    const saving = await captureLogs(() => first.engine.saveForNextOpening());
    const saved = eventsNamed(saving.events, 'resolved_calls_saved');
    assert.equal(saved.length, 1);
    // a pipeline of its own: not the trace of the index run that asked for it
    assert.match(String(saved[0]!.trace_id), /^[0-9a-f]{12}$/);
    assert.equal(saved[0]!.calls, 2);
    const file = path.join(storeDir, SAVED_CALLS_FILE);
    assert.ok(existsSync(file));
    assert.deepEqual(callerIds(first.engine), ['shop/db.py::open_db', 'shop/jobs.py::nightly']);
    first.engine.dispose();

    const second = await open();
    assert.equal(second.taken, true);
    assert.deepEqual(callerIds(second.engine), ['shop/db.py::open_db', 'shop/jobs.py::nightly']);
    // nothing changed since: nothing is written
    const idle = await captureLogs(() => second.engine.saveForNextOpening());
    assert.equal(eventsNamed(idle.events, 'resolved_calls_saved').length, 0);
    writeFileSync(
      path.join(root, 'shop/report.py'),
      'from shop.db import reset_connections\n\n\ndef report():\n    return reset_connections()\n',
    );
    unwrap(await second.engine.updateFiles(['shop/report.py']));
    const resaving = await captureLogs(() => second.engine.saveForNextOpening());
    assert.equal(eventsNamed(resaving.events, 'resolved_calls_saved').length, 1);
    second.engine.dispose();

    const third = await open();
    assert.equal(third.taken, true);
    assert.deepEqual(callerIds(third.engine), [
      'shop/db.py::open_db',
      'shop/jobs.py::nightly',
      'shop/report.py::report',
    ]);
    third.engine.dispose();

    const bytes = readFileSync(file);
    bytes[40] = bytes[40]! ^ 0x01;
    writeFileSync(file, bytes);
    const fourth = await open();
    assert.equal(fourth.taken, false);
    assert.equal(eventsNamed(fourth.events, 'resolved_calls_not_read').length, 1);
    assert.deepEqual(callerIds(fourth.engine), [
      'shop/db.py::open_db',
      'shop/jobs.py::nightly',
      'shop/report.py::report',
    ]);
    // resolved afresh at the opening, they are saved again
    const repaired = await captureLogs(() => fourth.engine.saveForNextOpening());
    assert.equal(eventsNamed(repaired.events, 'resolved_calls_saved').length, 1);
    fourth.engine.dispose();
  });
});
