import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { unwrap } from '../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { freshSnapshot, storeSnapshot } from '../helpers/snapshot';
import { openEngine, Scratch } from '../helpers/workspace';

describe('store upkeep after a write', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('keeps the table indexes a first index created: the next save neither rolls back nor rebuilds them', async () => {
    // enough definitions for the facts table to get its B-tree indexes
    const many = Array.from({ length: 21_000 }, (_, i) => `def generated_${i}():\n    pass\n`);
    const root = scratch.tree({
      'gen/many.py': many.join('\n'),
      'app/main.py': 'def main():\n    return 1\n',
    });
    const engine = await openEngine(scratch, root);
    try {
      const cold = await captureLogs(async () => unwrap(await engine.index()));
      assert.equal(eventsNamed(cold.events, 'table_indexes_created').length, 1);

      writeFileSync(path.join(root, 'app/main.py'), 'def main():\n    return 2\n');
      const save = await captureLogs(async () => unwrap(await engine.updateFiles(['app/main.py'])));
      assert.deepEqual(eventsNamed(save.events, 'index_recovered_interrupted_write'), []);
      assert.deepEqual(eventsNamed(save.events, 'table_indexes_created'), []);
      assert.deepEqual(engine.notices, []);

      assert.deepEqual(await storeSnapshot(engine), await freshSnapshot(scratch, root));
    } finally {
      engine.dispose();
    }
  });
});
