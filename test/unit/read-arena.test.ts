import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { ReadArena } from '../../src/engine/store/snapshot-file';

/** Room handed out by one search must not overlap; the next search reuses it. */
describe('read arena', () => {
  it('hands out room that no later take of the same search overwrites, and reuses it after a reset', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.integer({ min: 0, max: 400_000 }), { maxLength: 12 }), {
          minLength: 1,
          maxLength: 4,
        }),
        (searches) => {
          const arena = new ReadArena();
          let firstRoom: Int32Array | null = null;
          for (const sizes of searches) {
            arena.reset();
            const taken = sizes.map((size, i) => arena.take(size).fill(i + 1));
            taken.forEach((room, i) => {
              assert.equal(room.length, sizes[i]);
              assert.ok(room.every((value) => value === i + 1));
            });
            if (taken[0]?.length) {
              // the first room of every search starts where the first search's did
              firstRoom ??= taken[0];
              if (firstRoom.buffer === taken[0].buffer)
                assert.equal(firstRoom.byteOffset, taken[0].byteOffset);
            }
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
