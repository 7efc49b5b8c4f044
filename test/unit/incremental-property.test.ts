import { strict as assert } from 'node:assert';
import { appendFileSync, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { unwrap } from '../../src/engine/util/result';
import type { Engine } from '../../src/engine/engine';
import { freshSnapshot, storeSnapshot } from '../helpers/snapshot';
import { openEngine, Scratch } from '../helpers/workspace';

/**
 * Random sequences of saves, new files, deletions and renames, each applied as the editor applies
 * it (one update per step, or several files in one update): the index then equals a fresh index
 * of the final tree, whether its writes went in one batch or in many small ones.
 */
type Edit =
  | { readonly kind: 'append'; readonly file: number; readonly name: number }
  | { readonly kind: 'create'; readonly folder: number; readonly name: number }
  | { readonly kind: 'delete'; readonly file: number }
  | {
      readonly kind: 'rename';
      readonly file: number;
      readonly folder: number;
      readonly name: number;
    };

const FOLDERS = ['shop', 'shop/extra', 'tools'];

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('append'), file: fc.nat(), name: fc.nat(50) }),
  fc.record({ kind: fc.constant('create'), folder: fc.nat(FOLDERS.length - 1), name: fc.nat(50) }),
  fc.record({ kind: fc.constant('delete'), file: fc.nat() }),
  fc.record({
    kind: fc.constant('rename'),
    file: fc.nat(),
    folder: fc.nat(FOLDERS.length - 1),
    name: fc.nat(50),
  }),
) as fc.Arbitrary<Edit>;

function module(name: number): string {
  return [
    'from shop.db import reset_connections',
    '',
    '',
    `class Helper${name}:`,
    `    """Keeps the state of helper ${name}."""`,
    '',
    '    def run(self, value):',
    `        if value is None:`,
    `            raise ValueError("helper ${name} needs a value")`,
    '        reset_connections()',
    '        return value',
    '',
    '',
    `def make_helper${name}():`,
    `    return Helper${name}().run(${name})`,
    '',
  ].join('\n');
}

/** Applies one edit to the tree and to the index; returns nothing when it does not apply. */
async function apply(engine: Engine, root: string, files: string[], step: Edit): Promise<void> {
  const pick = (index: number) => files[index % files.length];
  switch (step.kind) {
    case 'append': {
      const file = pick(step.file);
      if (!file) return;
      appendFileSync(
        path.join(root, file),
        `\n\ndef added${step.name}(x):\n    return make_thing(x, ${step.name})\n`,
      );
      unwrap(await engine.updateFiles([file]));
      return;
    }
    case 'create': {
      const file = `${FOLDERS[step.folder]}/made${step.name}.py`;
      mkdirSync(path.join(root, FOLDERS[step.folder]!), { recursive: true });
      writeFileSync(path.join(root, file), module(step.name));
      if (!files.includes(file)) files.push(file);
      unwrap(await engine.updateFiles([file]));
      return;
    }
    case 'delete': {
      const file = pick(step.file);
      if (!file) return;
      rmSync(path.join(root, file));
      files.splice(files.indexOf(file), 1);
      unwrap(await engine.removeFiles([file]));
      return;
    }
    case 'rename': {
      const file = pick(step.file);
      const target = `${FOLDERS[step.folder]}/moved${step.name}.py`;
      if (!file || existsSync(path.join(root, target))) return;
      mkdirSync(path.join(root, FOLDERS[step.folder]!), { recursive: true });
      renameSync(path.join(root, file), path.join(root, target));
      files.splice(files.indexOf(file), 1, target);
      unwrap(await engine.renameFile(file, target));
    }
  }
}

describe('incremental indexing, random edits', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('equals a fresh index after any sequence of edits, in one batch or many', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(edit, { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        async (edits, small) => {
          const root = scratch.fixture('shop-py');
          // small batches make every file its own write, as a large run's batches are
          const options = small ? { batchChunks: 1 } : {};
          const engine = await openEngine(scratch, root, options);
          try {
            unwrap(await engine.index());
            const files = [
              'shop/api.py',
              'shop/cycle_a.py',
              'shop/cycle_b.py',
              'shop/db.py',
              'shop/errors.py',
              'shop/service.py',
              'shop/util.py',
            ];
            for (const step of edits) await apply(engine, root, files, step);
            // and a change of several files in one update, as a branch switch makes
            const together = files.slice(0, 3);
            for (const file of together)
              appendFileSync(path.join(root, file), '\n\ndef together():\n    return 1\n');
            unwrap(await engine.updateFiles(together));
            assert.deepEqual(
              await storeSnapshot(engine),
              await freshSnapshot(scratch, root, options),
            );
          } finally {
            engine.dispose();
          }
        },
      ),
      { numRuns: 12 },
    );
  });
});
