import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { unwrap } from '../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../helpers/logs';
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

/** The starting tree: 26 files, so the root is split into the units app, lib and tools. */
function initialTree(): Record<string, string> {
  const tree: Record<string, string> = {};
  for (const [folder, count] of Object.entries(INITIAL))
    for (let i = 0; i < count; i++) {
      const file = `${folder}/${folder.replace('/', '_')}${i}.py`;
      tree[file] = source(file, []);
    }
  return tree;
}

describe('incremental indexing, directory summaries', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('writes a summary again only when its text or place changes', async () => {
    const root = scratch.tree(initialTree());
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      const save = async (file: string, text: string) => {
        writeFileSync(path.join(root, file), text);
        const { events } = await captureLogs(() => engine.updateFiles([file]));
        return eventsNamed(events, 'directories_updated')[0]!;
      };
      // a comment changes no summary: app and the units above are looked at, none written
      const comment = await save(
        'app/core/app_core0.py',
        `${source('app/core/app_core0.py', [])}# note\n`,
      );
      assert.equal(comment.units_written, 0);
      // calling lib's function from app changes what app says the file imports, and what lib
      // says its most used names are
      const call = await save(
        'app/core/app_core0.py',
        source('app/core/app_core0.py', ['lib/lib3.py:lib3_run']),
      );
      assert.equal(call.units_written, 2);
      const lib = unwrap(engine.store.texts.read('lib::None::None::directory'))!;
      assert.match(lib, /Most exported identifiers:\n {2}lib3_run, /);
      assert.deepEqual(await storeSnapshot(engine), await freshSnapshot(scratch, root));
    } finally {
      engine.dispose();
    }
  });

  it('equals a fresh index after saves that move calls between folders and files that come and go', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(edit, { minLength: 1, maxLength: 6 }), async (edits) => {
        const tree = initialTree();
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
