import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { Scratch } from '../helpers/workspace';

describe('CLI output into a closed pipe', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('`index … | head -1` ends with the first line and no EPIPE error', function () {
    this.timeout(60_000);
    const cli = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
    const root = scratch.fixture('shop-py');
    const store = path.join(scratch.folder(), 'store');
    const run = spawnSync(
      'bash',
      [
        '-c',
        `set -o pipefail; "${process.execPath}" "${cli}" index "${root}" --store "${store}" --model none | head -1`,
      ],
      { encoding: 'utf8' },
    );
    assert.match(run.stdout, /^Indexed 8 files/);
    assert.equal(run.stdout.trim().split('\n').length, 1);
    assert.doesNotMatch(run.stderr, /EPIPE|Error/);
    assert.equal(run.status, 0, run.stderr);
  });
});
