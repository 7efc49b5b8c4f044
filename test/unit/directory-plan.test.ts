import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { DirectoryPlan, planDirectoryUnits } from '../../src/engine/index/directories';

/**
 * The directory plan kept up to date file by file must always be the plan of its files made from
 * scratch, and say exactly what changed: which units came and went, and which kept units now sit
 * under another unit. Folders hold between none and ~30 files, so units appear, split by subfolder
 * and merge again as files come and go.
 */
const FOLDERS = ['.', 'a', 'a/x', 'a/x/deep', 'a/y', 'b', 'b/z', 'c/only/child'];
/** b/z never holds more than two files: too few for a unit, so its files belong to b's or none. */
const file = fc
  .record({ folder: fc.constantFrom(...FOLDERS), name: fc.nat(29) })
  .map(({ folder, name }) => ({ folder, name: folder === 'b/z' ? name % 2 : name }))
  .map(({ folder, name }) => (folder === '.' ? `f${name}.py` : `${folder}/f${name}.py`));
const files = fc.uniqueArray(file, { maxLength: 120 });
const step = fc.record({ add: fc.uniqueArray(file, { maxLength: 25 }), remove: fc.nat(25) });

const shape = (units: readonly { directory: string; files: readonly string[] }[]) =>
  units.map((unit) => ({ directory: unit.directory, files: [...unit.files] }));

describe('directory plan, kept up to date', () => {
  it('equals a plan made from scratch after any additions and removals, and reports its changes', () => {
    fc.assert(
      fc.property(files, fc.array(step, { minLength: 1, maxLength: 6 }), (initial, steps) => {
        const plan = new DirectoryPlan(initial);
        let current = new Set(initial);
        for (const { add, remove } of steps) {
          const removed = [...current].slice(0, remove);
          const added = add.filter((name) => !current.has(name) || removed.includes(name));
          const before = new DirectoryPlan(current);
          const next = new Set([...current].filter((name) => !removed.includes(name)));
          for (const name of added) next.add(name);
          const change = plan.update(
            added.filter((name) => !removed.includes(name)),
            removed.filter((name) => !added.includes(name)),
          );
          current = next;
          const fresh = planDirectoryUnits(current);
          assert.deepEqual(shape(plan.units()), shape(fresh));

          // the old units, less those removed, plus those added, are the new units
          const gone = new Set(change.removed.map((unit) => unit.directory));
          const kept = before.units().filter((unit) => !gone.has(unit.directory));
          const patched = [...shape(kept), ...shape(change.added)].sort((x, y) =>
            x.directory.localeCompare(y.directory),
          );
          assert.deepEqual(
            patched,
            shape(fresh).sort((x, y) => x.directory.localeCompare(y.directory)),
          );
          // every kept unit whose enclosing unit changed is reported, and only those
          const addedAt = new Set(change.added.map((unit) => unit.directory));
          const moved = fresh
            .filter((unit) => !addedAt.has(unit.directory))
            .filter(
              (unit) => before.enclosingUnit(unit.directory) !== plan.enclosingUnit(unit.directory),
            )
            .map((unit) => unit.directory)
            .sort();
          assert.deepEqual(change.reparented.map((unit) => unit.directory).sort(), moved);
          for (const name of current) {
            const covering = fresh.find((unit) => unit.files.includes(name));
            assert.equal(plan.unitOf(name), covering?.directory ?? null, name);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
