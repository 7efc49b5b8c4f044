import * as assert from 'node:assert/strict';
import { Field, List, Table, Utf8, vectorFromArray } from 'apache-arrow';
import fc from 'fast-check';
import {
  NO_VALUES,
  stringColumn,
  stringListColumn,
  Strings,
} from '../../../src/engine/store/columns';

/** A record batch of one UTF-8 column `name` holding `values`. */
function batchOf(values: readonly (string | null)[]) {
  return new Table({ name: vectorFromArray([...values], new Utf8()) }).batches[0]!;
}

/** A record batch of one list-of-UTF-8 column `names` holding `lists`. */
function listBatchOf(lists: readonly (readonly string[] | null)[]) {
  const type = new List(new Field('item', new Utf8(), true));
  return new Table({ names: vectorFromArray([...lists], type) }).batches[0]!;
}

/** Values that repeat row after row, as paths, kinds and parents do in the tables. */
const repeating = fc.constantFrom(
  '',
  'a',
  'b',
  'ab',
  'ba',
  'é',
  'e\u0301',
  'shop/db.py',
  'shop/db.pz',
);

describe('store columns: strings read from Arrow buffers', () => {
  it('are the values written, interned or not, whatever repeats, nulls and lengths they come in', () => {
    const value = fc.oneof(fc.constant(null), repeating, fc.string());
    fc.assert(
      fc.property(fc.array(value, { maxLength: 40 }), (values) => {
        const batch = batchOf(values);
        assert.deepEqual(stringColumn(batch, 'name'), values);
        assert.deepEqual(stringColumn(batch, 'name', new Strings()), values);
      }),
      { numRuns: 300 },
    );
  });

  it('are the lists written, interned or not, a row without values given the shared empty list', () => {
    const list = fc.oneof(
      fc.constant(null),
      fc.array(fc.oneof(repeating, fc.string()), { maxLength: 4 }),
    );
    fc.assert(
      fc.property(fc.array(list, { maxLength: 30 }), (lists) => {
        const batch = listBatchOf(lists);
        const expected = lists.map((values) => (values?.length ? values : NO_VALUES));
        assert.deepEqual(stringListColumn(batch, 'names'), expected);
        const interned = stringListColumn(batch, 'names', new Strings());
        assert.deepEqual(interned, expected);
        for (const [row, values] of interned.entries())
          if (!values.length) assert.equal(values, NO_VALUES, `row ${row}`);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps one copy of each value, met as a string or as its UTF-8 bytes, as the table grows', () => {
    // long values alike at both ends, which the table tells apart by comparing them whole
    const alikeAtTheEnds = fc
      .tuple(fc.constantFrom('a', 'b', 'é', 'è', 'ab'), fc.nat({ max: 3 }))
      .map(([middle, times]) => `${'s'.repeat(20)}${middle.repeat(times)}${'e'.repeat(20)}`);
    // most values new, so that the table grows past its first size more than once
    const value = fc.oneof(
      { arbitrary: fc.string({ minLength: 4, maxLength: 12 }), weight: 6 },
      { arbitrary: repeating, weight: 1 },
      { arbitrary: alikeAtTheEnds, weight: 1 },
      { arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }), weight: 1 },
    );
    const met = fc.record({ value, asBytes: fc.boolean(), padding: fc.nat({ max: 3 }) });
    fc.assert(
      fc.property(fc.array(met, { minLength: 1200, maxLength: 1600 }), (meetings) => {
        const strings = new Strings();
        for (const { value, asBytes, padding } of meetings) {
          // the value's bytes inside a longer buffer, as a column's bytes hold every row's
          const bytes = Buffer.concat([
            Buffer.alloc(padding, 0x61),
            Buffer.from(value),
            Buffer.from('é'),
          ]);
          const kept = asBytes
            ? strings.internBytes(bytes, padding, bytes.length - Buffer.byteLength('é'))
            : strings.intern(value);
          assert.equal(kept, value);
        }
        assert.equal(strings.size, new Set(meetings.map(({ value }) => value)).size);
      }),
      { numRuns: 40 },
    );
  });

  it('names the column a table lacks', () => {
    assert.throws(() => stringColumn(batchOf(['a']), 'path'), /no path column/);
  });
});
