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
