import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  lengthPrefixed,
  readSavedFile,
  savedFileHeader,
  writeChecksummed,
  type SavedFileKind,
} from '../../../src/engine/util/checksummed-file';
import { Scratch } from '../../helpers/workspace';

const KIND: SavedFileKind = { magic: 0x54534554, version: 2, headerBytes: 16 };

describe('saved files beside the index', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('give back what was written after a header of their kind, and say what is wrong otherwise', async () => {
    const file = path.join(scratch.folder(), 'thing.bin');
    assert.deepEqual(await readSavedFile(file, 'things', KIND), { ok: true, value: null });
    const header = savedFileHeader(KIND, [7, 0xffffffff]);
    assert.deepEqual(
      [...header],
      [0x54, 0x45, 0x53, 0x54, 2, 0, 0, 0, 7, 0, 0, 0, 255, 255, 255, 255],
    );
    await writeChecksummed(file, [header, ...lengthPrefixed(Buffer.from('é', 'utf8'))]);
    const read = await readSavedFile(file, 'things', KIND);
    assert.ok(read.ok && read.value);
    assert.deepEqual([...read.value.subarray(16)], [2, 0, 0, 0, 0xc3, 0xa9]);

    const refused = async (kind: SavedFileKind) => {
      const result = await readSavedFile(file, 'things', kind);
      assert.ok(!result.ok);
      return [result.error.code, result.error.message];
    };
    assert.deepEqual(await refused({ ...KIND, magic: KIND.magic + 1 }), [
      'index_corrupt',
      'The saved things have an unknown header.',
    ]);
    assert.deepEqual(await refused({ ...KIND, headerBytes: 64 }), [
      'index_corrupt',
      'The saved things have an unknown header.',
    ]);
    assert.deepEqual(await refused({ ...KIND, version: 3 }), [
      'unsupported',
      'The saved things are of format 2.',
    ]);
    const bytes = readFileSync(file);
    bytes[9] = bytes[9]! ^ 1;
    writeFileSync(file, bytes);
    assert.deepEqual(await refused(KIND), ['index_corrupt', 'The saved things are damaged.']);
  });
});
