import * as assert from 'node:assert/strict';
import { benchNativeParse, spreadPick } from '../../bench/native-parse';

describe('bench: native parse', () => {
  it('samples evenly across a sorted list, never more than asked, from the first item', () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    assert.deepEqual(spreadPick(items, 4), [0, 250, 500, 750]);
    assert.deepEqual(spreadPick(items.slice(0, 3), 10), [0, 1, 2]);
    const picked = spreadPick(items, 333);
    assert.equal(picked.length, 333);
    assert.equal(new Set(picked).size, 333);
  });

  it('refuses to run without the folder holding the native binding', async () => {
    await assert.rejects(benchNativeParse('scale-1k', []), /--native-dir/);
  });
});
