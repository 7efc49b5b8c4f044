import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { unwrap } from '../../src/engine/util/result';
import { freshSnapshot, storeSnapshot } from '../helpers/snapshot';
import { openEngine, Scratch } from '../helpers/workspace';

/**
 * Saves that change what other folders' summaries say: a file starts or stops calling the
 * definitions of another folder (whose summary ranks its names by such calls), and files come and
 * go until a folder outgrows one summary and splits by subfolder, or merges again. After any such
 * sequence, the index equals a fresh index of the final tree, directory chunks included.
 */
const FOLDERS = ['app/core', 'app/web', 'lib', 'tools'];
const INITIAL: Record<string, number> = { 'app/core': 9, 'app/web': 9, lib: 5, tools: 3 };

type Edit =
  | { readonly kind: 'calls'; readonly file: number; readonly targets: readonly number[] }
  | { readonly kind: 'create'; readonly folder: number; readonly name: number }
  | { readonly kind: 'delete'; readonly file: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({
    kind: fc.constant('calls' as const),
    file: fc.nat(),
    targets: fc.array(fc.nat(), { maxLength: 4 }),
  }),
  fc.record({
    kind: fc.constant('create' as const),
    folder: fc.nat(FOLDERS.length - 1),
    name: fc.nat(12),
  }),
  fc.record({ kind: fc.constant('delete' as const), file: fc.nat() }),
);

/** A module defining two public functions, calling the given functions of other modules. */
function source(file: string, calls: readonly string[]): string {
  const stem = path.basename(file, '.py');
  const imports = calls.map((target) => {
    const [module, name] = target.split(':') as [string, string];
    return `from ${module.replace(/\//g, '.').replace(/\.py$/, '')} import ${name}`;
  });
  return [
    ...imports,
    '',
    `def ${stem}_run(value):`,
    ...calls.map((target) => `    ${target.split(':')[1]}(value)`),
    '    return value',
    '',
    `def ${stem}_check(value):`,
    '    return value is not None',
    '',
  ].join('\n');
}

describe('incremental indexing, directory summaries', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('equals a fresh index after saves that move calls between folders and files that come and go', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 6 }), async (edits) => {
        const tree: Record<string, string> = {};
        for (const [folder, count] of Object.entries(INITIAL))
          for (let i = 0; i < count; i++) {
            const file = `${folder}/${folder.replace('/', '_')}${i}.py`;
            tree[file] = source(file, []);
          }
        const root = scratch.tree(tree);
        const files = Object.keys(tree);
        const engine = await openEngine(scratch, root);
        try {
          unwrap(await engine.index());
          for (const step of edits) {
            const pick = (index: number) => files[index % files.length];
            if (step.kind === 'calls') {
              const file = pick(step.file);
              if (!file) continue;
              const targets = step.targets
                .map(pick)
                .filter((target): target is string => !!target && target !== file)
                .map((target) => `${target}:${path.basename(target, '.py')}_run`);
              writeFileSync(path.join(root, file), source(file, [...new Set(targets)]));
              unwrap(await engine.updateFiles([file]));
            } else if (step.kind === 'create') {
              const folder = FOLDERS[step.folder]!;
              const file = `${folder}/made${step.name}.py`;
              if (files.includes(file)) continue;
              writeFileSync(path.join(root, file), source(file, []));
              files.push(file);
              unwrap(await engine.updateFiles([file]));
            } else {
              const file = pick(step.file);
              if (!file) continue;
              rmSync(path.join(root, file));
              files.splice(files.indexOf(file), 1);
              unwrap(await engine.removeFiles([file]));
            }
          }
          assert.deepEqual(await storeSnapshot(engine), await freshSnapshot(scratch, root));
        } finally {
          engine.dispose();
        }
      }),
      { numRuns: 15 },
    );
  });
});
