import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Engine } from '../../../src/engine/engine';
import { unwrap } from '../../../src/engine/util/result';
import { openEngine, Scratch } from '../../helpers/workspace';

/** Assignments of words no question here uses: `count` lines of code around the words. */
const filler = (count: number) =>
  Array.from({ length: count }, (_, i) => `    alpha${i} = beta${i}`).join('\n');

/**
 * Two files holding the question's words as often as each other: in `apart.py` a dozen lines
 * apart, in `together.py` side by side. The lexical list ranks `apart.py` first (its function is
 * shorter); only how closely the words stand can put `together.py` first.
 */
const WORKSPACE = {
  'apart.py': `def handle(response):\n    session = response.first\n${filler(12)}\n    token = response.second\n    return response\n`,
  // functions about other things, so that the question's words are rare among the chunks
  'other.py': ['open', 'close', 'read', 'write']
    .map((name) => `def ${name}(stream):\n    return stream.${name}()\n`)
    .join('\n'),
  'together.py': `def handle(response):\n    session_token = response.first\n${filler(20)}\n    return response\n`,
};

describe('file-proximity stage', () => {
  const scratch = new Scratch();
  let engine: Engine;
  before(async () => {
    engine = await openEngine(scratch, scratch.tree(WORKSPACE), { model: { kind: 'none' } });
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  const search = async (ablate: 'file-proximity'[] = []) =>
    unwrap(await engine.search({ query: 'session token', ablate }));

  it('puts first the file that says the question’s words together', async () => {
    const off = await search(['file-proximity']);
    assert.deepEqual(
      off.files.map((file) => file.path),
      ['apart.py', 'together.py'],
      'off: the lexical order decides',
    );
    const on = await search();
    assert.deepEqual(
      on.files.map((file) => file.path),
      ['together.py', 'apart.py'],
    );
  });

  it('orders the files list only: the spans and the context stay as they are', async () => {
    const [off, on] = [await search(['file-proximity']), await search()];
    assert.deepEqual(on.spans, off.spans);
    const spansOf = (files: typeof on.files) =>
      new Map(files.map((file) => [file.path, file.spans]));
    assert.deepEqual(spansOf(on.files), spansOf(off.files));
  });
});

describe('file-proximity after a save', () => {
  const scratch = new Scratch();
  let engine: Engine;
  let root: string;
  before(async () => {
    root = scratch.tree(WORKSPACE);
    engine = await openEngine(scratch, root, { model: { kind: 'none' } });
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  const firstFile = async () =>
    unwrap(await engine.search({ query: 'session token' })).files[0]?.path;

  it('measures the words the saved code has, not those it had', async () => {
    assert.equal(await firstFile(), 'together.py');
    // the words drift apart in together.py: as scattered as in apart.py, in a longer function
    writeFileSync(
      path.join(root, 'together.py'),
      `def handle(response):\n    session = response.first\n${filler(20)}\n    token = response.second\n    return response\n`,
    );
    unwrap(await engine.updateFiles(['together.py']));
    assert.equal(await firstFile(), 'apart.py', 'the lexical order decides again');
  });
});
