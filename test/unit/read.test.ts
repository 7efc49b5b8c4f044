import { strict as assert } from 'node:assert';
import { classifyBytes } from '../../src/engine/index/read';
import { unwrap } from '../../src/engine/util/result';
import { openEngine, Scratch } from '../helpers/workspace';

describe('reading source files', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());
  const MAX = 1024 * 1024;

  it('decodes UTF-16 with a byte order mark, little and big endian', () => {
    const text = 'def grüße():\n    return "ok"\n';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const be = Buffer.from(le);
    be.swap16();
    for (const bytes of [le, be]) {
      const outcome = classifyBytes(bytes, MAX);
      assert.equal(outcome.kind, 'text');
      if (outcome.kind === 'text') assert.equal(outcome.source, text);
    }
    const noBom = Buffer.from(text, 'utf16le');
    assert.deepEqual(
      {
        kind: classifyBytes(noBom, MAX).kind,
        reason: (classifyBytes(noBom, MAX) as { reason?: string }).reason,
      },
      { kind: 'skip', reason: 'binary' },
    );
  });

  it('keeps deeply indented code, and still skips minified code', () => {
    const deep = Array.from({ length: 60 }, (_, i) => `${' '.repeat(400)}x${i} = call(${i})`).join(
      '\n',
    );
    assert.equal(classifyBytes(Buffer.from(deep), MAX).kind, 'text');
    const minified = `var a=${'f(1),'.repeat(3000)}0;`;
    assert.deepEqual(classifyBytes(Buffer.from(minified), MAX), {
      kind: 'skip',
      reason: 'minified',
      hash: (classifyBytes(Buffer.from(minified), MAX) as { hash: string }).hash,
    });
  });

  it('cites the right lines in a file with CR-only line endings', async () => {
    const root = scratch.tree({
      'old.py': 'import os\r\r\rdef far_away_marker():\r    return os.sep\r',
    });
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      const spans = unwrap(await engine.search({ query: 'far_away_marker' })).spans;
      const span = spans.find(
        (candidate) => candidate.path === 'old.py' && candidate.level === 'function',
      );
      assert.ok(span, JSON.stringify(spans));
      assert.equal(span.startLine, 4);
      assert.equal(span.endLine, 5);
    } finally {
      engine.dispose();
    }
  });
});
