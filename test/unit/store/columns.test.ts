import * as assert from 'node:assert/strict';
import { Table, Utf8, vectorFromArray } from 'apache-arrow';
import fc from 'fast-check';
import { stringColumn, Strings } from '../../../src/engine/store/columns';

/** A record batch of one UTF-8 column `name` holding `values`. */
function batchOf(values: readonly (string | null)[]) {
  return new Table({ name: vectorFromArray([...values], new Utf8()) }).batches[0]!;
}

describe('store columns: strings read from Arrow buffers', () => {
  it('are the values written, interned or not, whatever repeats, nulls and lengths they come in', () => {
    const value = fc.oneof(
      fc.constant(null),
      fc.constantFrom('', 'a', 'b', 'ab', 'ba', 'é', 'e\u0301', 'shop/db.py', 'shop/db.pz'),
      fc.string(),
    );
    fc.assert(
      fc.property(fc.array(value, { maxLength: 40 }), (values) => {
        const batch = batchOf(values);
        assert.deepEqual(stringColumn(batch, 'name'), values);
        assert.deepEqual(stringColumn(batch, 'name', new Strings()), values);
      }),
      { numRuns: 300 },
    );
  });

  it('names the column a table lacks', () => {
    assert.throws(() => stringColumn(batchOf(['a']), 'path'), /no path column/);
  });
});
