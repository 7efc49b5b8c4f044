import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import * as lancedb from '@lancedb/lancedb';
import type { Engine } from '../../src/engine/engine';
import { readManifest } from '../../src/engine/store/manifest';
import { Tables } from '../../src/engine/store/tables';
import { unwrap } from '../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { freshSnapshot, storeSnapshot } from '../helpers/snapshot';
import { openEngine, Scratch } from '../helpers/workspace';

const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');

describe('store upkeep after a write', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  /** Enough definitions for both tables to get their B-tree indexes. */
  function largeTree(): string {
    const many = Array.from({ length: 21_000 }, (_, i) => `def generated_${i}():\n    pass\n`);
    return scratch.tree({
      'gen/many.py': many.join('\n'),
      'app/main.py': 'def main():\n    return 1\n',
    });
  }

  it('keeps the table indexes a first index created: the next save neither rolls back nor rebuilds them', async () => {
    const root = largeTree();
    const engine = await openEngine(scratch, root);
    try {
      const cold = await captureLogs(async () => unwrap(await engine.index()));
      assert.equal(eventsNamed(cold.events, 'table_indexes_created').length, 1);

      writeFileSync(path.join(root, 'app/main.py'), 'def main():\n    return 2\n');
      const save = await captureLogs(async () => unwrap(await engine.updateFiles(['app/main.py'])));
      assert.deepEqual(eventsNamed(save.events, 'index_recovered_interrupted_write'), []);
      assert.deepEqual(eventsNamed(save.events, 'table_indexes_created'), []);
      assert.deepEqual(engine.notices, []);

      assert.deepEqual(await storeSnapshot(engine), await freshSnapshot(scratch, root));
    } finally {
      engine.dispose();
    }
  });

  it('builds the indexes before the commit, which names them: a first index commits once', async () => {
    const root = largeTree();
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      const committed = await committedIndexes(engine);
      assert.equal(committed.generation, 1, 'no second commit for the indexes');
      assert.deepEqual(committed.columns, { chunks: ['filePath', 'id'], facts: ['id', 'path'] });
    } finally {
      engine.dispose();
    }
  });

  it('commits the rows when the indexes fail before the commit, and makes them after it', async () => {
    const root = largeTree();
    const engine = await openEngine(scratch, root);
    const ensureIndexes = Tables.prototype.ensureIndexes;
    let failures = 1;
    Tables.prototype.ensureIndexes = function (this: Tables, ...args) {
      if (failures-- > 0) return Promise.reject(new Error('no room for the index'));
      return ensureIndexes.apply(this, args);
    };
    try {
      const cold = await captureLogs(async () => unwrap(await engine.index()));
      const deferred = eventsNamed(cold.events, 'table_indexes_deferred');
      assert.deepEqual(
        deferred.map((event) => event.error),
        ['no room for the index'],
      );
      assert.equal(eventsNamed(cold.events, 'table_indexes_created').length, 1);
      assert.deepEqual((await committedIndexes(engine)).columns, {
        chunks: ['filePath', 'id'],
        facts: ['id', 'path'],
      });
      assert.deepEqual(await storeSnapshot(engine), await freshSnapshot(scratch, root));
    } finally {
      Tables.prototype.ensureIndexes = ensureIndexes;
      engine.dispose();
    }
  });

  it("learns the tables' oldest versions as it opens: the first save lists none, and counts them as a listing does", async () => {
    // enough files that one file's save is too small a change to compact the tables after it
    const modules = Array.from({ length: 60 }, (_, i) => [
      `lib/module_${i}.py`,
      Array.from({ length: 10 }, (_, j) => `def f_${i}_${j}():\n    return ${j}\n`).join('\n'),
    ]);
    const root = scratch.tree({
      ...Object.fromEntries(modules),
      'app/main.py': 'def main():\n    return 1\n',
    });
    const storeDir = path.join(scratch.folder(), 'store');
    const save = async (engine: Engine, value: number) => {
      writeFileSync(path.join(root, 'app/main.py'), `def main():\n    return ${value}\n`);
      unwrap(await engine.updateFiles(['app/main.py']));
    };
    const first = await openEngine(scratch, root, { storeDir });
    try {
      unwrap(await first.index());
      for (let value = 2; value < 5; value++) await save(first, value);
    } finally {
      first.dispose();
    }
    const db = await lancedb.connect(path.join(storeDir, 'lance'));
    const tableClass = Object.getPrototypeOf(await db.openTable('chunks')) as lancedb.Table;
    const listVersions = tableClass.listVersions;
    let listings = 0;
    const engine = await openEngine(scratch, root, { storeDir });
    try {
      tableClass.listVersions = function (this: lancedb.Table) {
        listings++;
        return listVersions.apply(this);
      };
      const saved = await captureLogs(() => save(engine, 5));
      assert.deepEqual(eventsNamed(saved.events, 'table_versions_cleaned'), []);
      assert.equal(listings, 0, 'the save listed the versions');
      tableClass.listVersions = listVersions;
      const onDisk = await Promise.all(
        ['chunks', 'facts'].map(
          async (name) => (await (await db.openTable(name)).listVersions()).length,
        ),
      );
      // clean-ups removed the first versions: counting from version 1 would be wrong
      const latest = await engine.store.tables.versions();
      assert.ok(
        latest.chunks > onDisk[0]!,
        `versions ${latest.chunks} of chunks, ${onDisk[0]} on disk`,
      );
      assert.equal(await engine.store.tables.versionCount(), Math.max(...onDisk));
    } finally {
      tableClass.listVersions = listVersions;
      engine.dispose();
      db.close();
    }
  });

  it('recovers from a process killed while the indexes build before the commit', async function () {
    this.timeout(120_000);
    const root = largeTree();
    const storeDir = path.join(scratch.folder(), 'store');
    const child = spawn(
      process.execPath,
      [CLI, 'index', root, '--store', storeDir, '--model', 'none', '--log-level', 'info'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // the indexes start as soon as the last rows are written
    for await (const line of createInterface({ input: child.stderr })) {
      if (!line.includes('"stage":"write_facts"')) continue;
      child.kill('SIGKILL');
      break;
    }
    await exited;
    assert.ok(existsSync(path.join(storeDir, 'pending.json')), 'killed before its commit');

    const engine = await openEngine(scratch, root, { storeDir });
    const fresh = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      unwrap(await fresh.index());
      assert.deepEqual(await storeSnapshot(engine), await storeSnapshot(fresh));
      assert.deepEqual((await committedIndexes(engine)).columns, {
        chunks: ['filePath', 'id'],
        facts: ['id', 'path'],
      });
    } finally {
      engine.dispose();
      fresh.dispose();
    }
  });
});

/** The manifest's generation, and the indexed columns of each table at the versions it names. */
async function committedIndexes(engine: Engine): Promise<{
  generation: number;
  columns: { chunks: string[]; facts: string[] };
}> {
  const read = await readManifest(path.join(engine.storeDir, 'manifest.json'));
  assert.equal(read.kind, 'ok');
  const versions = read.manifest.tableVersions!;
  const db = await lancedb.connect(path.join(engine.storeDir, 'lance'));
  try {
    const columnsAt = async (name: 'chunks' | 'facts') => {
      const table = await db.openTable(name);
      try {
        await table.checkout(versions[name]);
        return (await table.listIndices()).flatMap((index) => index.columns).sort();
      } finally {
        table.close();
      }
    };
    return {
      generation: read.manifest.generation,
      columns: { chunks: await columnsAt('chunks'), facts: await columnsAt('facts') },
    };
  } finally {
    db.close();
  }
}
