import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import {
  emptyManifest,
  readManifest,
  truncateFilesLog,
  writeManifest,
  type FileEntry,
  type Manifest,
} from '../../src/engine/store/manifest';
import { unwrap } from '../../src/engine/util/result';
import { openEngine, Scratch } from '../helpers/workspace';

const entry = (chunks: number): FileEntry => ({
  hash: `h${chunks}`,
  size: chunks * 10,
  mtimeMs: chunks,
  language: 'python',
  skipped: null,
  chunks,
});

describe('file entries beside the manifest', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  async function read(file: string): Promise<Manifest> {
    const read = await readManifest(file);
    assert.equal(read.kind, 'ok', read.kind === 'corrupt' ? read.reason : '');
    return (read as { manifest: Manifest }).manifest;
  }

  it('reads back, after any commits, the entries committed, whether appended or snapshotted', async () => {
    const change = fc.dictionary(
      fc.constantFrom(...Array.from({ length: 300 }, (_, i) => `pkg/m${i}.py`)),
      fc.option(fc.nat({ max: 50 }).map(entry), { nil: null }),
      { maxKeys: 120 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(change, { minLength: 1, maxLength: 12 }), async (commits) => {
        const file = path.join(scratch.folder(), 'manifest.json');
        let manifest = await writeManifest(file, emptyManifest('/root', 'p'));
        const model: Record<string, FileEntry> = {};
        for (const commit of commits) {
          const changes = new Map(Object.entries(commit));
          for (const [name, value] of changes) {
            if (value) manifest.files[name] = value;
            else delete manifest.files[name];
            if (value) model[name] = value;
            else delete model[name];
          }
          manifest = await writeManifest(
            file,
            { ...manifest, generation: manifest.generation + 1 },
            changes,
          );
          assert.deepEqual((await read(file)).files, model);
        }
        // one snapshot generation and its delta are all that is left
        const logs = readdirSync(path.dirname(file)).filter((name) => name.startsWith('files-'));
        assert.ok(logs.every((name) => name.startsWith(`files-${manifest.filesLog.generation}.`)));
      }),
      { numRuns: 25 },
    );
  });

  it('appends a small change, and folds the log into a new snapshot once it has grown', async () => {
    const file = path.join(scratch.folder(), 'manifest.json');
    let manifest = emptyManifest('/root', 'p');
    for (let i = 0; i < 2000; i++) manifest.files[`pkg/m${i}.py`] = entry(i);
    manifest = await writeManifest(file, manifest);
    assert.deepEqual(manifest.filesLog, { generation: 1, deltaBytes: 0 });
    const generationsSeen = new Set<number>();
    for (let save = 0; save < 40; save++) {
      // a branch switch of 50 files at a time: the log outgrows half the snapshot within 40
      const changes = new Map(
        Array.from({ length: 50 }, (_, i) => [`pkg/m${save * 50 + i}.py`, entry(save)] as const),
      );
      for (const [name, value] of changes) manifest.files[name] = value;
      manifest = await writeManifest(file, manifest, changes);
      generationsSeen.add(manifest.filesLog.generation);
    }
    assert.ok(generationsSeen.size > 1, 'the delta was folded into a new snapshot');
    assert.ok(statSync(file).size < 2000, 'the manifest holds no file entries');
    assert.deepEqual((await read(file)).files, manifest.files);
  });

  it('ignores, then cuts, entries appended by a commit that never wrote its manifest', async () => {
    const file = path.join(scratch.folder(), 'manifest.json');
    let manifest = emptyManifest('/root', 'p');
    manifest.files['a.py'] = entry(1);
    manifest = await writeManifest(file, manifest);
    const committed = structuredClone(manifest.files);
    // the append of a commit cut short: the delta holds a line the manifest does not count
    const delta = path.join(path.dirname(file), `files-${manifest.filesLog.generation}.delta`);
    writeFileSync(delta, `${JSON.stringify({ 'b.py': entry(2) })}\n`);
    const reread = await read(file);
    assert.deepEqual(reread.files, committed);
    assert.equal(await truncateFilesLog(path.dirname(file), reread), true);
    assert.equal(readFileSync(delta, 'utf8'), '');
  });

  it('a save appends only the saved file to the log, and a reopened store reads the same entries', async () => {
    const root = scratch.tree({
      'a.py': 'def a():\n    return 1\n',
      'b.py': 'def b():\n    return 2\n',
    });
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      writeFileSync(path.join(root, 'a.py'), 'def a():\n    return 3\n');
      unwrap(await engine.updateFiles(['a.py']));
      const { filesLog } = engine.store.manifest;
      const delta = path.join(engine.storeDir, `files-${filesLog.generation}.delta`);
      assert.ok(existsSync(delta));
      const lines = readFileSync(delta, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      assert.deepEqual(Object.keys(lines.at(-1)), ['a.py']);
      const reopened = await openEngine(scratch, root, { storeDir: engine.storeDir });
      try {
        assert.deepEqual(reopened.store.manifest.files, engine.store.manifest.files);
      } finally {
        reopened.dispose();
      }
    } finally {
      engine.dispose();
    }
  });
});
