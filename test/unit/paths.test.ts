import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { confineToRoot, isInside } from '../../src/engine/util/paths';

/** The one rule for "inside the workspace", which every path a user or a model gives goes through. */
describe('workspace paths', () => {
  const root = path.resolve('/work/space');

  it('takes the root and what is below it as inside, a file named like `..notes` included', () => {
    for (const inside of ['', 'a.py', 'src/a.py', '..notes.py', 'src/..hidden'])
      assert.ok(isInside(root, path.join(root, inside)), inside);
  });

  it('takes parents, siblings and other drives as outside', () => {
    for (const outside of [
      path.dirname(root),
      path.join(root, '..', 'other'),
      path.resolve('/elsewhere/a.py'),
    ])
      assert.ok(!isInside(root, outside), outside);
  });

  it('confines a requested path to the root, or refuses it', () => {
    assert.equal(confineToRoot(root, 'src/a.py'), path.join(root, 'src/a.py'));
    assert.equal(confineToRoot(root, '..notes.py'), path.join(root, '..notes.py'));
    assert.equal(confineToRoot(root, '../other/a.py'), null);
    assert.equal(confineToRoot(root, path.resolve('/elsewhere/a.py')), null);
  });
});
