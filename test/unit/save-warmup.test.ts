import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { logHub, type LogEvent } from '../../src/engine/log/logger';
import { MemorySink } from '../../src/engine/log/sinks';
import { unwrap } from '../../src/engine/util/result';
import { openEngine, Scratch } from '../helpers/workspace';

describe('opening an index readies the first save', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  /** Resolves with the first event named `name` logged from now on that `wanted` accepts. */
  function nextEvent(name: string, wanted: (event: LogEvent) => boolean): Promise<LogEvent> {
    return new Promise((resolve) => {
      const sink = new MemorySink('debug');
      sink.write = (event) => {
        if (event.event !== name || !wanted(event)) return;
        subscription.dispose();
        resolve(event);
      };
      const subscription = logHub.addSink(sink);
    });
  }

  it('loads the grammars of the languages the index holds, after opening', async () => {
    const root = scratch.tree({
      'app/main.py': 'def main():\n    return 1\n',
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

    // (the first engine's warm-up, of an empty index, may still report: it names no language)
    const warmed = nextEvent('save_path_warmed', (event) => !!(event.languages as string[]).length);
    const engine = await openEngine(scratch, root, { storeDir });
    try {
      const event = await warmed;
      assert.deepEqual([...(event.languages as string[])].sort(), ['python', 'typescript']);
      // the save after it still indexes the change
      writeFileSync(path.join(root, 'app/main.py'), 'def main_saved():\n    return 2\n');
      unwrap(await engine.updateFiles(['app/main.py']));
      const found = unwrap(await engine.search({ query: 'main_saved' }));
      assert.ok(found.spans.some((span) => span.path === 'app/main.py'));
    } finally {
      engine.dispose();
    }
  });
});
