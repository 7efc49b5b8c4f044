import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import type { ChunkLevel } from '../../../src/engine/model';
import { KnownVectors } from '../../../src/engine/store/known-vectors';
import { chunkOf } from '../../helpers/chunks';

const fileChunk = (id: string, filePath: string) => chunkOf({ id, filePath, content: id });
const folderChunk = (id: string) =>
  chunkOf({ id, level: 'directory', filePath: null, directoryPath: id, content: id });
const vector = (seed: number) => Float32Array.from([seed, seed + 1]);

describe('known vectors', () => {
  it("gives back a save's written vectors, and reads the ids it does not know", () => {
    const known = new KnownVectors(2);
    const chunks = [fileChunk('a1', 'a.py'), fileChunk('a2', 'a.py'), folderChunk('src')];
    const written = new Map(chunks.map((chunk, i) => [chunk.id, vector(i * 10)]));
    known.written(chunks, written);
    const taken = known.take(['src', 'a1', 'other', 'a1']);
    assert.deepEqual(taken.ids, ['src', 'a1']);
    assert.deepEqual(taken.levels, ['directory', 'function']);
    assert.deepEqual([...taken.values], [20, 21, 0, 1]);
    assert.deepEqual(taken.missing, ['other']);
    // what was written is a copy: the writer's buffer may be reused
    written.get('a1')!.fill(-1);
    assert.deepEqual([...known.take(['a1']).values], [0, 1]);
  });

  it('lets go of a row before it is deleted or written again, by id or by file', () => {
    const known = new KnownVectors(2);
    const chunks = [fileChunk('a1', 'a.py'), fileChunk('b1', 'b.py'), folderChunk('src')];
    known.written(chunks, new Map(chunks.map((chunk, i) => [chunk.id, vector(i)])));
    known.forgetFiles(['a.py']);
    assert.deepEqual(known.take(['a1', 'b1', 'src']).missing, ['a1']);
    known.forget(['src']);
    assert.deepEqual(known.take(['a1', 'b1', 'src']).missing, ['a1', 'src']);
    known.clear();
    assert.equal(known.size, 0);
  });

  it('keeps the folders a read meets, unless a change overtook the read', () => {
    const known = new KnownVectors(2);
    const rows = {
      ids: ['src', 'a1'],
      levels: ['directory', 'function'] as const,
      values: Float32Array.from([1, 2, 3, 4]),
    };
    const overtaken = known.mark();
    known.forget(['x']);
    known.read({ ...rows, levels: [...rows.levels] }, overtaken);
    assert.equal(known.size, 0, 'a read older than a change kept its rows');
    known.read({ ...rows, levels: [...rows.levels] }, known.mark());
    const taken = known.take(['src', 'a1']);
    assert.deepEqual(taken.ids, ['src']);
    assert.deepEqual([...taken.values], [1, 2]);
    assert.deepEqual(taken.missing, ['a1'], "a file's rows are kept only when written");
  });

  it("keeps the folders a read met through many saves, letting earlier saves' rows go", () => {
    // room for 64 rows of 2 dimensions, 40 of them folders
    const known = new KnownVectors(2, 64 * 2 * 4);
    const ids = Array.from({ length: 40 }, (_, i) => `folder${i}`);
    known.read(
      { ids, levels: ids.map(() => 'directory'), values: new Float32Array(80).fill(1) },
      known.mark(),
    );
    for (let save = 0; save < 20; save++) {
      const chunks = Array.from({ length: 8 }, (_, i) => fileChunk(`s${save}.${i}`, `s${save}.py`));
      known.forget(chunks.map((chunk) => chunk.id));
      known.written(chunks, new Map(chunks.map((chunk, i) => [chunk.id, vector(i)])));
      assert.ok(known.size <= 64, `${known.size} rows kept`);
      assert.deepEqual(known.take([...ids, ...chunks.map((chunk) => chunk.id)]).missing, []);
    }
    // a save that no longer fits beside the folders is read from the table
    const crowded = new KnownVectors(2, 8 * 2 * 4);
    const folders = Array.from({ length: 8 }, (_, i) => `f${i}`);
    crowded.read(
      { ids: folders, levels: folders.map(() => 'directory'), values: new Float32Array(16) },
      crowded.mark(),
    );
    crowded.written([fileChunk('a1', 'a.py')], new Map([['a1', vector(1)]]));
    assert.deepEqual(crowded.take(['a1', 'f0']).missing, ['a1']);
  });

  it("keeps no index run's batch, and stays within its bytes", () => {
    // room for 64 rows of 2 dimensions: a write of more than 8 is an index run's
    const known = new KnownVectors(2, 64 * 2 * 4);
    const batch = Array.from({ length: 9 }, (_, i) => fileChunk(`big${i}`, 'big.py'));
    known.written(batch, new Map(batch.map((chunk, i) => [chunk.id, vector(i)])));
    assert.equal(known.size, 0);
    for (let save = 0; save < 20; save++) {
      const chunks = Array.from({ length: 8 }, (_, i) => fileChunk(`s${save}.${i}`, `s${save}.py`));
      known.written(chunks, new Map(chunks.map((chunk, i) => [chunk.id, vector(i)])));
      assert.ok(known.size <= 64, `${known.size} rows kept`);
      assert.equal(known.take(chunks.map((chunk) => chunk.id)).missing.length, 0);
    }
  });

  it('answers as a scan of every kept row by file would, through any writes, reads and forgets', () => {
    // the rows a save writes and a read meets: few ids, files and folders, so that they repeat
    const fileOf: Record<string, string | null> = {
      a1: 'a.py',
      a2: 'a.py',
      a3: 'a.py',
      b1: 'b.py',
      b2: 'b.py',
      c1: 'c.py',
      c2: 'c.py',
      d1: 'd.py',
      src: null,
      lib: null,
      test: null,
      docs: null,
    };
    const ids = Object.keys(fileOf);
    const levelOf = (id: string): ChunkLevel => (fileOf[id] ? 'function' : 'directory');
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('written' as const), ids: fc.subarray(ids), seed: fc.nat(9) }),
      fc.record({ kind: fc.constant('forget' as const), ids: fc.subarray(ids) }),
      fc.record({
        kind: fc.constant('forgetFiles' as const),
        paths: fc.subarray(['a.py', 'b.py', 'c.py', 'd.py']),
      }),
      fc.record({ kind: fc.constant('read' as const), ids: fc.subarray(ids), seed: fc.nat(9) }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 40 }), (operations) => {
        // room for 8 rows of 2 dimensions: a write of more than one row is an index run's
        const known = new KnownVectors(2, 8 * 2 * 4);
        const model = new Map<string, { file: string | null; values: number[] }>();
        for (const step of operations) {
          if (step.kind === 'written') {
            const chunks = step.ids.map((id) =>
              fileOf[id] ? fileChunk(id, fileOf[id]!) : folderChunk(id),
            );
            known.written(chunks, new Map(step.ids.map((id) => [id, vector(step.seed)])));
            if (chunks.length > 1) continue;
            if (model.size + chunks.length > 8)
              for (const [id] of model) if (fileOf[id] !== null) model.delete(id);
            if (model.size + chunks.length > 8) continue;
            for (const id of step.ids)
              model.set(id, { file: fileOf[id]!, values: [...vector(step.seed)] });
          } else if (step.kind === 'forget') {
            known.forget(step.ids);
            for (const id of step.ids) model.delete(id);
          } else if (step.kind === 'forgetFiles') {
            known.forgetFiles(step.paths);
            for (const [id, kept] of model)
              if (kept.file !== null && step.paths.includes(kept.file)) model.delete(id);
          } else if (step.kind === 'read') {
            const values = new Float32Array(step.ids.length * 2).fill(step.seed);
            known.read({ ids: step.ids, levels: step.ids.map(levelOf), values }, known.mark());
            for (const id of step.ids)
              if (levelOf(id) === 'directory' && model.size < 8)
                model.set(id, { file: null, values: [step.seed, step.seed] });
          } else {
            known.clear();
            model.clear();
          }
          assert.equal(known.size, model.size);
          const taken = known.take(ids);
          assert.deepEqual(
            taken.missing,
            ids.filter((id) => !model.has(id)),
          );
          taken.ids.forEach((id, row) =>
            assert.deepEqual(
              [...taken.values.subarray(row * 2, row * 2 + 2)],
              model.get(id)!.values,
            ),
          );
        }
      }),
      { numRuns: 500 },
    );
  });
});
