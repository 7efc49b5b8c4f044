import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import type { Chunk } from '../../../src/engine/model';
import { ChunkTexts } from '../../../src/engine/search/chunk-texts';
import { TextsFile } from '../../../src/engine/store/texts';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { Scratch } from '../../helpers/workspace';
import { chunkOf } from '../../helpers/chunks';

function chunk(file: number, i: number, content: string, fullContent: string | null): Chunk {
  return chunkOf({
    id: `f${file}.py::None::g${i}::function`,
    filePath: `f${file}.py`,
    functionName: `g${i}`,
    startLine: i + 1,
    endLine: i + 2,
    parentFileId: `f${file}.py::None::None::file`,
    content,
    fullContent,
    isSummarized: fullContent !== null,
  });
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

  /** Chunks' texts written to a texts file, as a store writes them. */
  function stored(chunks: readonly Chunk[]): { file: TextsFile; path: string } {
    const at = path.join(scratch.folder(), 'texts-0.bin');
    const file = TextsFile.create(at);
    file.write(
      [],
      chunks.map((c) => ({ id: c.id, text: c.fullContent ?? c.content })),
    );
    return { file, path: at };
  }

  /** Runs `body` on the drawn chunks written to a texts file, closing the file after. */
  async function withStoredDrawn(
    drawn: readonly { file: number; content: string; fullContent: string | null }[],
    body: (chunks: Chunk[], file: TextsFile) => Promise<void>,
  ): Promise<void> {
    const chunks = drawn.map((d, i) => chunk(d.file, i, d.content, d.fullContent));
    const { file } = stored(chunks);
    try {
      await body(chunks, file);
    } finally {
      file.close();
    }
  }

  it('reads what each chunk holds, in the order asked, for any chunks and requests', async () => {
    await fc.assert(
      fc.asyncProperty(drawnChunks, fc.array(fc.nat(45), { maxLength: 20 }), (drawn, requested) =>
        withStoredDrawn(drawn, async (chunks, file) => {
          // ids past the last chunk name nothing and are left out
          const ids = requested.map((n) => `f${n % 7}.py::None::g${n}::function`);
          const read = await new ChunkTexts(file).get(ids);
          const expected = expectedTexts(chunks);
          assert.deepEqual(
            [...read.keys()],
            [...new Set(ids)].filter((id) => expected.has(id)),
          );
          for (const [id, text] of read) assert.equal(text, expected.get(id));
        }),
      ),
      { numRuns: 30 },
    );
  });

  it('leaves out a text whose record was damaged after opening, saying so, and reads the rest', async () => {
    const chunks = [0, 1, 2].map((i) => chunk(i, i, `text ${i}`, null));
    const { file, path: at } = stored(chunks);
    try {
      // the first record's text changed on disk after it was written
      const bytes = readFileSync(at);
      bytes[bytes.indexOf('text 0')] = 'T'.charCodeAt(0);
      writeFileSync(at, bytes);
      const { result, events } = await captureLogs(() =>
        // an iterator, as some callers pass
        new ChunkTexts(file).get(new Set(chunks.map((c) => c.id).reverse()).values()),
      );
      assert.deepEqual([...result.values()], ['text 2', 'text 1']);
      assert.equal(eventsNamed(events, 'chunk_texts_damaged')[0]?.chunks, 1);
    } finally {
      file.close();
    }
  });

  it('looks each text up when first asked for, as reading them all first gives', async () => {
    await fc.assert(
      fc.asyncProperty(drawnChunks, fc.array(fc.nat(45), { maxLength: 20 }), (drawn, requested) =>
        withStoredDrawn(drawn, async (_chunks, file) => {
          const ids = requested.map((n) => `f${n % 7}.py::None::g${n}::function`);
          const all = await new ChunkTexts(file).get(ids);
          let reads = 0;
          const read = file.read.bind(file);
          file.read = (id) => {
            reads++;
            return read(id);
          };
          const lookup = new ChunkTexts(file).lookup();
          for (const id of [...ids, ...ids]) assert.equal(lookup.get(id), all.get(id));
          assert.equal(reads, new Set(ids).size);
        }),
      ),
      { numRuns: 30 },
    );
  });

  it('looks up no text of a damaged record, saying so', async () => {
    const chunks = [0, 1].map((i) => chunk(i, i, `text ${i}`, null));
    const { file, path: at } = stored(chunks);
    try {
      const bytes = readFileSync(at);
      bytes[bytes.indexOf('text 0')] = 'T'.charCodeAt(0);
      writeFileSync(at, bytes);
      const { result, events } = await captureLogs(() => {
        const lookup = new ChunkTexts(file).lookup();
        return Promise.resolve(chunks.map((c) => lookup.get(c.id)));
      });
      assert.deepEqual(result, [undefined, 'text 1']);
      assert.equal(eventsNamed(events, 'chunk_texts_damaged')[0]?.chunks, 1);
    } finally {
      file.close();
    }
  });
});
