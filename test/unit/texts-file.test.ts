import { strict as assert } from 'node:assert';
import { readFileSync, truncateSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { type LiveChunkIds, TextsFile } from '../../src/engine/store/texts';
import { unwrap } from '../../src/engine/util/result';
import { Scratch } from '../helpers/workspace';

/** One write to the texts file: chunks (by number) dropped, then chunks (re)written. */
interface Write {
  readonly removed: readonly number[];
  readonly added: readonly { readonly chunk: number; readonly text: string }[];
}

const write: fc.Arbitrary<Write> = fc.record({
  removed: fc.array(fc.nat(30), { maxLength: 6 }),
  added: fc.array(
    fc.record({ chunk: fc.nat(30), text: fc.string({ unit: 'binary', maxLength: 300 }) }),
    { maxLength: 8 },
  ),
});

const idOf = (chunk: number) => `pkg/f${chunk % 5}.py::Cls::g${chunk}::function`;

/** What the catalog would hold after `writes`: each live chunk and its last text. */
function expected(writes: readonly Write[]): Map<string, string> {
  const live = new Map<string, string>();
  for (const step of writes) {
    for (const chunk of step.removed) live.delete(idOf(chunk));
    for (const { chunk, text } of step.added) live.set(idOf(chunk), text);
  }
  return live;
}

function apply(texts: TextsFile, step: Write): void {
  texts.write(
    step.removed.map(idOf),
    step.added.map(({ chunk, text }) => ({ id: idOf(chunk), text })),
  );
}

function readAll(texts: TextsFile, ids: Iterable<string>): Map<string, string | undefined> {
  return new Map([...ids].map((id) => [id, unwrap(texts.read(id))]));
}

/** The live chunk ids of `live`, as the catalog gives them to the texts file. */
function catalogOf(live: ReadonlyMap<string, string>): LiveChunkIds {
  const ids = new Set(live.keys());
  return { size: ids.size, idOf: (id) => (ids.has(id) ? id : undefined) };
}

/** The text `live` holds of each of `ids` (undefined for a chunk it does not hold). */
function textsOf(
  live: ReadonlyMap<string, string>,
  ids: Iterable<string>,
): Map<string, string | undefined> {
  return new Map([...ids].map((id) => [id, live.get(id)]));
}

/** The bytes of a record: its header, then its id and text. */
function recordBytes(id: string, text: string): number {
  return 12 + Buffer.byteLength(id) + Buffer.byteLength(text);
}

/** What a reader opening `texts` (at `file`) as written so far reads of `ids`, `live` its catalog. */
function reopenedReads(
  file: string,
  texts: TextsFile,
  live: ReadonlyMap<string, string>,
  ids: Iterable<string>,
): Map<string, string | undefined> {
  texts.sync();
  const reopened = TextsFile.load(file, texts.bytes, catalogOf(live), false);
  try {
    return readAll(reopened, ids);
  } finally {
    reopened.close();
  }
}

describe('texts file', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('reads back the last text of every live chunk, written, reopened and rewritten', () => {
    fc.assert(
      fc.property(fc.array(write, { minLength: 1, maxLength: 8 }), (writes) => {
        const folder = scratch.folder();
        const texts = TextsFile.create(path.join(folder, 'texts-0.bin'));
        const every = new Set([...Array(31).keys()].map(idOf));
        // read after every write too: texts read before are kept, and must not outlive a rewrite
        writes.forEach((step, i) => {
          apply(texts, step);
          assert.deepEqual(readAll(texts, every), textsOf(expected(writes.slice(0, i + 1)), every));
        });
        const live = expected(writes);
        const want = textsOf(live, every);
        assert.deepEqual(readAll(texts, every), want);
        assert.equal(texts.size, live.size);
        assert.deepEqual(reopenedReads(path.join(folder, 'texts-0.bin'), texts, live, every), want);
        if (texts.bytes > 0) {
          texts.rewriteTo(path.join(folder, 'texts-1.bin'));
          assert.deepEqual(readAll(texts, every), want);
          const rewritten = TextsFile.load(
            path.join(folder, 'texts-1.bin'),
            texts.bytes,
            catalogOf(live),
            true,
          );
          assert.deepEqual(readAll(rewritten, every), want);
          // a rewritten file holds the live records and nothing else
          const liveBytes = [...live].reduce((sum, [id, text]) => sum + recordBytes(id, text), 8);
          assert.equal(rewritten.bytes, liveBytes);
          rewritten.close();
        }
        texts.close();
      }),
      { numRuns: 60 },
    );
  });

  it('keeps the record of a chunk written again with its own text, and appends only changed texts', () => {
    // few texts, so a chunk is often written again with the text it holds
    const sameOften: fc.Arbitrary<Write> = fc.record({
      removed: fc.array(fc.nat(12), { maxLength: 6 }),
      added: fc.array(
        fc.record({ chunk: fc.nat(12), text: fc.constantFrom('', 'a', 'b', 'héllo\nworld') }),
        { maxLength: 10 },
      ),
    });
    fc.assert(
      fc.property(fc.array(sameOften, { minLength: 1, maxLength: 10 }), (writes) => {
        const folder = scratch.folder();
        const texts = TextsFile.create(path.join(folder, 'texts-0.bin'));
        const every = new Set([...Array(13).keys()].map(idOf));
        writes.forEach((step, i) => {
          const before = expected(writes.slice(0, i));
          const offsets = new Map([...every].map((id) => [id, texts.recordOf(id)]));
          const bytes = texts.bytes;
          apply(texts, step);
          const last = new Map(step.added.map(({ chunk, text }) => [idOf(chunk), text]));
          const changed = [...last].filter(([id, text]) => before.get(id) !== text);
          const grown = changed.reduce(
            (sum, [id, text]) => sum + recordBytes(id, text),
            bytes === 0 && changed.length ? 8 : 0,
          );
          assert.equal(texts.bytes - bytes, grown);
          for (const [id, text] of last)
            if (before.get(id) === text) assert.equal(texts.recordOf(id), offsets.get(id));
          assert.deepEqual(readAll(texts, every), textsOf(expected(writes.slice(0, i + 1)), every));
        });
        const live = expected(writes);
        assert.deepEqual(
          reopenedReads(path.join(folder, 'texts-0.bin'), texts, live, every),
          textsOf(live, every),
        );
        texts.close();
      }),
      { numRuns: 100 },
    );
  });

  it('keeps every text readable as its slots run out, whether they grow or are packed', () => {
    const folder = scratch.folder();
    const texts = TextsFile.create(path.join(folder, 'texts-0.bin'));
    const live = new Map<string, string>();
    // 1,500 new chunks outgrow the first slots with all of them live (the arrays grow); then
    // rewriting them again and again leaves most slots dead (the live ones are packed)
    for (let round = 0; round < 6; round++) {
      for (let from = 0; from < 1500; from += 250) {
        const added = Array.from({ length: 250 }, (_, i) => ({
          id: idOf(from + i),
          text: `round ${round} chunk ${from + i}`,
        }));
        texts.write([], added);
        for (const { id, text } of added) live.set(id, text);
        assert.deepEqual(readAll(texts, live.keys()), live);
      }
    }
    assert.equal(texts.size, 1500);
    texts.sync();
    const reopened = TextsFile.load(
      path.join(folder, 'texts-0.bin'),
      texts.bytes,
      catalogOf(live),
      true,
    );
    // the first saves after opening append into spare slots: the slot arrays are not copied
    const slotArray = () => (reopened as unknown as { offsets: Float64Array }).offsets;
    const loadedSlots = slotArray();
    reopened.write([], [{ id: idOf(0), text: 'after opening' }]);
    live.set(idOf(0), 'after opening');
    const added = Array.from({ length: 255 }, (_, i) => ({ id: idOf(2000 + i), text: `new ${i}` }));
    reopened.write([], added);
    for (const { id, text } of added) live.set(id, text);
    assert.equal(slotArray(), loadedSlots, 'a save after opening copied the slots');
    assert.deepEqual(readAll(reopened, live.keys()), live);
    reopened.close();
    texts.close();
  });

  it('asks for a rewrite once superseded texts outgrow the live ones', () => {
    const folder = scratch.folder();
    const texts = TextsFile.create(path.join(folder, 'texts-0.bin'));
    const big = 'x'.repeat(1024 * 1024);
    texts.write([], [{ id: 'a', text: big }]);
    assert.equal(texts.wasteful(), false);
    // the same text again keeps its record: only a changed one leaves garbage behind
    for (let i = 0; i < 6; i++) texts.write(['a'], [{ id: 'a', text: big }]);
    assert.equal(texts.wasteful(), false);
    for (let i = 0; i < 6; i++) texts.write(['a'], [{ id: 'a', text: `${i}${big}` }]);
    assert.equal(texts.wasteful(), true);
    texts.rewriteTo(path.join(folder, 'texts-1.bin'));
    assert.equal(texts.wasteful(), false);
    assert.equal(unwrap(texts.read('a')), `5${big}`);
    texts.close();
  });

  it('reads a text longer than its reading block', () => {
    const file = path.join(scratch.folder(), 'texts-0.bin');
    const texts = TextsFile.create(file);
    const long = 'é'.repeat(5 * 1024 * 1024);
    texts.write(
      [],
      [
        { id: 'short', text: 'a' },
        { id: 'long', text: long },
        { id: 'b', text: 'b' },
      ],
    );
    texts.sync();
    const catalog = catalogOf(
      new Map([
        ['short', ''],
        ['long', ''],
        ['b', ''],
      ]),
    );
    const reopened = TextsFile.load(file, texts.bytes, catalog, false);
    assert.equal(unwrap(reopened.read('long')), long);
    assert.equal(unwrap(reopened.read('b')), 'b');
    reopened.close();
    texts.close();
  });

  it('refuses a torn or changed file at opening, and a changed record when read', () => {
    const file = path.join(scratch.folder(), 'texts-0.bin');
    const texts = TextsFile.create(file);
    texts.write(
      [],
      [
        { id: 'a', text: 'alpha' },
        { id: 'b', text: 'beta' },
      ],
    );
    texts.sync();
    const committed = texts.bytes;
    texts.close();
    const catalog = catalogOf(
      new Map([
        ['a', ''],
        ['b', ''],
      ]),
    );
    const intact = readFileSync(file);

    // torn: the last record cut short
    truncateSync(file, committed - 2);
    assert.throws(
      () => TextsFile.load(file, committed, catalog, false),
      /holds \d+ bytes, \d+ were committed/,
    );

    // a byte of the first text changed after it was written
    const changed = Buffer.from(intact);
    changed[8 + 12 + 1] = 'A'.charCodeAt(0);
    writeFileSync(file, changed);
    assert.throws(() => TextsFile.load(file, committed, catalog, false), /damaged at byte 8/);

    // a chunk the catalog holds with no text
    writeFileSync(file, intact);
    assert.throws(
      () =>
        TextsFile.load(
          file,
          committed,
          catalogOf(
            new Map([
              ['a', ''],
              ['c', ''],
            ]),
          ),
          false,
        ),
      /holds 1 of 2 chunks/,
    );

    // changed after opening: the read fails instead of answering from the changed bytes
    const opened = TextsFile.load(file, committed, catalog, false);
    writeFileSync(file, changed);
    const read = opened.read('a');
    assert.equal(read.ok, false);
    assert.equal(unwrap(opened.read('b')), 'beta');
    opened.close();
  });

  it('reads only the committed bytes, whatever a write under way appended after them', () => {
    const file = path.join(scratch.folder(), 'texts-0.bin');
    const writer = TextsFile.create(file);
    writer.write([], [{ id: 'a', text: 'one' }]);
    const committed = writer.bytes;
    writer.write(
      ['a'],
      [
        { id: 'a', text: 'two' },
        { id: 'b', text: 'half' },
      ],
    );
    const reader = TextsFile.load(file, committed, catalogOf(new Map([['a', '']])), false);
    assert.equal(unwrap(reader.read('a')), 'one');
    assert.equal(unwrap(reader.read('b')), undefined);
    assert.throws(() => reader.write([], [{ id: 'c', text: 'x' }]), /opened for reading/);
    reader.close();
    writer.close();
  });
});
