/**
 * A unified diff of two texts, line by line, from Myers' O(ND) shortest edit script: what the
 * terminal shows for a patch, in the form `git apply` and `patch` read.
 */

type Op = { readonly kind: ' ' | '-' | '+'; readonly line: string };

/** Lines with their line breaks kept, so a missing final newline is not lost. */
function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

/** The shortest edit script turning `a` into `b` (Myers 1986, with the trace to walk back). */
export function diffLines(a: readonly string[], b: readonly string[]): Op[] {
  const max = a.length + b.length;
  const offset = max + 1;
  let v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  search: for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    const next = v.slice();
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && v[offset + k - 1]! < v[offset + k + 1]!)
          ? v[offset + k + 1]!
          : v[offset + k - 1]! + 1;
      let y = x - k;
      while (x < a.length && y < b.length && a[x] === b[y]) {
        x++;
        y++;
      }
      next[offset + k] = x;
      if (x >= a.length && y >= b.length) {
        trace.push(next);
        break search;
      }
    }
    v = next;
  }
  // walk back from the end through the saved frontiers
  const ops: Op[] = [];
  let x = a.length;
  let y = b.length;
  for (let d = trace.length - 2; d >= 0; d--) {
    const frontier = trace[d]!;
    const k = x - y;
    const down = k === -d || (k !== d && frontier[offset + k - 1]! < frontier[offset + k + 1]!);
    const previousK = down ? k + 1 : k - 1;
    const previousX = d === 0 ? 0 : frontier[offset + previousK]!;
    const previousY = d === 0 ? 0 : previousX - previousK;
    while (x > previousX && y > previousY) {
      ops.push({ kind: ' ', line: a[--x]! });
      y--;
    }
    if (d === 0) break;
    if (down) ops.push({ kind: '+', line: b[--y]! });
    else ops.push({ kind: '-', line: a[--x]! });
  }
  return ops.reverse();
}

/** `--- a/file` / `+++ b/file` and hunks with `context` unchanged lines around each change. */
export function unifiedDiff(file: string, before: string, after: string, context = 3): string {
  const ops = diffLines(splitLines(before), splitLines(after));
  const changed = ops.flatMap((op, index) => (op.kind === ' ' ? [] : [index]));
  if (!changed.length) return '';
  const out = [`--- a/${file}`, `+++ b/${file}`];
  let first = 0;
  while (first < changed.length) {
    // a hunk takes every change within 2 * context unchanged lines of the last one
    let last = first;
    while (last + 1 < changed.length && changed[last + 1]! - changed[last]! <= 2 * context + 1)
      last++;
    const start = Math.max(0, changed[first]! - context);
    const end = Math.min(ops.length, changed[last]! + context + 1);
    let oldLine = 1;
    let newLine = 1;
    for (const op of ops.slice(0, start)) {
      if (op.kind !== '+') oldLine++;
      if (op.kind !== '-') newLine++;
    }
    const hunk = ops.slice(start, end);
    const oldCount = hunk.filter((op) => op.kind !== '+').length;
    const newCount = hunk.filter((op) => op.kind !== '-').length;
    out.push(
      `@@ -${oldCount ? oldLine : oldLine - 1},${oldCount} +${newCount ? newLine : newLine - 1},${newCount} @@`,
    );
    for (const op of hunk) {
      out.push(`${op.kind}${op.line.replace(/\n$/, '')}`);
      if (!op.line.endsWith('\n')) out.push('\\ No newline at end of file');
    }
    first = last + 1;
  }
  return `${out.join('\n')}\n`;
}
