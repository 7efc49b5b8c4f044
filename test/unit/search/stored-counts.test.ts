import * as assert from 'node:assert/strict';
import { closeSync, existsSync, openSync, readdirSync, writeFileSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { Tiktoken } from 'js-tiktoken/lite';
import ranks from 'js-tiktoken/ranks/cl100k_base';
import fc from 'fast-check';
import type { Engine } from '../../../src/engine/engine';
import type { ChunkMeta } from '../../../src/engine/store/tables';
import { TextsFile } from '../../../src/engine/store/texts';
import { ChunkTexts } from '../../../src/engine/search/chunk-texts';
import { buildContext, chunkTextCounter, countTokens } from '../../../src/engine/search/context';
import type { Span } from '../../../src/engine/search/spans';
import { StoredTokenCounts } from '../../../src/engine/search/stored-counts';
import { unwrap } from '../../../src/engine/util/result';
import { chunkMeta } from '../../helpers/chunks';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { openEngine, Scratch } from '../../helpers/workspace';

/** Code in several languages and scripts, with the line breaks, blanks and \r that cut pieces. */
const piece = fc.constantFrom(
  ...`abcXYZ_019 \t\r'"(){}[]<>|!=.,;:+-*/ëé日本語🎉ßŁ\u00a0\u2028…`.split(''),
  '\n',
  '\n\n',
  '\r\n',
  '\n    ',
  '    ',
  'def f(x):',
  'func (s *Server) Serve() error {',
  'fn main() -> Result<(), Error> {',
  'return',
  "'s",
  '<|endoftext|>',
  'ünïcödé',
  '# コメント',
);
const chunkText = fc.array(piece, { maxLength: 120 }).map((parts) => parts.join(''));

/** A folder, a file under it and `texts.length - 2` functions of that file, with those texts. */
function chunksOf(texts: readonly string[]): ChunkMeta[] {
  const lineCount = (text: string) => text.split('\n').length;
  const folder = chunkMeta({ id: 'pkg/', level: 'directory', directoryPath: 'pkg' });
  const file = chunkMeta({
    id: 'pkg/a.py',
    level: 'file',
    filePath: 'pkg/a.py',
    directoryPath: 'pkg',
    endLine: lineCount(texts[1]!),
    parentDirectoryId: folder.id,
  });
  const functions = texts.slice(2).map((text, i) =>
    chunkMeta({
      id: `pkg/a.py::f${i}`,
      filePath: 'pkg/a.py',
      directoryPath: 'pkg',
      functionName: `f${i}`,
      startLine: 10 * i + 1,
      endLine: 10 * i + lineCount(text),
      parentFileId: file.id,
      parentDirectoryId: folder.id,
    }),
  );
  return [folder, file, ...functions];
}

/** Each function's lines from its `from`-th on, as evidence. */
function spansOf(chunks: readonly ChunkMeta[], from: number): Span[] {
  return chunks
    .filter((meta) => meta.level === 'function')
    .map((meta) => ({
      path: meta.filePath!,
      startLine: Math.min(meta.endLine, meta.startLine + from),
      endLine: meta.endLine,
      level: meta.level,
      score: 1,
      why: 'drawn',
      chunkId: meta.id,
    }));
}

/** Pauses between slices that do nothing but `onPause` on the pause numbered `at` (the first is 1). */
function pauses(at: number, onPause: () => void): () => Promise<void> {
  let count = 0;
  return () => {
    if (++count === at) onPause();
    return Promise.resolve();
  };
}

describe('token counts stored ahead of questions', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());
  const tiktoken = new Tiktoken(ranks);

  function written(
    chunks: readonly ChunkMeta[],
    texts: readonly string[],
    at = path.join(scratch.folder(), 'texts-0.bin'),
  ): TextsFile {
    const file = TextsFile.create(at);
    file.write(
      [],
      chunks.map((meta, i) => ({ id: meta.id, text: texts[i]! })),
    );
    return file;
  }

  it('are what counting the text gives: its header and each line as a context shows them', async () => {
    const count = await chunkTextCounter();
    await fc.assert(
      fc.asyncProperty(chunkText, async (text) => {
        const counted = count(text);
        const lines = text.split('\n');
        assert.equal(counted.lines.length, lines.length);
        for (const [i, line] of lines.entries())
          assert.equal(counted.lines[i], tiktoken.encode(` ${line}\n`, [], []).length);
        // after a title, which ends in `)`: the title's count and the header's make the whole's
        const title = '### pkg/a.py:1-9 (function f, surroundings)';
        const header = tiktoken.encode(`${title}\n${text}`, [], []);
        if (counted.header !== undefined && text.split('\n').length <= 10)
          assert.equal((await countTokens(`${title}\n`)) + counted.header, header.length);
        assert.equal(counted.header === undefined, /^[\r\n]/.test(text));
      }),
      { numRuns: 300 },
    );
  });

  it('build every context exactly as counting at question time does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(chunkText, { minLength: 3, maxLength: 8 }),
        fc.nat(4),
        fc.integer({ min: 200, max: 8000 }),
        async (texts, from, budget) => {
          const chunks = chunksOf(texts);
          const file = written(chunks, texts);
          try {
            const catalog = new Map(chunks.map((meta) => [meta.id, meta]));
            const spans = spansOf(chunks, from);
            const plain = await buildContext(spans, catalog, new ChunkTexts(file), budget);
            const stored = new StoredTokenCounts(file);
            await stored.catchUp(() => Promise.resolve());
            for (const meta of chunks) assert.ok(stored.entryOf(meta.id) >= 0, meta.id);
            const fromStored = await buildContext(
              spans,
              catalog,
              new ChunkTexts(file),
              budget,
              stored,
            );
            assert.deepEqual(fromStored, plain);
            for (const item of fromStored.items)
              assert.equal(item.tokens, tiktoken.encode(item.text, [], []).length);
          } finally {
            file.close();
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  /** Functions enough that counting them takes several slices. */
  function manyTexts(): string[] {
    const body = Array.from(
      { length: 40 },
      (_, i) => `    value_${i} = compute(${i}, "ünïcödé 日本語") + other_${i} * 2`,
    );
    return Array.from({ length: 400 }, (_, i) => [`def f${i}():`, ...body].join('\n'));
  }

  it('count texts saved while a pass waits on the next pass, and until then count at question time', async () => {
    const texts = manyTexts();
    const chunks = chunksOf(texts);
    const file = written(chunks, texts);
    try {
      const catalog = new Map(chunks.map((meta) => [meta.id, meta]));
      const saved = chunks[5]!;
      const newText = `def f3():\n    return "saved ${'x'.repeat(30)}"\n`;
      // slices of no length: the pass yields after every record, on any machine
      const stored = new StoredTokenCounts(file, 0);
      // a save lands while the first pass waits between two of its slices
      await stored.catchUp(pauses(3, () => file.write([], [{ id: saved.id, text: newText }])));
      assert.equal(
        stored.entryOf(saved.id),
        -1,
        'the saved text is not counted by the pass it interrupted',
      );
      const texts2 = texts.map((text, i) => (i === 5 ? newText : text));
      const spans = spansOf(chunksOf(texts2), 0);
      const plain = await buildContext(spans, catalog, new ChunkTexts(file), 8000);
      assert.deepEqual(
        await buildContext(spans, catalog, new ChunkTexts(file), 8000, stored),
        plain,
      );
      await stored.catchUp(() => Promise.resolve());
      assert.ok(stored.entryOf(saved.id) >= 0);
      assert.deepEqual(
        await buildContext(spans, catalog, new ChunkTexts(file), 8000, stored),
        plain,
      );
    } finally {
      file.close();
    }
  });

  it('of a file saved again stay with its unchanged chunks, and only the changed one waits for a pass', async () => {
    const texts = manyTexts();
    const chunks = chunksOf(texts);
    const file = written(chunks, texts);
    try {
      const catalog = new Map(chunks.map((meta) => [meta.id, meta]));
      const stored = new StoredTokenCounts(file, 0);
      await stored.catchUp(() => Promise.resolve());
      const before = chunks.map((meta) => stored.entryOf(meta.id));
      assert.ok(before.every((entry) => entry >= 0));
      // a save writes every chunk of its file again; one function's text changed
      const texts2 = texts.map((text, i) =>
        i === 5
          ? `${text}
# saved`
          : text,
      );
      file.write(
        chunks.map((meta) => meta.id),
        chunks.map((meta, i) => ({ id: meta.id, text: texts2[i]! })),
      );
      chunks.forEach((meta, i) =>
        assert.equal(stored.entryOf(meta.id), i === 5 ? -1 : before[i], meta.id),
      );
      const spans = spansOf(chunksOf(texts2), 0);
      assert.deepEqual(
        await buildContext(spans, catalog, new ChunkTexts(file), 8000, stored),
        await buildContext(spans, catalog, new ChunkTexts(file), 8000),
      );
    } finally {
      file.close();
    }
  });

  it('are counted again when a rewrite moves the records, even in the middle of a pass', async () => {
    const texts = manyTexts();
    const chunks = chunksOf(texts);
    const folder = scratch.folder();
    const file = TextsFile.create(path.join(folder, 'texts-0.bin'));
    // every function written twice: the first records become garbage that a rewrite drops
    file.write(
      [],
      chunks.map((meta, i) => ({ id: meta.id, text: `${texts[i]!}\n# old` })),
    );
    file.write(
      [],
      chunks.map((meta, i) => ({ id: meta.id, text: texts[i]! })),
    );
    try {
      const stored = new StoredTokenCounts(file, 0);
      const layout = file.layout;
      await stored.catchUp(pauses(3, () => file.rewriteTo(path.join(folder, 'texts-1.bin'))));
      assert.notEqual(file.layout, layout);
      const catalog = new Map(chunks.map((meta) => [meta.id, meta]));
      for (const meta of chunks) assert.ok(stored.entryOf(meta.id) >= 0, meta.id);
      const spans = spansOf(chunks, 1);
      assert.deepEqual(
        await buildContext(spans, catalog, new ChunkTexts(file), 8000, stored),
        await buildContext(spans, catalog, new ChunkTexts(file), 8000),
      );
    } finally {
      file.close();
    }
  });

  it('of a reopened texts file are those counted before it was closed', async () => {
    const texts = manyTexts().slice(0, 20);
    const chunks = chunksOf(texts);
    const at = path.join(scratch.folder(), 'texts-0.bin');
    const file = written(chunks, texts, at);
    file.sync();
    const before = new StoredTokenCounts(file);
    await before.catchUp(() => Promise.resolve());
    const counted = storedCounts(before, chunks, texts);
    file.close();
    const reopened = readerOf(file, chunks);
    try {
      const after = new StoredTokenCounts(reopened);
      await after.catchUp(() => Promise.resolve());
      assert.deepEqual(storedCounts(after, chunks, texts), counted);
      assert.ok(counted.flat().every((count) => typeof count === 'number'));
    } finally {
      reopened.close();
    }
  });

  /** The committed texts of `file` (closed), opened again by a reader. */
  function readerOf(file: TextsFile, chunks: readonly ChunkMeta[]): TextsFile {
    const ids = new Map(chunks.map((meta) => [meta.id, meta.id]));
    return TextsFile.load(
      file.path!,
      file.bytes,
      { size: ids.size, idOf: (id) => ids.get(id) },
      false,
    );
  }

  /** Each chunk's stored header count and line counts (undefined where none is stored). */
  function storedCounts(
    stored: StoredTokenCounts,
    chunks: readonly ChunkMeta[],
    texts: readonly string[],
  ): (number | undefined)[][] {
    return chunks.map((meta, i) => {
      const entry = stored.entryOf(meta.id);
      const lines = texts[i]!.split('\n').map((_, index) => stored.lineTokens(entry, index));
      return [stored.headerTokens(entry), ...lines];
    });
  }

  /** What counting `texts` afresh stores, in a texts file of their own. */
  async function freshCounts(chunks: readonly ChunkMeta[], texts: readonly string[]) {
    const file = written(chunks, texts, path.join(scratch.folder(), 'texts-0.bin'));
    try {
      const stored = new StoredTokenCounts(file);
      await stored.catchUp(() => Promise.resolve());
      return storedCounts(stored, chunks, texts);
    } finally {
      file.close();
    }
  }

  it("are saved beside the writer's texts file and taken back, for the records still there, by the next opening", async () => {
    const texts = manyTexts().slice(0, 30);
    const chunks = chunksOf(texts);
    const at = path.join(scratch.folder(), 'texts-0.bin');
    const first = written(chunks, texts, at);
    const saving = await captureLogs(async () => {
      await new StoredTokenCounts(first).catchUp(() => Promise.resolve());
    });
    first.close();
    assert.equal(eventsNamed(saving.events, 'token_counts_saved')[0]?.records, chunks.length);
    assert.ok(existsSync(`${at}.counts`));

    // the same texts written again, one changed without changing its length: a write cut short
    // and done over puts another record at the offset the saved counts name
    const changed = 7;
    const texts2 = texts.map((text, i) =>
      i === changed ? text.replace('compute', 'computf') : text,
    );
    const second = written(chunks, texts2, at);
    try {
      const stored = new StoredTokenCounts(second);
      const reopening = await captureLogs(() => stored.catchUp(() => Promise.resolve()));
      // the records before the changed one are taken back; it and those after it are counted
      assert.equal(eventsNamed(reopening.events, 'token_counts_taken_back')[0]?.records, changed);
      assert.equal(
        eventsNamed(reopening.events, 'token_counts_caught_up')[0]?.records,
        chunks.length - changed,
      );
      assert.deepEqual(storedCounts(stored, chunks, texts2), await freshCounts(chunks, texts2));
      assert.notDeepEqual(
        storedCounts(stored, chunks, texts2)[changed],
        (await freshCounts(chunks, texts))[changed],
      );
    } finally {
      second.close();
    }
  });

  it('saved and then damaged, or of a reader, are counted again, and a reader saves none', async () => {
    const texts = manyTexts().slice(0, 12);
    const chunks = chunksOf(texts);
    const at = path.join(scratch.folder(), 'texts-0.bin');
    const file = written(chunks, texts, at);
    file.sync();
    await new StoredTokenCounts(file).catchUp(() => Promise.resolve());
    file.close();
    const fd = openSync(`${at}.counts`, 'r+');
    writeSync(fd, Buffer.from([0xff]), 0, 1, 40);
    closeSync(fd);
    const reader = readerOf(file, chunks);
    try {
      const stored = new StoredTokenCounts(reader);
      const { events } = await captureLogs(() => stored.catchUp(() => Promise.resolve()));
      assert.equal(eventsNamed(events, 'token_counts_not_read')[0]?.code, 'index_corrupt');
      assert.equal(eventsNamed(events, 'token_counts_caught_up')[0]?.records, chunks.length);
      assert.equal(eventsNamed(events, 'token_counts_saved').length, 0);
      assert.deepEqual(storedCounts(stored, chunks, texts), await freshCounts(chunks, texts));
    } finally {
      reader.close();
    }
  });

  it('skip a damaged record, leaving its chunk to question time, and count the records after it', async () => {
    const texts = manyTexts().slice(0, 20);
    const chunks = chunksOf(texts);
    const at = path.join(scratch.folder(), 'texts-0.bin');
    const file = written(chunks, texts, at);
    file.sync();
    try {
      const damaged = chunks[3]!.id;
      // one byte of its text changed on disk: the record's checksum no longer holds
      const fd = openSync(at, 'r+');
      writeSync(fd, Buffer.from('#'), 0, 1, file.recordOf(damaged)! + 16);
      closeSync(fd);
      const stored = new StoredTokenCounts(file);
      await stored.catchUp(() => Promise.resolve());
      const entry = stored.entryOf(damaged);
      assert.equal(stored.headerTokens(entry), undefined);
      assert.equal(stored.lineTokens(entry, 0), undefined);
      for (const meta of chunks.slice(4)) assert.ok(stored.entryOf(meta.id) >= 0, meta.id);
      const saved = chunks[10]!;
      file.write([], [{ id: saved.id, text: 'def saved():\n    return 1' }]);
      await stored.catchUp(() => Promise.resolve());
      const savedEntry = stored.entryOf(saved.id);
      assert.equal(
        stored.lineTokens(savedEntry, 0),
        tiktoken.encode(' def saved():\n', [], []).length,
      );
    } finally {
      file.close();
    }
  });
});

describe("the engine's background token count", () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  /** The engine `open` gives, once it has counted: asserts it took the saved counts back and counted nothing. */
  const reopenedTakingCountsBack = async (open: () => Promise<Engine>): Promise<Engine> => {
    const { events, result } = await captureLogs(async () => {
      const engine = await open();
      await engine.countContextTokens();
      return engine;
    });
    assert.ok(Number(eventsNamed(events, 'token_counts_taken_back')[0]?.records) > 0);
    assert.equal(eventsNamed(events, 'token_counts_caught_up').length, 0, 'nothing counted again');
    return result;
  };

  it('answers as counting at question time does: before it, after it, after a save, reopened', async () => {
    const root = scratch.tree({
      'app/flags.py':
        'import os\n\n\ndef parse_flags(argv):\n    """Parse the flags: ünïcödé, 日本語."""\n    return [a for a in argv if a.startswith("--")]\n\n\nclass Flags:\n    def known(self):\n        return {"verbose", "quiet"}\n',
      'app/server.go':
        'package app\n\n// Serve parses the flags and answers.\nfunc Serve(flags []string) error {\n\treturn nil // 🎉\n}\n',
      'app/cli.ts':
        'export function parseFlags(argv: string[]): string[] {\n  return argv.filter((arg) => arg.startsWith("--"));\n}\n',
    });
    const storeDir = path.join(scratch.folder('oracle-store-'), 'store');
    const question = 'where are the flags parsed';
    let engine = await openEngine(scratch, root, { storeDir });
    const ask = async () => unwrap(await engine.search({ query: question })).context;
    try {
      unwrap(await engine.index());
      const before = await ask();
      assert.ok(before.items.length > 0);
      const first = await captureLogs(() => engine.countContextTokens());
      assert.ok(eventsNamed(first.events, 'token_counts_caught_up').length > 0);
      assert.deepEqual(await ask(), before);

      writeFileSync(
        path.join(root, 'app/flags.py'),
        'def parse_flags(argv):\n    return [a for a in argv if a.startswith("--") or a == "-v"]\n',
      );
      unwrap(await engine.updateFiles(['app/flags.py']));
      const saved = await ask();
      const second = await captureLogs(() => engine.countContextTokens());
      const recounted = eventsNamed(second.events, 'token_counts_caught_up');
      assert.ok(recounted.length > 0 && Number(recounted[0]!.records) > 0);
      assert.deepEqual(await ask(), saved);

      engine.dispose();
      engine = await reopenedTakingCountsBack(() => openEngine(scratch, root, { storeDir }));
      assert.deepEqual(await ask(), saved);
    } finally {
      engine.dispose();
    }
  });

  it('made after a few saves are saved once the engine idles, and the next opening counts nothing', async () => {
    const root = scratch.tree(
      Object.fromEntries(
        Array.from({ length: 16 }, (_, i) => [
          `pkg/mod${i}.py`,
          `def first_${i}(x):\n    return x + ${i}\n\n\ndef second_${i}(y):\n    return y * ${i}\n`,
        ]),
      ),
    );
    const storeDir = path.join(scratch.folder('oracle-store-'), 'store');
    let engine = await openEngine(scratch, root, { storeDir });
    try {
      unwrap(await engine.index());
      await engine.countContextTokens();
      writeFileSync(
        path.join(root, 'pkg/mod0.py'),
        'def first_0(x):\n    return x - 1\n\n\ndef second_0(y):\n    return y * 0\n',
      );
      unwrap(await engine.updateFiles(['pkg/mod0.py']));
      const counting = await captureLogs(() => engine.countContextTokens());
      assert.ok(Number(eventsNamed(counting.events, 'token_counts_caught_up')[0]?.records) > 0);
      // too few of all the records for the pass to save them itself
      assert.equal(eventsNamed(counting.events, 'token_counts_saved').length, 0);
      const idle = await captureLogs(() => engine.saveForNextOpening());
      assert.equal(eventsNamed(idle.events, 'token_counts_saved').length, 1);
      const again = await captureLogs(() => engine.saveForNextOpening());
      assert.equal(
        eventsNamed(again.events, 'token_counts_saved').length,
        0,
        'nothing new to save',
      );

      engine.dispose();
      engine = await reopenedTakingCountsBack(() => openEngine(scratch, root, { storeDir }));
    } finally {
      engine.dispose();
    }
  });

  it("are kept beside the store's texts file, and a counts file of another generation is removed", async () => {
    const root = scratch.tree({
      'app/a.py': 'def a():\n    return 1\n',
      'app/b.ts': 'export const b = () => 2;\n',
    });
    const storeDir = path.join(scratch.folder('oracle-store-'), 'store');
    const countsFiles = () => readdirSync(storeDir).filter((name) => name.endsWith('.counts'));
    let engine = await openEngine(scratch, root, { storeDir });
    try {
      unwrap(await engine.index());
      await engine.countContextTokens();
      const kept = countsFiles();
      assert.equal(kept.length, 1);
      assert.ok(existsSync(path.join(storeDir, kept[0]!.replace(/\.counts$/, ''))));
      engine.dispose();
      writeFileSync(path.join(storeDir, 'texts-99.bin.counts'), 'left by an older generation');
      const { events } = await captureLogs(async () => {
        engine = await openEngine(scratch, root, { storeDir });
        await engine.countContextTokens();
      });
      assert.deepEqual(countsFiles(), kept);
      // the store's own counts file was kept through the opening's clean-up, and read
      assert.ok(Number(eventsNamed(events, 'token_counts_taken_back')[0]?.records) > 0);
      assert.equal(eventsNamed(events, 'token_counts_saved').length, 0);
    } finally {
      engine.dispose();
    }
  });
});
