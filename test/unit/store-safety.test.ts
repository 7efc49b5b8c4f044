import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';
import { defaultStoreDir, Engine } from '../../src/engine/engine';
import { CALIBRATION_VERSION, readCalibration } from '../../src/engine/search/calibration';
import { acquireWriteLock, lockHolder } from '../../src/engine/store/lock';
import { osThreadId } from '../../src/engine/util/thread-priority';
import { unwrap } from '../../src/engine/util/result';
import { openEngine, Scratch } from '../helpers/workspace';

describe('store safety', () => {
  const scratch = new Scratch();
  let sleeper: ChildProcess;
  before(() => {
    sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  });
  after(() => {
    sleeper.kill('SIGKILL');
    scratch.cleanup();
  });

  /** Every file of a folder with its size and change time: what "nothing was written" compares. */
  function listing(folder: string, under = ''): string[] {
    return readdirSync(path.join(folder, under), { withFileTypes: true }).flatMap((entry) => {
      const relative = path.join(under, entry.name);
      if (entry.isDirectory()) return listing(folder, relative);
      const stat = statSync(path.join(folder, relative));
      return [`${relative} ${stat.size} ${stat.mtimeMs}`];
    });
  }

  function lockBy(storeDir: string, owner: Record<string, unknown>, ageMs = 0): string {
    const file = path.join(storeDir, 'index.lock');
    writeFileSync(file, JSON.stringify({ host: hostname(), startedAt: 'then', ...owner }));
    const when = new Date(Date.now() - ageMs);
    utimesSync(file, when, when);
    return file;
  }

  /** A new file with a function no fixture has, for "did the write land" checks. */
  function addZebraQuota(root: string): void {
    writeFileSync(
      path.join(root, 'shop', 'zoo.py'),
      'def zebra_quota(n):\n    """How many zebras fit."""\n    return n * 2\n',
    );
  }

  it('a reader, while another process holds the lock, writes nothing, even with the manifest gone', async () => {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root);
    const storeDir = engine.storeDir;
    unwrap(await engine.index());
    engine.dispose();
    lockBy(storeDir, { pid: sleeper.pid });
    writeFileSync(path.join(storeDir, 'pending.json'), '{"generation": 1, "files": ["x.py"]}');
    const before = listing(storeDir);

    const reader = await openEngine(scratch, root, { storeDir });
    try {
      assert.deepEqual(reader.notices, [], 'the committed index is served as it is');
      assert.equal(reader.stats().files, 8);
      const result = unwrap(await reader.search({ query: 'order total' }));
      assert.ok(result.spans.length > 0);
      assert.match(result.metadata.notices.join('\n'), /being updated by another process/);
    } finally {
      reader.dispose();
    }
    rmSync(path.join(storeDir, 'manifest.json'));
    const withoutManifest = listing(storeDir);
    const empty = await openEngine(scratch, root, { storeDir });
    try {
      assert.match(empty.notices.join('\n'), /being updated by another process/);
      assert.equal(empty.stats().files, 0);
    } finally {
      empty.dispose();
    }
    assert.deepEqual(listing(storeDir), withoutManifest, 'nothing was wiped or repaired');
    assert.notDeepEqual(before, withoutManifest);
  });

  it('a store opened while another process held the lock writes once the lock is free', async () => {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root);
    const storeDir = engine.storeDir;
    unwrap(await engine.index());
    engine.dispose();
    const lock = lockBy(storeDir, { pid: sleeper.pid });
    const reader = await openEngine(scratch, root, { storeDir });
    try {
      rmSync(lock);
      addZebraQuota(root);
      unwrap(await reader.updateFiles(['shop/zoo.py']));
      const spans = unwrap(await reader.search({ query: 'zebra_quota' })).spans;
      assert.ok(spans.some((span) => span.path === 'shop/zoo.py'));
    } finally {
      reader.dispose();
    }
  });

  it('sees the commits of another writer on the next search', async () => {
    const root = scratch.fixture('shop-py');
    const writer = await openEngine(scratch, root);
    unwrap(await writer.index());
    const reader = await openEngine(scratch, root, { storeDir: writer.storeDir });
    try {
      assert.equal(unwrap(await reader.search({ query: 'zebra_quota' })).spans.length, 0);
      addZebraQuota(root);
      unwrap(await writer.updateFiles(['shop/zoo.py']));
      const spans = unwrap(await reader.search({ query: 'zebra_quota' })).spans;
      assert.ok(spans.some((span) => span.path === 'shop/zoo.py'));
      assert.ok(reader.graph.factsInFile('shop/zoo.py').length > 0);
    } finally {
      reader.dispose();
      writer.dispose();
    }
  });

  it('refuses a --store folder that belongs to another root or is not a store, leaving it intact', async () => {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root);
    unwrap(await engine.index());
    engine.dispose();
    const before = listing(engine.storeDir);
    const other = scratch.fixture('shop-js');
    const refused = await Engine.open({
      root: other,
      storeDir: engine.storeDir,
      model: { kind: 'none' },
    });
    assert.equal(refused.ok, false);
    if (!refused.ok)
      assert.match(refused.error.message, /holds the index of .*choose another folder/);
    assert.deepEqual(listing(engine.storeDir), before);

    const documents = scratch.folder();
    writeFileSync(path.join(documents, 'thesis.tex'), 'precious');
    const notStore = await Engine.open({ root, storeDir: documents, model: { kind: 'none' } });
    assert.equal(notStore.ok, false);
    if (!notStore.ok)
      assert.match(notStore.error.message, /is not an index folder \(it holds thesis\.tex\)/);
    assert.deepEqual(readdirSync(documents), ['thesis.tex']);
  });

  it('expires locks of a dead or reused pid, an earlier boot and a silent host; keeps live ones', () => {
    const storeDir = scratch.folder();
    const live = lockBy(storeDir, { pid: sleeper.pid });
    assert.ok(lockHolder(live));
    const blocked = acquireWriteLock(live);
    assert.equal(blocked.ok, false);
    if (!blocked.ok)
      assert.match(
        blocked.error.message,
        /If no Code Oracle runs there any more, delete .*index\.lock/,
      );
    for (const [label, owner, age] of [
      ['a dead pid', { pid: 2 ** 22 + 999 }, 0],
      ['a reused pid', { pid: sleeper.pid, processStart: 1 }, 0],
      ['an earlier boot', { pid: sleeper.pid, bootId: 'not-this-boot' }, 0],
      ['another host gone silent', { pid: 5, host: 'elsewhere' }, 3_600_000],
      ['a thread of this process that ended', { pid: process.pid, threadId: 2 ** 22 + 777 }, 0],
    ] as const) {
      const file = lockBy(storeDir, owner, age);
      assert.equal(lockHolder(file), null, label);
      const taken = acquireWriteLock(file);
      assert.ok(taken.ok, label);
      if (taken.ok) taken.value.dispose();
    }
    assert.ok(lockHolder(lockBy(storeDir, { pid: 5, host: 'elsewhere' })), 'a live other host');
    if (process.platform === 'linux')
      assert.ok(
        lockHolder(lockBy(storeDir, { pid: process.pid, threadId: osThreadId() })),
        'a live thread of this process',
      );
  });

  it('names the store of a 250-character folder within file name limits, and indexes it', async () => {
    const root = path.join(scratch.folder(), 'f'.repeat(250));
    mkdirSync(root);
    writeFileSync(path.join(root, 'a.py'), 'def alpha():\n    return 1\n');
    const storageRoot = scratch.folder();
    assert.ok(path.basename(defaultStoreDir(storageRoot, root)).length < 100);
    const engine = unwrap(
      await Engine.open({ root, storageRoot, model: { kind: 'none' }, workers: 0 }),
    );
    try {
      assert.equal(unwrap(await engine.index()).indexed, 1);
    } finally {
      engine.dispose();
    }
  });

  it('measures the retrievers again when a stored calibration is out of range', async () => {
    const storeDir = scratch.folder();
    const stored = {
      version: CALIBRATION_VERSION,
      modelId: 'm',
      functions: 10,
      questions: 40,
      lexicalMrr: 0.5,
      semanticMrr: 0.4,
      semanticShare: 0.3,
      semanticTrust: 0.6,
    };
    writeFileSync(path.join(storeDir, 'calibration.json'), JSON.stringify(stored));
    // a measure stored before changed files were counted reads as counting none
    assert.deepEqual(await readCalibration(storeDir), { ...stored, changedFiles: 0 });
    writeFileSync(
      path.join(storeDir, 'calibration.json'),
      JSON.stringify({ ...stored, semanticShare: 1e9 }),
    );
    assert.equal(await readCalibration(storeDir), null);
  });
});
