import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { IntLists } from '../../../src/engine/graph/int-lists';

describe('int lists', () => {
  it('gives back the list each slot was given, through replacements, clears and trims', () => {
    const operation = fc.record({
      kind: fc.constantFrom('set', 'set', 'clear', 'trim'),
      slot: fc.integer({ min: 0, max: 300 }),
      values: fc.array(fc.integer({ min: -5, max: 1_000_000 }), { maxLength: 90, size: 'max' }),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 120, size: 'max' }), (operations) => {
        const lists = new IntLists();
        const reference = new Map<number, number[]>();
        for (const { kind, slot, values } of operations) {
          if (kind === 'set') {
            lists.set(slot, values);
            if (values.length) reference.set(slot, values);
            else reference.delete(slot);
          } else if (kind === 'clear') {
            lists.clear(slot);
            reference.delete(slot);
          } else lists.trim();
          for (let check = 0; check <= 300; check++) {
            assert.deepEqual([...lists.get(check)], reference.get(check) ?? []);
            assert.equal(lists.has(check), reference.has(check));
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('takes small updates after a large one into spare room, not a copy of the arena each', () => {
    const lists = new IntLists();
    const slots = 10_000;
    // opening a store: everything at once, into an arena of the exact size
    lists.reserve(slots * 12, 1);
    for (let slot = 0; slot < slots; slot++) lists.set(slot, Array(12).fill(slot));
    lists.trim();
    const arenas = new Set<ArrayBufferLike>();
    const opened = lists.get(0).buffer;
    for (let save = 0; save < 200; save++) {
      // a save: room reserved for what it may write, then a few lists rewritten a little shorter
      lists.reserve(5 * 12);
      for (let file = 0; file < 5; file++)
        lists.set((save * 7 + file) % slots, Array(11).fill(save));
      lists.trim();
      arenas.add(lists.get(0).buffer);
      if (save === 0) assert.equal(lists.get(0).buffer, opened, 'the first save copied the arena');
    }
    assert.ok(arenas.size <= 3, `the arena was copied into ${arenas.size} new ones in 200 saves`);
    for (let file = 0; file < 5; file++)
      assert.deepEqual([...lists.get(199 * 7 + file)], Array(11).fill(199));
  });

  it('copies the arena at most once in an update, when saves abandon as much as they add', () => {
    const lists = new IntLists();
    const slots = 1000;
    lists.reserve(slots * 10, 1);
    for (let slot = 0; slot < slots; slot++) lists.set(slot, Array(10).fill(slot));
    lists.trim();
    for (let save = 0; save < 1000; save++) {
      const before = lists.get(0).buffer;
      lists.reserve(20 * 10);
      const reserved = lists.get(0).buffer;
      // a save: twenty lists replaced by lists of the same length
      for (let file = 0; file < 20; file++)
        lists.set(1 + ((save * 20 + file) % (slots - 1)), Array(10).fill(save));
      lists.trim();
      const after = lists.get(0).buffer;
      assert.ok(before === reserved || reserved === after, `save ${save} copied the arena twice`);
    }
    assert.deepEqual([...lists.get(0)], Array(10).fill(0));
    assert.deepEqual([...lists.get(1 + ((999 * 20 + 19) % (slots - 1)))], Array(10).fill(999));
  });

  it('rewrites a list no longer than before in its own room, so such saves never copy the arena', () => {
    const lists = new IntLists();
    const reference = new Map<number, number[]>();
    const set = (slot: number, values: number[]) => {
      lists.set(slot, values);
      reference.set(slot, values);
    };
    lists.reserve(1000 * 10, 1);
    for (let slot = 0; slot < 1000; slot++) set(slot, Array(10).fill(slot));
    lists.trim();
    const opened = lists.get(0).buffer;
    for (let save = 0; save < 1000; save++) {
      // a save rewrites the lists of the functions its file calls: as long as before, or shorter
      const rewritten = Array.from({ length: 20 }, (_, i) => (save * 20 + i) % 1000);
      const lengths = rewritten.map((slot) => Math.max(4, lists.sizeOf(slot) - (slot % 3 ? 0 : 2)));
      const room = rewritten.reduce((sum, slot, i) => sum + lists.roomFor(slot, lengths[i]!), 0);
      assert.equal(room, 0);
      lists.reserve(room);
      rewritten.forEach((slot, i) => set(slot, Array(lengths[i]!).fill(save)));
      lists.trim();
    }
    assert.equal(lists.get(0).buffer, opened, 'a save that lengthened no list copied the arena');
    // a longer list takes room at the end, and the room it held is let go of
    const longer = Array(lists.sizeOf(1) + 1).fill(-1);
    assert.equal(lists.roomFor(1, longer.length), longer.length);
    const live = lists.size;
    set(1, longer);
    assert.equal(lists.size, live + 1);
    for (const [slot, values] of reference) assert.deepEqual([...lists.get(slot)], values);
  });

  it('packs the arena again once a large update has removed much of it', () => {
    const lists = new IntLists();
    for (let slot = 0; slot < 1000; slot++) lists.set(slot, Array(10).fill(slot));
    for (let slot = 0; slot < 800; slot++) lists.clear(slot);
    const before = lists.get(900).buffer;
    lists.trim();
    assert.notEqual(lists.get(900).buffer, before);
    assert.equal(lists.get(900).buffer.byteLength, Math.ceil(200 * 10 * (1 + 1 / 16)) * 4);
    assert.deepEqual([...lists.get(900)], Array(10).fill(900));
  });
});
