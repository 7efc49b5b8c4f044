import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { CallTable } from '../../../src/engine/graph/call-table';
import type { IntLists } from '../../../src/engine/graph/int-lists';
import type { CallSite } from '../../../src/engine/model';

const siteArbitrary: fc.Arbitrary<CallSite> = fc
  .record({
    name: fc.constantFrom('f', 'get', 'run_job', 'émettre'),
    receiver: fc.constantFrom(null, 'self', 'this.app', '<expr>'),
    line: fc.integer({ min: 0, max: 100_000 }),
    receiverType: fc.option(fc.constantFrom('Flask', 'Optional[Session]', 'make()'), {
      nil: undefined,
    }),
    reference: fc.boolean(),
  })
  .map(({ receiverType, reference, ...site }) => ({
    ...site,
    ...(receiverType === undefined ? {} : { receiverType }),
    ...(reference ? { kind: 'reference' as const } : {}),
  }));

describe('call table', () => {
  it('gives back the sites each slot was given, through replacements and removals', () => {
    const operation = fc.record({
      slot: fc.integer({ min: 0, max: 12 }),
      calls: fc.option(fc.array(siteArbitrary, { maxLength: 30 }), { nil: null }),
    });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 120 }), (operations) => {
        const table = new CallTable();
        const reference = new Map<number, readonly CallSite[]>();
        const owners = new Map<number, object>();
        for (const { slot, calls } of operations) {
          if (calls) {
            const owner = {};
            table.set(slot, calls, owner);
            reference.set(slot, calls);
            owners.set(slot, owner);
          } else {
            table.remove(slot);
            reference.delete(slot);
            owners.delete(slot);
          }
          for (let check = 0; check <= 12; check++) {
            const expected = reference.get(check) ?? [];
            assert.deepEqual(table.all(check), expected);
            assert.equal(table.size(check), expected.length);
            expected.forEach((site, index) => {
              assert.equal(table.nameAt(check, index), site.name);
              assert.equal(table.lineAt(check, index), site.line);
            });
            const owner = owners.get(check);
            if (owner) assert.ok(table.ownedBy(check, owner));
            assert.ok(!table.ownedBy(check, {}));
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('takes the sites of a save into spare room after opening, not into a copy of every site', () => {
    const table = new CallTable();
    const sites = (table as unknown as { sites: IntLists }).sites;
    const calls = (count: number) =>
      Array.from({ length: count }, (_, line) => ({ name: 'f', receiver: null, line }));
    // opening a store: every fact's sites in one update
    table.reserveSites(5000 * 4);
    for (let slot = 0; slot < 5000; slot++) table.set(slot, calls(4), {});
    const arenas = new Set<ArrayBufferLike>();
    const opened = sites.get(0).buffer;
    for (let save = 0; save < 100; save++) {
      // a save replaces one file's facts, each with a call more than before
      table.reserveSites(3 * 5);
      for (let fact = 0; fact < 3; fact++) table.set(save * 3 + fact, calls(5), {});
      arenas.add(sites.get(0).buffer);
      if (save === 0) assert.equal(sites.get(0).buffer, opened, 'the first save copied the sites');
    }
    assert.ok(
      arenas.size <= 3,
      `the sites were copied into ${arenas.size} new arenas in 100 saves`,
    );
    assert.deepEqual(table.all(99 * 3), calls(5));
  });
});
