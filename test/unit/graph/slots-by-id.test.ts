import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { CallTable, StoredFact } from '../../../src/engine/graph/call-table';
import { SlotsById } from '../../../src/engine/graph/slots-by-id';
import type { CodeFact } from '../../../src/engine/model';
import { factOf } from '../../helpers/chunks';

describe('slots by id', () => {
  it('finds and lists what a map from id to slot holds, in its order, through adds and removals', () => {
    // few hashes, so that chains of one bucket and of one hash are common
    const id = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h');
    const hashOf = (value: string) => value.charCodeAt(0) % 3;
    const operation = fc.record({ kind: fc.constantFrom('add', 'add', 'remove'), id });
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 100, size: 'max' }), (operations) => {
        const table = new SlotsById();
        const reference = new Map<string, number>();
        // each id keeps one slot, as a definition kept by the graph does
        const slotOfId = (value: string) => value.charCodeAt(0) - 97;
        const idOfSlot = (slot: number) => String.fromCharCode(97 + slot);
        for (const { kind, id: value } of operations) {
          const slot = slotOfId(value);
          if (kind === 'add') {
            table.add(slot, hashOf(value));
            reference.set(value, slot);
          } else {
            table.remove(slot);
            reference.delete(value);
          }
          assert.equal(table.size, reference.size);
          assert.deepEqual([...table.slots()], [...reference.values()]);
          for (const probe of ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']) {
            const found = table.find(hashOf(probe), (held) => idOfSlot(held) === probe);
            assert.equal(found, reference.get(probe));
          }
        }
      }),
    );
  });

  it('grows its buckets and columns past their first size without losing a slot', () => {
    const table = new SlotsById();
    for (let slot = 0; slot < 5000; slot += 2) table.add(slot, slot * 7919);
    for (let slot = 0; slot < 5000; slot += 4) table.remove(slot);
    const expected = [...Array(5000).keys()].filter((slot) => slot % 4 === 2);
    assert.deepEqual([...table.slots()], expected);
    for (const slot of expected)
      assert.equal(
        table.find(slot * 7919, (held) => held === slot),
        slot,
      );
    assert.equal(
      table.find(0, () => true),
      undefined,
    );
  });
});

describe('stored fact ids', () => {
  const fact = (id: string): CodeFact =>
    factOf({
      id,
      path: 'pkg/a.py',
      qualifiedName: 'Cls.run',
      name: 'run',
      kind: 'method',
      className: 'Cls',
      parent: 'Cls',
      signature: 'def run(self)',
    });

  it('gives back every id it was made with, and knows it from any other', () => {
    const ids = [
      'pkg/a.py::Cls.run',
      'pkg/a.py::Cls.run#2',
      'pkg/a.py::Cls.run#12',
      'pkg/a.py::Cls.run#1',
      'pkg/a.py::Cls.run#02',
      'pkg/a.py::Cls.run#x',
      'other',
      'pkg/a.py:Cls.run',
    ];
    for (const id of ids) {
      const file = { path: 'pkg/a.py', language: 'python' as const, table: new CallTable() };
      const stored = new StoredFact(fact(id), file, 0);
      assert.equal(stored.id, id);
      for (const other of [...ids, 'pkg/a.py::Cls.ru', 'pkg/a.py::Cls.run#', 'pkg/a.pyx:Cls.run'])
        assert.equal(stored.hasId(other), other === id, `${id} against ${other}`);
    }
  });
});
