import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import * as path from 'node:path';
import { PathFilter, walkWorkspace, type WalkResult } from '../../src/engine/index/walk';
import { unwrap } from '../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { Scratch, writeTree } from '../helpers/workspace';

describe('walker', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  const tree = {
    '.gitignore': '*.log\ngenerated/\n*.gen.py\n!important.gen.py\n',
    'app.py': 'x = 1\n',
    'important.gen.py': 'x = 1\n',
    'noise.gen.py': 'x = 1\n',
    'debug.log': 'log\n',
    'generated/out.py': 'x = 1\n',
    'sub/.gitignore': '*.py\n!keep.py\n',
    'sub/drop.py': 'x = 1\n',
    'sub/keep.py': 'x = 1\n',
    'sub/deeper/also_dropped.py': 'x = 1\n',
    'node_modules/pkg/index.js': 'x\n',
    '.git/config': '[core]\n',
    '__pycache__/app.cpython-311.pyc': 'x',
    'dist/bundle.js': 'x\n',
    'build/out.js': 'x\n',
    'web/app.min.js': 'x\n',
    'web/main.js': 'x\n',
    'package-lock.json': '{}\n',
    'poetry.lock': '\n',
    'README.md': '# hi\n',
    'big.py': `x = "${'a'.repeat(3000)}"\n`,
    'vendor/lib.py': 'x = 1\n',
  };

  function paths(result: WalkResult): string[] {
    return result.candidates.map((candidate) => candidate.path);
  }

  it('applies nested .gitignore files with negation, skip folders, size cap, lock files and exclusions', async () => {
    const root = scratch.tree(tree);
    const { result, events } = await captureLogs(async () =>
      unwrap(
        await walkWorkspace({ root, maxFileBytes: 1000, exclude: ['vendor/'], useGit: false }),
      ),
    );
    assert.deepEqual(paths(result), ['app.py', 'important.gen.py', 'sub/keep.py', 'web/main.js']);
    const skipped = Object.fromEntries(result.skipped);
    assert.equal(skipped.too_large, 1);
    assert.equal(skipped.lock_file, 2);
    assert.equal(skipped.minified, 1);
    assert.equal(skipped.excluded, 1);
    assert.equal(skipped.path_pattern, 5, '.git, node_modules, __pycache__, dist, build');
    assert.ok(skipped.ignored! >= 4);
    assert.ok(skipped.extension! >= 1);
    const reasons = eventsNamed(events, 'file_skipped').map(
      (event) => `${event.file_path}:${event.reason}`,
    );
    assert.ok(reasons.includes('big.py:too_large'));
    assert.ok(reasons.includes('sub/drop.py:ignored'));
    assert.ok(reasons.includes('node_modules/:path_pattern'));
    const completed = eventsNamed(events, 'repo_walk_completed')[0]!;
    assert.equal(completed.total_files, 4);
    assert.deepEqual(completed.languages, { python: 3, javascript: 1 });
  });

  it('gives the same answer through git ls-files in a git work tree', async () => {
    const root = scratch.tree(tree);
    execFileSync('git', ['init', '-q'], { cwd: root });
    const result = unwrap(await walkWorkspace({ root, maxFileBytes: 1000, exclude: ['vendor/'] }));
    assert.equal(result.source, 'git');
    assert.deepEqual(paths(result), ['app.py', 'important.gen.py', 'sub/keep.py', 'web/main.js']);
  });

  it('walks a folder that its enclosing git repository ignores, since it was opened on purpose', async () => {
    const outer = scratch.tree({
      '.gitignore': 'cache/\n',
      'cache/project/app.py': 'x = 1\n',
      'cache/project/lib/util.py': 'y = 2\n',
    });
    execFileSync('git', ['init', '-q'], { cwd: outer });
    const result = unwrap(
      await walkWorkspace({ root: path.join(outer, 'cache', 'project'), maxFileBytes: 1000 }),
    );
    assert.equal(result.source, 'filesystem');
    assert.deepEqual(paths(result), ['app.py', 'lib/util.py']);
  });

  it('judges single paths with the same rules (for editor events)', async () => {
    const root = scratch.tree(tree);
    const filter = new PathFilter(root, { maxFileBytes: 1000, exclude: ['vendor/'] });
    assert.deepEqual(await filter.check('sub/keep.py', 10), { language: 'python' });
    assert.deepEqual(await filter.check('sub/drop.py', 10), { reason: 'ignored' });
    assert.deepEqual(await filter.check('sub/deeper/also_dropped.py', 10), { reason: 'ignored' });
    assert.deepEqual(await filter.check('generated/out.py', 10), { reason: 'ignored' });
    assert.deepEqual(await filter.check('node_modules/x/index.js', 10), { reason: 'path_pattern' });
    assert.deepEqual(await filter.check('vendor/lib.py', 10), { reason: 'excluded' });
    assert.deepEqual(await filter.check('big.py', 5000), { reason: 'too_large' });
    assert.deepEqual(await filter.check('README.md', 10), { reason: 'extension' });
  });

  it('never follows links out of the folder, never loops, never indexes a file twice', async () => {
    const outside = scratch.tree({ 'secret.py': 'x = 1\n' });
    const root = scratch.tree({ 'src/real.py': 'x = 1\n' });
    symlinkSync(path.join(outside, 'secret.py'), path.join(root, 'leak.py'));
    symlinkSync(path.join(root, 'src', 'real.py'), path.join(root, 'alias.py'));
    symlinkSync(root, path.join(root, 'src', 'loop'));
    mkdirSync(path.join(root, 'deep'));
    symlinkSync('..', path.join(root, 'deep', 'up'));
    const result = unwrap(await walkWorkspace({ root, maxFileBytes: 1000, useGit: false }));
    assert.deepEqual(paths(result), ['src/real.py']);
    const skipped = Object.fromEntries(result.skipped);
    assert.equal(skipped.symlink_outside, 1);
    assert.equal(skipped.symlink_duplicate, 3);
  });

  it('reports a folder that does not exist as a clear error', async () => {
    const result = await walkWorkspace({
      root: path.join(scratch.folder(), 'missing'),
      maxFileBytes: 1000,
    });
    assert.equal(result.ok, false);
    if (!result.ok) {
      assert.equal(result.error.code, 'not_found');
      assert.match(result.error.message, /^Folder does not exist: /);
    }
  });

  it('indexes nothing but reports why for an empty folder', async () => {
    const root = scratch.folder();
    writeTree(root, { 'notes.txt': 'hello' });
    const result = unwrap(await walkWorkspace({ root, maxFileBytes: 1000, useGit: false }));
    assert.deepEqual(paths(result), []);
    assert.equal(result.skipped.get('extension'), 1);
  });
});
