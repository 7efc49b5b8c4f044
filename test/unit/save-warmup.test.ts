import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { unwrap } from '../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { openEngine, Scratch } from '../helpers/workspace';

describe('opening an index readies the first save', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('runs a small file of each indexed language through the file task once the engine idles', async () => {
    const root = scratch.tree({
      'app/main.py': 'def main():\n    return 1\n',
      'app/util.py': 'def util():\n    return 2\n',
      'web/page.ts': 'export function page(): number {\n  return 1;\n}\n',
      'notes/readme.txt': 'not code\n',
    });
    const first = await openEngine(scratch, root);
    const storeDir = first.storeDir;
    try {
      unwrap(await first.index());
    } finally {
      first.dispose();
    }

    const { events, result: searchedAt } = await captureLogs(async () => {
      const engine = await openEngine(scratch, root, { storeDir });
      try {
        // a question right after opening: the warm-up waits until the engine idles after it
        unwrap(await engine.search({ query: 'main' }));
        const searched = Date.now();
        await engine.whenWarm();
        // the save after it still indexes the change
        writeFileSync(path.join(root, 'app/main.py'), 'def main_saved():\n    return 2\n');
        unwrap(await engine.updateFiles(['app/main.py']));
        const found = unwrap(await engine.search({ query: 'main_saved' }));
        assert.ok(found.spans.some((span) => span.path === 'app/main.py'));
        return searched;
      } finally {
        engine.dispose();
      }
    });
    const [warmed] = eventsNamed(events, 'save_path_warmed');
    // the languages with most files first
    assert.deepEqual(warmed!.languages, ['python', 'typescript']);
    assert.ok(Date.parse(warmed!.time as string) >= searchedAt, 'not before the question ended');
    assert.notEqual(warmed!.trace_id, eventsNamed(events, 'indexing_started')[0]?.trace_id);
  });
});
