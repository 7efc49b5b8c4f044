import { strict as assert } from 'node:assert';
import { closeSync, openSync, symlinkSync, writeSync } from 'node:fs';
import * as path from 'node:path';
import { Engine } from '../../src/engine/engine';
import { unwrap } from '../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { openEngine, Scratch } from '../helpers/workspace';

/** Bad files get a reason and lose nothing: every other file is indexed. */
describe('bad input', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('skips binary, non-UTF-8, minified, too large and unreadable files with their reasons', async () => {
    const root = scratch.tree({
      'good.py': 'def good():\n    return 1\n',
      'binary.py': Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01, 0x02]),
      'latin1.py': Buffer.from('name = "caf\xe9"\n', 'latin1'),
      'bundle.js': `var a=1;${'function f(){return 1};'.repeat(800)}`,
      'empty.py': '',
    });
    const huge = openSync(path.join(root, 'huge.py'), 'w');
    writeSync(huge, 'x = 1\n', 50 * 1024 * 1024);
    closeSync(huge);
    symlinkSync(path.join(root, 'missing-target.py'), path.join(root, 'dangling.py'));
    const engine = await openEngine(scratch, root);
    try {
      const { result, events } = await captureLogs(() => engine.index());
      const summary = unwrap(result);
      assert.equal(summary.skipped.binary, 1);
      assert.equal(summary.skipped.utf8_decode_failed, 1);
      assert.equal(summary.skipped.minified, 1);
      assert.equal(summary.skipped.too_large, 1, 'a 50 MB file is skipped without being read');
      assert.equal(summary.skipped.unreadable, 1);
      assert.equal(summary.files, 2, 'good.py and empty.py');
      assert.ok(engine.store.catalog.has('good.py::None::good::function'));
      assert.ok(engine.store.catalog.has('empty.py::None::None::file'));
      const skips = eventsNamed(events, 'file_skipped').map(
        (event) => `${event.file_path}:${event.reason}`,
      );
      assert.ok(
        skips.includes('binary.py:binary') &&
          skips.includes('latin1.py:utf8_decode_failed') &&
          skips.includes('huge.py:too_large'),
      );
      assert.equal(
        unwrap(await engine.index()).indexed,
        0,
        'skipped files are remembered, not re-read',
      );
    } finally {
      engine.dispose();
    }
  });

  it('reads CRLF and BOM files with the lines an editor shows', async () => {
    const root = scratch.tree({
      'crlf.py':
        'import os\r\n\r\n\r\ndef walk(top):\r\n    """Walk."""\r\n    return os.walk(top)\r\n',
      'bom.ts':
        '\ufeff/** Adds. */\nexport function add(a: number, b: number) {\n  return a + b;\n}\n',
    });
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      const walk = engine.graph.fact('crlf.py::walk')!;
      assert.deepEqual([walk.startLine, walk.endLine, walk.docstring], [4, 6, 'Walk.']);
      const add = engine.graph.fact('bom.ts::add')!;
      assert.deepEqual([add.startLine, add.docstring], [2, 'Adds.']);
      const text = unwrap(engine.store.texts.read('bom.ts::None::add::function'))!;
      assert.ok(text.startsWith('/** Adds. */'), 'no BOM in chunk text');
    } finally {
      engine.dispose();
    }
  });

  it('refuses a folder that does not exist, or a file given as a folder, with a clear message', async () => {
    const missing = await Engine.open({
      root: path.join(scratch.folder(), 'nowhere'),
      model: { kind: 'none' },
    });
    assert.ok(
      !missing.ok &&
        missing.error.code === 'not_found' &&
        /^Folder does not exist: /.test(missing.error.message),
    );
    const file = path.join(scratch.tree({ 'a.py': 'x = 1\n' }), 'a.py');
    const notFolder = await Engine.open({ root: file, model: { kind: 'none' } });
    assert.ok(!notFolder.ok && /^Not a folder: /.test(notFolder.error.message));
  });

  it('ignores update requests for paths outside the folder', async () => {
    const root = scratch.tree({ 'a.py': 'x = 1\n' });
    const outside = scratch.tree({ 'b.py': 'y = 2\n' });
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      const summary = unwrap(await engine.updateFiles([path.join(outside, 'b.py'), '../b.py']));
      assert.equal(summary.indexed, 0);
      assert.deepEqual(Object.keys(engine.store.manifest.files), ['a.py']);
    } finally {
      engine.dispose();
    }
  });
});
