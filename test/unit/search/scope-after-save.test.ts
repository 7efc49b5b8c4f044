import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync, mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { unwrap } from '../../../src/engine/util/result';
import { openEngine, Scratch } from '../../helpers/workspace';

/**
 * The folders a question's scope is matched against are kept across saves that leave them as
 * they were (search/pipeline.ts `folders`): a save that adds or removes a folder must still be
 * seen by the next question.
 */
describe('the folder a question names, after saves', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('finds a folder a save created and forgets one whose last file was removed', async () => {
    const root = scratch.tree({
      'src/storage/cache.py': 'def cache_get(key):\n    return key\n',
      'src/api/routes.py': 'def route():\n    return 1\n',
    });
    const engine = await openEngine(scratch, root);
    const question = 'How does caching work in the billing module?';
    const scopeOf = async () => unwrap(await engine.search({ query: question })).metadata.scope;
    try {
      unwrap(await engine.index());
      assert.equal(await scopeOf(), null);

      // a save of a file in a folder the index holds: the folders are kept as they were
      writeFileSync(path.join(root, 'src/api/routes.py'), 'def route():\n    return 2\n');
      unwrap(await engine.updateFiles(['src/api/routes.py']));
      assert.equal(await scopeOf(), null);

      mkdirSync(path.join(root, 'src/billing'));
      writeFileSync(path.join(root, 'src/billing/pay.py'), 'def pay(amount):\n    return amount\n');
      unwrap(await engine.updateFiles(['src/billing/pay.py']));
      assert.equal(await scopeOf(), 'src/billing');

      rmSync(path.join(root, 'src/billing'), { recursive: true });
      unwrap(await engine.removeFiles(['src/billing/pay.py']));
      assert.equal(await scopeOf(), null);
    } finally {
      engine.dispose();
    }
  });
});
