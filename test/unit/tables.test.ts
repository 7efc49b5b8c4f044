import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { Chunk } from '../../src/engine/model';
import { Tables } from '../../src/engine/store/tables';
import { Scratch } from '../helpers/workspace';

function chunk(i: number): Chunk {
  return {
    id: `f${i % 500}.py::None::f${i}::function`,
    level: 'function',
    filePath: `f${i % 500}.py`,
    directoryPath: '.',
    language: 'python',
    className: null,
    functionName: `f${i}`,
    startLine: 1,
    endLine: 2,
    parentDirectoryId: null,
    parentFileId: `f${i % 500}.py::None::None::file`,
    parentClassId: null,
    content: `def f${i}():\n    return ${i}\n`,
    fullContent: null,
    isSummarized: false,
    originalLineCount: null,
    segments: null,
  };
}

describe('LanceDB tables', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('indexes the path and id columns once a table is large, and deletes still work', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), 4, true);
    try {
      await tables.addChunks(
        Array.from({ length: 19_000 }, (_, i) => chunk(i)),
        null,
      );
      assert.equal(await tables.ensureIndexes(), false, 'small tables are left alone');
      await tables.addChunks(
        Array.from({ length: 2_000 }, (_, i) => chunk(19_000 + i)),
        null,
      );
      assert.equal(await tables.ensureIndexes(), true);
      assert.equal(await tables.ensureIndexes(), false, 'created once');
      await tables.deleteFiles(['f7.py']);
      assert.equal((await tables.counts()).chunks, 21_000 - 42);
    } finally {
      tables.close();
    }
  });

  it('compacts tables that many small updates have fragmented', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
    try {
      for (let i = 0; i < 70; i++) await tables.addChunks([chunk(i)], null);
      assert.equal(await tables.needsOptimize(), true);
      await tables.compact();
      assert.equal(await tables.needsOptimize(), false);
      assert.equal((await tables.counts()).chunks, 70);
    } finally {
      tables.close();
    }
  });

  it('keeps the committed versions when a clean-up runs after newer ones were written', async () => {
    const tables = await Tables.open(path.join(scratch.folder(), 'lance'), null, true);
    try {
      for (let i = 0; i < 4; i++) await tables.addChunks([chunk(i)], null);
      // versions are dated to the millisecond: the committed one comes clearly later
      await new Promise((resolve) => setTimeout(resolve, 20));
      await tables.addChunks([chunk(4)], null);
      const committed = await tables.versions();
      // versions written after the commit, as LanceDB's own optimize may write
      await tables.addChunks([chunk(5)], null);
      await tables.deleteFiles(['f0.py']);
      const before = await tables.versionCount();
      await tables.cleanup(committed);
      assert.ok((await tables.versionCount()) < before, 'older versions are gone');
      await tables.checkout(committed);
      assert.equal((await tables.counts()).chunks, 5, 'the committed version is still readable');
      assert.equal(await tables.restore(committed), true);
      assert.equal((await tables.counts()).chunks, 5);
    } finally {
      tables.close();
    }
  });
});
