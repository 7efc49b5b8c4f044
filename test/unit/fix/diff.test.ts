import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { diffLines, unifiedDiff } from '../../../src/engine/fix/diff';

/** Applies a unified diff's hunks to `before`, as `patch` would, to check the diff is exact. */
function applyUnified(before: string, diff: string): string {
  const lines = before.match(/[^\n]*\n|[^\n]+$/g) ?? [];
  const out: string[] = [];
  let at = 0;
  const body = diff.split('\n').slice(2);
  for (let i = 0; i < body.length; i++) {
    const header = /^@@ -(\d+),(\d+) \+\d+,\d+ @@$/.exec(body[i]!);
    if (!header) continue;
    const start = Number(header[2]) === 0 ? Number(header[1]) : Number(header[1]) - 1;
    while (at < start) out.push(lines[at++]!);
    for (i++; i < body.length && !body[i]!.startsWith('@@'); i++) {
      const line = body[i]!;
      if (line === '' && i === body.length - 1) break;
      const noNewline = body[i + 1] === '\\ No newline at end of file';
      const text = line.slice(1) + (noNewline ? '' : '\n');
      if (line[0] === '+') out.push(text);
      else if (line[0] === '-') at++;
      else if (line[0] === ' ') out.push(lines[at++]!);
      if (noNewline) i++;
    }
    i--;
  }
  while (at < lines.length) out.push(lines[at++]!);
  return out.join('');
}

describe('unified diff', () => {
  it('shows a one-line change with three lines of context', () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\nh\n';
    const after = 'a\nb\nc\nd\nE\nf\ng\nh\n';
    assert.equal(
      unifiedDiff('x.py', before, after),
      '--- a/x.py\n+++ b/x.py\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n',
    );
    assert.equal(unifiedDiff('x.py', before, before), '');
  });

  it('is the shortest edit script and rebuilds both sides', () => {
    const line = fc.constantFrom('a', 'b', 'c', 'd');
    fc.assert(
      fc.property(fc.array(line, { maxLength: 30 }), fc.array(line, { maxLength: 30 }), (a, b) => {
        const ops = diffLines(a, b);
        assert.deepEqual(
          ops.filter((op) => op.kind !== '+').map((op) => op.line),
          a,
        );
        assert.deepEqual(
          ops.filter((op) => op.kind !== '-').map((op) => op.line),
          b,
        );
        // shortest: the kept lines are a longest common subsequence
        const kept = ops.filter((op) => op.kind === ' ').length;
        assert.equal(kept, lcsLength(a, b));
      }),
    );
  });

  it('turns any text into any other when applied', () => {
    const text = fc
      .array(fc.constantFrom('x\n', 'y\n', 'z\n', '\n', 'w'), { maxLength: 40 })
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(text, text, (before, after) => {
        assert.equal(applyUnified(before, unifiedDiff('f', before, after, 2)), after);
      }),
    );
  });
});

function lcsLength(a: readonly string[], b: readonly string[]): number {
  const row = new Array<number>(b.length + 1).fill(0);
  for (const x of a) {
    let diagonal = 0;
    for (let j = 1; j <= b.length; j++) {
      const up = row[j]!;
      row[j] = x === b[j - 1] ? diagonal + 1 : Math.max(row[j]!, row[j - 1]!);
      diagonal = up;
    }
  }
  return row[b.length]!;
}
