import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { collectGarbage, exposedCollector } from '../../../src/engine/util/collect-garbage';

const MODULE = path.resolve(__dirname, '../../../src/engine/util/collect-garbage.ts');

/** Runs `body` in a Node process with (or without) --expose-gc, returning what it prints as JSON. */
function inProcess(exposed: boolean, body: string): unknown {
  const flags = [...(exposed ? ['--expose-gc'] : []), '--import', 'tsx'];
  const script = `const { collectGarbage } = require(${JSON.stringify(MODULE)});\n${body}`;
  const printed = execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' });
  return JSON.parse(printed) as unknown;
}

/** Garbage of about 100 MB of objects, made and dropped, then a collection reported as JSON. */
const DROP_THEN_COLLECT = `
let kept = [];
for (let i = 0; i < 1_000_000; i++) kept.push({ at: i, text: 'item ' + i });
kept = null;
process.stdout.write(JSON.stringify(collectGarbage()));
`;

describe('collecting garbage on demand', function () {
  this.timeout(30_000);

  it('frees the dropped objects of a process started with --expose-gc, and says how much', () => {
    const collection = inProcess(true, DROP_THEN_COLLECT) as {
      durationMs: number;
      heapBeforeBytes: number;
      heapAfterBytes: number;
    };
    assert.ok(collection.durationMs >= 0);
    assert.ok(
      collection.heapBeforeBytes - collection.heapAfterBytes > 50 * 2 ** 20,
      JSON.stringify(collection),
    );
  });

  it('does nothing in a process without the collector', () => {
    assert.equal(inProcess(false, DROP_THEN_COLLECT), null);
    assert.equal(collectGarbage(null), null);
  });

  it('finds the collector only where the process exposes it', () => {
    assert.equal(exposedCollector(), typeof globalThis.gc === 'function' ? globalThis.gc : null);
  });

  it('calls the collector it is given once, weighing the heap around it', () => {
    let calls = 0;
    const collection = collectGarbage(() => calls++);
    assert.equal(calls, 1);
    assert.ok(collection && collection.heapBeforeBytes > 0 && collection.heapAfterBytes > 0);
  });
});
