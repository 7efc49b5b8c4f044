import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { ModuleMap } from '../../../src/engine/graph/modules';
import type { ModuleSystem } from '../../../src/engine/lang/spec';
import type { LanguageId } from '../../../src/engine/model';

const FILES: readonly [string, LanguageId][] = [
  ['pkg/mod.py', 'python'],
  ['pkg/__init__.py', 'python'],
  // the same dotted name as pkg/__init__.py: the one added last is the module
  ['pkg.py', 'python'],
  ['pkg/mod.pyi', 'python'],
  ['other/pkg/mod.py', 'python'],
  ['net/http/server.go', 'go'],
  ['net/http/client.go', 'go'],
  ['vendor/http/client.go', 'go'],
  ['src/com/acme/Widget.java', 'java'],
  ['lib/com/acme/Widget.java', 'java'],
  ['web/util.ts', 'typescript'],
  ['web/util/index.ts', 'typescript'],
];

const LOOKUPS: readonly [string, ModuleSystem, string][] = [
  ['main.py', 'python', 'pkg.mod'],
  ['main.py', 'python', 'mod'],
  ['main.py', 'python', 'pkg'],
  ['pkg/mod.py', 'python', '.'],
  ['main.go', 'go', 'net/http'],
  ['main.go', 'go', 'http'],
  ['Main.java', 'java', 'com.acme.Widget'],
  ['Main.java', 'java', 'Widget'],
  ['web/page.ts', 'ecmascript', './util'],
];

type Step = { kind: 'add' | 'remove'; file: number };

/** Every lookup's answer (resolved again after each change: the map's cache must not hide one). */
function answers(map: ModuleMap): string[][] {
  return LOOKUPS.map(([from, system, specifier]) => map.resolve(from, system, specifier));
}

describe('module map', () => {
  it('resolves after any adds and removals as a map given only the files left, in the order they were last added', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            kind: fc.constantFrom<Step['kind']>('add', 'remove'),
            file: fc.nat({ max: FILES.length - 1 }),
          }),
          { maxLength: 40 },
        ),
        (steps) => {
          const map = new ModuleMap('root');
          const live = new Map<string, LanguageId>();
          for (const step of steps) {
            const [path, language] = FILES[step.file]!;
            // the graph adds a file only when it holds none of its facts: a save removes it first
            map.remove(path);
            live.delete(path);
            if (step.kind === 'add') {
              map.add(path, language);
              live.set(path, language);
            }
            const fresh = new ModuleMap('root');
            for (const [file, fileLanguage] of live) fresh.add(file, fileLanguage);
            assert.deepEqual(answers(map), answers(fresh));
            for (const [file] of FILES) assert.equal(map.has(file), live.has(file));
          }
        },
      ),
    );
  });
});
