import type { CallerTreeNode } from '../../engine/resolve/symbols';
import { ENGINE_FLAGS, engineOptions, logLevel, parse, positiveInteger, UsageError } from '../args';
import { json, out } from '../output';
import { ensureIndexed, unwrapOrThrow, withEngine } from '../session';

export const CALLERS_HELP = `code-oracle callers NAME [--dir DIR] [--depth N] [--json] [--store DIR] [--model …]
  Prints the tree of callers of NAME (a name, Class.method, or path:line) with path:line of each call.`;

export async function callersCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {
    ...ENGINE_FLAGS,
    dir: { type: 'string' },
    depth: { type: 'string' },
  });
  if (positionals.length !== 1) throw new UsageError('callers needs exactly one symbol name');
  const depth = values.depth ? positiveInteger(values.depth, '--depth') : 3;
  await withEngine(
    engineOptions(values.dir ?? '.', values),
    logLevel(values['log-level'], 'error'),
    async (engine) => {
      await ensureIndexed(engine);
      const trees = unwrapOrThrow(engine.traceCallers(positionals[0]!, depth));
      if (values.json) return json(trees);
      trees.forEach((tree, index) => {
        if (index) out();
        out(`${tree.symbol.qualifiedName}  ${tree.symbol.path}:${tree.symbol.startLine}`);
        printChildren(tree, '');
        if (!tree.callers.length) out('  (no callers found)');
      });
    },
  );
}

function printChildren(node: CallerTreeNode, indent: string): void {
  node.callers.forEach((child, index) => {
    const last = index === node.callers.length - 1;
    const sites = child.callSites.map((site) => `${site.path}:${site.line}`).join(', ');
    const mark =
      child.truncated === 'cycle' ? '  (cycle)' : child.truncated === 'depth' ? '  …' : '';
    out(`${indent}${last ? '└─ ' : '├─ '}${child.symbol.qualifiedName}  ${sites}${mark}`);
    printChildren(child, `${indent}${last ? '   ' : '│  '}`);
  });
}
