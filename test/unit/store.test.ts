import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import * as lancedb from '@lancedb/lancedb';
import {
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { unwrap } from '../../src/engine/util/result';
import { SCHEMA_VERSION } from '../../src/engine/store/manifest';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { freshSnapshot, storeSnapshot } from '../helpers/snapshot';
import { openEngine, POTION_MODEL, Scratch, writeTree } from '../helpers/workspace';

describe('index store', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  async function indexedStore(): Promise<{ root: string; storeDir: string; snapshot: unknown }> {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      return { root, storeDir: engine.storeDir, snapshot: await storeSnapshot(engine) };
    } finally {
      engine.dispose();
    }
  }

  async function reopenAndIndex(
    root: string,
    storeDir: string,
  ): Promise<{ engine: Engine; notices: readonly string[] }> {
    const engine = await openEngine(scratch, root, { storeDir });
    unwrap(await engine.index());
    return { engine, notices: engine.notices };
  }

  /** The store's current texts file (the only one a committed store keeps). */
  function textsFileOf(storeDir: string): string {
    const names = readdirSync(storeDir).filter((name) => /^texts-\d+\.bin$/.test(name));
    assert.equal(names.length, 1, names.join(', '));
    return names[0]!;
  }

  function editManifest(
    storeDir: string,
    change: (manifest: Record<string, unknown>) => void,
  ): void {
    const file = path.join(storeDir, 'manifest.json');
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    change(manifest);
    writeFileSync(file, JSON.stringify(manifest));
  }

  it('compacts its tables after a change that rewrote much, never after a first index', async () => {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root);
    try {
      const cold = await captureLogs(async () => unwrap(await engine.index()));
      assert.equal(eventsNamed(cold.events, 'table_versions_cleaned').length, 0);
      // every file rewritten: most rows of the tables are deleted ones now
      const files = readdirSync(path.join(root, 'shop')).map((name) => `shop/${name}`);
      for (const file of files) writeFileSync(path.join(root, file), '"""Rewritten."""\n\nX = 1\n');
      const change = await captureLogs(async () => unwrap(await engine.updateFiles(files)));
      assert.equal(eventsNamed(change.events, 'table_versions_cleaned').length, 1);
      assert.deepEqual(await storeSnapshot(engine), await freshSnapshot(scratch, root));
    } finally {
      engine.dispose();
    }
  });

  it('writes the manifest atomically, leaving no temporary files', async () => {
    const { storeDir } = await indexedStore();
    assert.deepEqual(
      readdirSync(storeDir).filter((name) => name.includes('.tmp-')),
      [],
    );
    const manifest = JSON.parse(readFileSync(path.join(storeDir, 'manifest.json'), 'utf8'));
    assert.equal(manifest.generation, 1);
    const files = JSON.parse(readFileSync(path.join(storeDir, 'files-1.json'), 'utf8'));
    assert.equal(Object.keys(files).length, 8);
    assert.ok(
      !existsSync(path.join(storeDir, 'pending.json')),
      'no write is pending after a commit',
    );
  });

  for (const [label, damage, message] of [
    [
      'an older schema',
      (dir: string) => editManifest(dir, (m) => (m.schemaVersion = 0)),
      new RegExp(`index format changed \\(version 0 → ${SCHEMA_VERSION}\\)`),
    ],
    [
      'another parser version',
      (dir: string) => editManifest(dir, (m) => (m.parserVersion = 'web-tree-sitter@0.20')),
      /parser changed/,
    ],
    [
      'a manifest that is not JSON',
      (dir: string) => writeFileSync(path.join(dir, 'manifest.json'), '{"schemaVersion": 1, "fi'),
      /could not be read \(manifest is not valid JSON/,
    ],
    [
      'damaged tables',
      (dir: string) => rmSync(path.join(dir, 'lance', 'chunks.lance'), { recursive: true }),
      /was damaged/,
    ],
    [
      'a damaged lexical log',
      (dir: string) => writeFileSync(path.join(dir, 'lexical-0.delta'), '{"remove": [\n{}\n'),
      /was damaged \(the lexical delta log holds \d+ bytes, \d+ were committed\)/,
    ],
    [
      'a torn texts file',
      (dir: string) => {
        const file = path.join(dir, textsFileOf(dir));
        truncateSync(file, statSync(file).size - 3);
      },
      /was damaged \(the texts file holds \d+ bytes, \d+ were committed\)/,
    ],
    [
      'a texts file changed after it was written',
      (dir: string) => {
        const file = path.join(dir, textsFileOf(dir));
        const bytes = readFileSync(file);
        bytes[bytes.length - 1] ^= 1;
        writeFileSync(file, bytes);
      },
      /was damaged \(the texts file is damaged at byte \d+\)/,
    ],
  ] as const) {
    it(`rebuilds a store with ${label}, saying why`, async () => {
      const { root, storeDir, snapshot } = await indexedStore();
      damage(storeDir);
      const { engine, notices } = await reopenAndIndex(root, storeDir);
      try {
        assert.ok(
          notices.some((notice) => message.test(notice)),
          notices.join('\n'),
        );
        assert.deepEqual(await storeSnapshot(engine), snapshot);
      } finally {
        engine.dispose();
      }
    });
  }

  it('restores a large index from its binary snapshot, and rebuilds when the snapshot is damaged', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 240; i++)
      files[`pkg${i % 12}/m${i}.py`] =
        `def f${i}(x):\n    """Turns ${i} into ${i + 1}."""\n    return g${(i + 1) % 240}(x) + ${i}\n`;
    const root = scratch.tree(files);
    const engine = await openEngine(scratch, root);
    const storeDir = engine.storeDir;
    let snapshot: unknown;
    try {
      unwrap(await engine.index());
      snapshot = await storeSnapshot(engine);
    } finally {
      engine.dispose();
    }
    const binary = readdirSync(storeDir).find((name) => /^lexical-\d+\.bin$/.test(name));
    assert.ok(binary, 'a run over 200 files writes a snapshot');
    const reopened = await openEngine(scratch, root, { storeDir });
    try {
      assert.deepEqual(reopened.notices, []);
      assert.deepEqual(await storeSnapshot(reopened), snapshot);
    } finally {
      reopened.dispose();
    }
    const bytes = readFileSync(path.join(storeDir, binary!));
    writeFileSync(path.join(storeDir, binary!), bytes.subarray(0, bytes.length - 16));
    const { engine: rebuilt, notices } = await reopenAndIndex(root, storeDir);
    try {
      assert.match(
        notices.join('\n'),
        /was damaged \(the lexical snapshot does not match its committed checksum\)/,
      );
      assert.deepEqual(await storeSnapshot(rebuilt), snapshot);
    } finally {
      rebuilt.dispose();
    }
  });

  it('rebuilds when the embedding model changes', async () => {
    const { root, storeDir } = await indexedStore();
    const engine = await openEngine(scratch, root, {
      storeDir,
      model: {
        kind: 'directory',
        path: POTION_MODEL,
      },
    });
    try {
      assert.match(
        engine.notices.join('\n'),
        /embedding model changed \(none → potion-base-2M \(64d\)\)/,
      );
    } finally {
      engine.dispose();
    }
  });

  it('lets one writer at a time update an index, with a clear message for the second', async () => {
    const { root, storeDir } = await indexedStore();
    const engine = await openEngine(scratch, root, { storeDir });
    try {
      const lock = unwrap(engine.store.lock());
      const second = await engine.index();
      assert.equal(second.ok, false);
      if (!second.ok) {
        assert.equal(second.error.code, 'index_locked');
        assert.match(
          second.error.message,
          /being updated by this process since .*try again when it finishes/,
        );
      }
      lock.dispose();
      assert.equal((await engine.index()).ok, true);
    } finally {
      engine.dispose();
    }
  });

  it('takes over a lock left by a process that died', async () => {
    const { root, storeDir } = await indexedStore();
    writeFileSync(
      path.join(storeDir, 'index.lock'),
      JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), startedAt: '2026-01-01T00:00:00Z' }),
    );
    const { result: engine, events } = await captureLogs(() =>
      openEngine(scratch, root, { storeDir }),
    );
    try {
      assert.equal((await engine.index()).ok, true);
      assert.equal(eventsNamed(events, 'stale_lock_removed').length, 1);
      assert.ok(
        !existsSync(path.join(storeDir, 'index.lock')),
        'the lock is released after the run',
      );
    } finally {
      engine.dispose();
    }
  });

  it('repairs a write that was interrupted before its commit', async () => {
    const { root, storeDir, snapshot } = await indexedStore();
    const engine = await openEngine(scratch, root, { storeDir });
    // What a crash leaves: files marked pending, their rows half rewritten, no commit.
    await engine.store.beginWrite(['shop/db.py', 'shop/api.py']);
    await engine.store.removeFiles(['shop/db.py']);
    engine.dispose();
    const { result, events } = await captureLogs(() => reopenAndIndex(root, storeDir));
    try {
      assert.equal(eventsNamed(events, 'index_recovered_interrupted_write')[0]?.files, 2);
      assert.deepEqual(await storeSnapshot(result.engine), snapshot);
      assert.ok(
        !existsSync(path.join(storeDir, 'pending.json')),
        'the journal is gone once repaired',
      );
    } finally {
      result.engine.dispose();
    }
  });

  it('holds each chunk text once: the chunks table has no text column, the texts file has them all', async () => {
    const { root, storeDir } = await indexedStore();
    const engine = await openEngine(scratch, root, { storeDir });
    try {
      const db = await lancedb.connect(path.join(storeDir, 'lance'));
      const chunks = await db.openTable('chunks');
      const columns = (await chunks.schema()).fields.map((field) => field.name);
      chunks.close();
      db.close();
      assert.ok(!columns.includes('content') && !columns.includes('fullContent'), String(columns));
      for (const id of engine.store.catalog.keys())
        assert.ok(unwrap(engine.store.texts.read(id)), `no text for ${id}`);
    } finally {
      engine.dispose();
    }
  });

  it('answers without a text damaged while the index is open, and rebuilds it on the next opening with a message', async () => {
    const { root, storeDir, snapshot } = await indexedStore();
    const engine = await openEngine(scratch, root, { storeDir });
    const file = path.join(storeDir, textsFileOf(storeDir));
    try {
      // every record holding the function changes on disk after the opening checked it
      const bytes = readFileSync(file);
      const name = Buffer.from('def get_connection');
      for (let at = bytes.indexOf(name); at >= 0; at = bytes.indexOf(name, at + 1))
        bytes[at] = 'D'.charCodeAt(0);
      writeFileSync(file, bytes);
      const { result, events } = await captureLogs(() =>
        engine.search({ query: 'get_connection' }),
      );
      assert.ok(unwrap(result).files.length > 0, 'the search still answers');
      assert.equal(eventsNamed(events, 'chunk_texts_damaged').length > 0, true);
    } finally {
      engine.dispose();
    }
    const { engine: reopened, notices } = await reopenAndIndex(root, storeDir);
    try {
      assert.match(
        notices.join('\n'),
        /damaged \(the texts file is damaged at byte \d+\).*rebuilt/,
      );
      assert.deepEqual(await storeSnapshot(reopened), snapshot);
    } finally {
      reopened.dispose();
    }
  });

  it('cuts off the texts an interrupted write appended, and reads the committed ones', async () => {
    const { root, storeDir, snapshot } = await indexedStore();
    const engine = await openEngine(scratch, root, { storeDir });
    const committed = statSync(path.join(storeDir, textsFileOf(storeDir))).size;
    // a crash after the rows and texts of a rewritten file were written, before the commit
    const [id, meta] = [...engine.store.catalog].find(([, m]) => m.filePath === 'shop/db.py')!;
    await engine.store.beginWrite(['shop/db.py']);
    await engine.store.apply({
      files: ['shop/db.py'],
      chunkIds: [],
      chunks: [{ ...meta, content: 'half written', fullContent: null }],
      vectors: null,
      lexical: [],
      facts: [],
    });
    assert.equal(unwrap(engine.store.texts.read(id)), 'half written');
    engine.dispose();
    assert.ok(statSync(path.join(storeDir, textsFileOf(storeDir))).size > committed);
    const { engine: reopened } = await reopenAndIndex(root, storeDir);
    try {
      assert.equal(statSync(path.join(storeDir, textsFileOf(storeDir))).size, committed);
      assert.deepEqual(await storeSnapshot(reopened), snapshot);
    } finally {
      reopened.dispose();
    }
  });

  it('recovers from a process killed in the middle of indexing', async function () {
    this.timeout(120_000);
    const root = scratch.folder('oracle-kill-');
    const files: Record<string, string> = {};
    for (let i = 0; i < 1500; i++)
      files[`pkg${i % 30}/mod${i}.py`] =
        `from .mod${(i + 1) % 1500} import f${(i + 1) % 1500}\n\n\ndef f${i}(x):\n    """Step ${i}."""\n    if x < 0:\n        raise ValueError("negative input to f${i}")\n    return f${(i + 1) % 1500}(x - 1)\n`;
    writeTree(root, files);
    const storeDir = path.join(scratch.folder(), 'store');
    const cli = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
    const child = spawn(
      process.execPath,
      [cli, 'index', root, '--store', storeDir, '--model', 'none'],
      { stdio: 'ignore' },
    );
    const exited = new Promise((resolve) => child.on('exit', resolve));
    // Kill it once it has started writing: the journal then lists the files it is rewriting.
    const journal = path.join(storeDir, 'pending.json');
    const writing = () =>
      existsSync(journal) &&
      (JSON.parse(readFileSync(journal, 'utf8') || '{}').files?.length ?? 0) > 0;
    for (let waited = 0; !writing() && waited < 60_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(writing(), 'the indexer began writing');
    await new Promise((resolve) => setTimeout(resolve, 300));
    child.kill('SIGKILL');
    await exited;
    assert.ok(writing(), 'killed before its commit');
    const { engine } = await reopenAndIndex(root, storeDir);
    const fresh = await openEngine(scratch, root);
    try {
      unwrap(await fresh.index());
      assert.deepEqual(await storeSnapshot(engine), await storeSnapshot(fresh));
      assert.equal(Object.keys(engine.store.manifest.files).length, 1500);
    } finally {
      engine.dispose();
      fresh.dispose();
    }
  });
});
