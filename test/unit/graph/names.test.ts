import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { NameTable } from '../../../src/engine/graph/names';

describe('name table', () => {
  it('numbers names as a map numbering them in order of first sight does, and finds only those', () => {
    const name = fc.string({ unit: fc.constantFrom('a', 'b', '_', 'é', '.'), maxLength: 4 });
    fc.assert(
      fc.property(
        fc.array(fc.record({ name, add: fc.boolean() }), { maxLength: 3000, size: 'max' }),
        (steps) => {
          const table = new NameTable();
          const reference = new Map<string, number>();
          for (const step of steps) {
            if (step.add) {
              if (!reference.has(step.name)) reference.set(step.name, reference.size);
              assert.equal(table.id(step.name), reference.get(step.name));
            } else assert.equal(table.find(step.name), reference.get(step.name));
          }
          for (const [value, id] of reference) assert.equal(table.at(id), value);
        },
      ),
      { numRuns: 60 },
    );
  });
});
