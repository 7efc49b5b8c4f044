import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import fc from 'fast-check';
import type { Chunk } from '../../../src/engine/model';
import { ChunkTexts } from '../../../src/engine/search/chunk-texts';
import { Tables } from '../../../src/engine/store/tables';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { Scratch } from '../../helpers/workspace';

function chunk(file: number, i: number, content: string, fullContent: string | null): Chunk {
  return {
    id: `f${file}.py::None::g${i}::function`,
    level: 'function',
    filePath: `f${file}.py`,
    directoryPath: '.',
    language: 'python',
    className: null,
    functionName: `g${i}`,
    startLine: i + 1,
    endLine: i + 2,
    parentDirectoryId: null,
    parentFileId: `f${file}.py::None::None::file`,
    parentClassId: null,
    content,
    fullContent,
    isSummarized: fullContent !== null,
    originalLineCount: null,
    segments: null,
  };
}

const drawnChunks = fc.array(
  fc.record({
    file: fc.nat(6),
    content: fc.string({ maxLength: 40 }),
    fullContent: fc.option(fc.string({ maxLength: 40 }), { nil: null }),
  }),
  { minLength: 1, maxLength: 40 },
);

/** What a chunk's text must read as: the raw body of a summarised function, else its content. */
function expectedTexts(chunks: readonly Chunk[]): Map<string, string> {
  return new Map(chunks.map((c) => [c.id, c.fullContent ?? c.content]));
}

describe('chunk texts', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('reads by row id exactly what reading by chunk id gives, for any chunks and requests', async () => {
    await fc.assert(
      fc.asyncProperty(
        drawnChunks,
        fc.array(fc.nat(45), { maxLength: 20 }),
        async (drawn, requested) => {
          const chunks = drawn.map((d, i) => chunk(d.file, i, d.content, d.fullContent));
          const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
          try {
            await tables.addChunks(chunks, null);
            const texts = new ChunkTexts(tables);
            const { events } = await captureLogs(() => texts.readRowIds());
            assert.equal(eventsNamed(events, 'chunk_row_ids_read')[0]?.chunks, chunks.length);
            // ids past the last chunk name nothing and are left out, as by chunk id
            const ids = requested.map((n) => `f${n % 7}.py::None::g${n}::function`);
            const byId = await tables.chunkTexts(ids);
            // the row path on its own, without the fallback by chunk id behind it
            const rows = (await tables.chunkRowIds())!.rowIds;
            const direct = await tables.chunkTextsAt(
              ids.filter((id) => rows.has(id)).map((id) => rows.get(id)!),
            );
            assert.deepEqual([...direct].sort(), [...byId].sort());
            const read = await texts.get(ids);
            const expected = expectedTexts(chunks);
            assert.deepEqual(
              [...read].sort(),
              [...byId].map(([id, text]) => [id, text.fullContent ?? text.content]).sort(),
            );
            for (const [id, text] of read) assert.equal(text, expected.get(id));
          } finally {
            tables.close();
          }
        },
      ),
      { numRuns: 30 },
    );
  });

  it('reads the new text of a rewritten chunk, before and after its row ids are read again', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
    try {
      const before = [0, 1, 2].map((i) => chunk(i, i, `old ${i}`, null));
      await tables.addChunks(before, null);
      const texts = new ChunkTexts(tables);
      await texts.readRowIds();
      assert.deepEqual(await texts.get(before.map((c) => c.id)), expectedTexts(before));
      // a save of f1.py: its rows are deleted and written again, which moves rows
      await tables.deleteFiles(['f1.py']);
      const saved = chunk(1, 1, 'new 1', null);
      await tables.addChunks([saved], null);
      texts.forget(['f1.py']);
      const after = [before[0]!, saved, before[2]!];
      assert.deepEqual(await texts.get([saved.id]), expectedTexts([saved]));
      await texts.readRowIds();
      texts.clear();
      assert.deepEqual(await texts.get(after.map((c) => c.id)), expectedTexts(after));
    } finally {
      tables.close();
    }
  });

  it('reads texts asked for ahead once, returns them in the order asked and closes after the read', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
    const chunks = [0, 1, 2, 3].map((i) => chunk(i, i, `text ${i}`, null));
    await tables.addChunks(chunks, null);
    // rows read, by chunk id or by row id (whichever the texts use at the time)
    let rowsRead = 0;
    const byId = tables.chunkTexts.bind(tables);
    const byRow = tables.chunkTextsAt.bind(tables);
    tables.chunkTexts = (ids) => {
      rowsRead += ids.length;
      return byId(ids);
    };
    tables.chunkTextsAt = (rows) => {
      rowsRead += rows.length;
      return byRow(rows);
    };
    const texts = new ChunkTexts(tables);
    texts.prefetch([chunks[2]!.id, chunks[0]!.id]);
    const asked = [chunks[3]!.id, chunks[0]!.id, chunks[2]!.id];
    const read = await texts.get(asked);
    assert.deepEqual([...read.keys()], asked);
    assert.deepEqual([...read.values()], ['text 3', 'text 0', 'text 2']);
    // the prefetched pair in one read, the third in another: nothing read twice
    assert.equal(rowsRead, 3);
    // a read still in flight when the tables close: they close after it, and it completes
    texts.clear();
    texts.prefetch([chunks[1]!.id]);
    tables.close();
    assert.deepEqual([...(await texts.get([chunks[1]!.id])).values()], ['text 1']);
  });

  it('does not keep a text read before the index changed', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
    try {
      const old = chunk(0, 0, 'old', null);
      await tables.addChunks([old], null);
      const texts = new ChunkTexts(tables);
      texts.prefetch([old.id]);
      // a save lands while the read is in flight
      await tables.deleteFiles(['f0.py']);
      await tables.addChunks([chunk(0, 0, 'new', null)], null);
      texts.forget(['f0.py']);
      assert.deepEqual([...(await texts.get([old.id])).values()], ['new']);
    } finally {
      tables.close();
    }
  });
});
