import { strict as assert } from 'node:assert';
import { chmodSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { planEdits, WorkspaceFiles, writeEdits } from '../../../src/engine/fix/apply';
import type { CodePatch } from '../../../src/engine/fix/model';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { Scratch } from '../../helpers/workspace';

const patch = (file: string, original: string, replacement = 'changed'): CodePatch => ({
  file,
  original,
  replacement,
  explanation: 'fix',
  confidence: 0.9,
  otherFilesAffected: [],
});

describe('patch checking and writing', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  const source = 'def login():\n    pass\n\n\ndef logout():\n    pass\n';

  it('applies a block whose original occurs exactly once, in memory only', async () => {
    const root = scratch.tree({ 'src/auth.py': source });
    const before = statSync(path.join(root, 'src/auth.py')).mtimeMs;
    const planned = await planEdits(
      [patch('src/auth.py', 'def login():\n    pass', 'def login():\n    return True')],
      new WorkspaceFiles(root),
    );
    assert.ok(planned.ok);
    assert.equal(
      planned.value[0]!.after,
      'def login():\n    return True\n\n\ndef logout():\n    pass\n',
    );
    assert.equal(readFileSync(path.join(root, 'src/auth.py'), 'utf8'), source);
    assert.equal(statSync(path.join(root, 'src/auth.py')).mtimeMs, before);
  });

  it('refuses an original that is not in the file, with a warning, and one that occurs twice', async () => {
    const root = scratch.tree({ 'src/auth.py': source });
    const { result, events } = await captureLogs(() =>
      planEdits([patch('src/auth.py', 'def login():\n  pass')], new WorkspaceFiles(root)),
    );
    assert.ok(!result.ok);
    assert.match(result.error[0]!.reason, /not found in src\/auth\.py/);
    const warnings = eventsNamed(events, 'patch_original_not_found');
    assert.equal(warnings.length, 1);
    assert.equal(warnings[0]!.level, 'warn');
    assert.equal(warnings[0]!.file_path, 'src/auth.py');
    assert.equal(warnings[0]!.original_code_first_80_chars, 'def login():\n  pass');

    const twice = await planEdits([patch('src/auth.py', '    pass\n')], new WorkspaceFiles(root));
    assert.ok(!twice.ok);
    assert.match(twice.error[0]!.reason, /more than once/);
  });

  it('refuses a file that does not exist, logging the original as not found', async () => {
    const root = scratch.tree({ 'a.py': 'x = 1\n' });
    const { result, events } = await captureLogs(() =>
      planEdits([patch('nonexistent.py', 'not here')], new WorkspaceFiles(root)),
    );
    assert.ok(!result.ok);
    assert.match(result.error[0]!.reason, /does not exist/);
    assert.equal(eventsNamed(events, 'patch_original_not_found').length, 1);
  });

  it('uses the unsaved text of open documents instead of the disk', async () => {
    const root = scratch.tree({ 'a.py': 'x = 1\n' });
    const files = new WorkspaceFiles(root, new Map([['a.py', 'x = 2\n']]));
    const fromEditor = await planEdits([patch('a.py', 'x = 2', 'x = 3')], files);
    assert.ok(fromEditor.ok);
    assert.equal(fromEditor.value[0]!.after, 'x = 3\n');
    const fromDisk = await planEdits([patch('a.py', 'x = 1', 'x = 3')], files);
    assert.ok(!fromDisk.ok);
  });

  it('never patches a path outside the workspace: ../, absolute, symlinks, .git', async () => {
    const outside = scratch.tree({ 'secret.py': 'token = 1\n' });
    const root = scratch.tree({ 'a.py': 'x = 1\n', '.git/config': 'x = 1\n' });
    symlinkSync(path.join(outside, 'secret.py'), path.join(root, 'link.py'));
    symlinkSync(outside, path.join(root, 'linked-folder'));
    const attempts = [
      `../${path.basename(outside)}/secret.py`,
      path.join(outside, 'secret.py'),
      path.join(root, 'a.py'),
      'link.py',
      'linked-folder/secret.py',
      'sub/../../secret.py',
      '.git/config',
    ];
    for (const file of attempts) {
      const planned = await planEdits(
        [patch(file, file.includes('.git') ? 'x = 1' : 'token = 1')],
        new WorkspaceFiles(root),
      );
      assert.ok(!planned.ok, file);
      assert.match(planned.error[0]!.reason, /outside the workspace|absolute path|inside \.git/);
    }
    assert.equal(readFileSync(path.join(outside, 'secret.py'), 'utf8'), 'token = 1\n');
  });

  it('applies a multi-file patch all or nothing', async () => {
    const root = scratch.tree({ 'a.py': 'x = 1\n', 'b.py': 'y = 1\n' });
    const files = new WorkspaceFiles(root);
    const refused = await planEdits(
      [patch('a.py', 'x = 1', 'x = 2'), patch('b.py', 'y = 5', 'y = 2')],
      files,
    );
    assert.ok(!refused.ok);
    assert.deepEqual(
      refused.error.map((refusal) => refusal.file),
      ['b.py'],
    );
    const planned = await planEdits(
      [patch('a.py', 'x = 1', 'x = 2'), patch('b.py', 'y = 1', 'y = 2')],
      files,
    );
    assert.ok(planned.ok);
    const written = await writeEdits(root, planned.value);
    assert.deepEqual(written, { ok: true, value: ['a.py', 'b.py'] });
    assert.equal(readFileSync(path.join(root, 'a.py'), 'utf8'), 'x = 2\n');
    assert.equal(readFileSync(path.join(root, 'b.py'), 'utf8'), 'y = 2\n');
  });

  it('applies two blocks in one file and refuses overlapping ones', async () => {
    const root = scratch.tree({ 'a.py': 'one\ntwo\nthree\n' });
    const planned = await planEdits(
      [patch('a.py', 'three', '3'), patch('a.py', 'one', '1')],
      new WorkspaceFiles(root),
    );
    assert.ok(planned.ok);
    assert.equal(planned.value[0]!.after, '1\ntwo\n3\n');
    const overlapping = await planEdits(
      [patch('a.py', 'one\ntwo', 'x'), patch('a.py', 'two\nthree', 'y')],
      new WorkspaceFiles(root),
    );
    assert.ok(!overlapping.ok);
    assert.match(overlapping.error[0]!.reason, /overlapping/);
  });

  it('writes nothing when any file changed since the patch was made', async () => {
    const root = scratch.tree({ 'a.py': 'x = 1\n', 'b.py': 'y = 1\n' });
    const planned = await planEdits(
      [patch('a.py', 'x = 1', 'x = 2'), patch('b.py', 'y = 1', 'y = 2')],
      new WorkspaceFiles(root),
    );
    assert.ok(planned.ok);
    writeFileSync(path.join(root, 'b.py'), 'y = 1  # edited meanwhile\n');
    const written = await writeEdits(root, planned.value);
    assert.ok(!written.ok);
    assert.match(written.error.message, /b\.py changed since the patch was made/);
    assert.equal(readFileSync(path.join(root, 'a.py'), 'utf8'), 'x = 1\n');
  });

  it('keeps a written file executable', async () => {
    const root = scratch.tree({ 'run.sh': '#!/bin/sh\necho 1\n' });
    const file = path.join(root, 'run.sh');
    chmodSync(file, 0o755);
    const planned = await planEdits(
      [patch('run.sh', 'echo 1', 'echo 2')],
      new WorkspaceFiles(root),
    );
    assert.ok(planned.ok);
    assert.ok((await writeEdits(root, planned.value)).ok);
    assert.equal(statSync(file).mode & 0o777, 0o755);
  });
});
