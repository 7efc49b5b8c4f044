import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { TermTable } from '../../src/engine/store/term-table';

/** The lexical index's term lookup must answer what a Map of the same terms answers. */
describe('term table', () => {
  it('finds every added term by its id and nothing else, across growth', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: 'binary', maxLength: 12 }), { maxLength: 3000 }),
        fc.array(fc.string({ unit: 'binary', maxLength: 12 }), { maxLength: 50 }),
        (terms, probes) => {
          const held: string[] = [];
          const table = new TermTable(held);
          const reference = new Map<string, number>();
          for (const term of terms) {
            held.push(term);
            table.add(held.length - 1);
            reference.set(term, held.length - 1);
          }
          for (const term of [...terms, ...probes])
            assert.equal(table.get(term), reference.get(term));
        },
      ),
      { numRuns: 60 },
    );
  });
});
