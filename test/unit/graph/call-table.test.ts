import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { CallTable } from '../../../src/engine/graph/call-table';
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
});
