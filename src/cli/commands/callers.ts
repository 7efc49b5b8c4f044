import { callerSummary, type CallerTreeNode } from '../../engine/resolve/symbols';
import { ENGINE_FLAGS, engineOptions, logLevel, parse, positiveInteger, UsageError } from '../args';
import { json, out } from '../output';
import { ensureIndexed, unwrapOrThrow, withEngine } from '../session';

export const CALLERS_HELP = `code-oracle callers NAME [--dir DIR] [--depth N] [--json] [--store DIR] [--model …]
  Prints the tree of callers of NAME (a name, Class.method, or path:line) with path:line of each call,
  then the places that pass it as a value and the calls that may reach it but could not be resolved.`;

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
        printGroups(tree);
      });
    },
  );
}

/** The summary line, then references by value and possible callers in groups of their own. */
function printGroups(tree: CallerTreeNode): void {
  const counts = tree.counts ?? { callers: tree.callers.length, references: 0, possible: 0 };
  if (!counts.callers)
    out(
      counts.possible || counts.references
        ? `  (no resolved callers; ${[counts.references ? `${counts.references} passed as a value` : '', counts.possible ? `${counts.possible} possible` : ''].filter(Boolean).join('; ')})`
        : '  (no callers found)',
    );
  else if (counts.possible || counts.references) out(`  (${callerSummary(counts)})`);
  if (tree.valueReferences?.length) {
    out('  passed as a value:');
    for (const reference of tree.valueReferences)
      out(
        `    ${reference.path}:${reference.line}${reference.from ? `  in ${reference.from.qualifiedName}` : ''}`,
      );
  }
  if (tree.possible?.length) {
    out('  possible callers (receiver not resolved):');
    for (const call of tree.possible)
      out(
        `    ${call.path}:${call.line}${call.from ? `  in ${call.from.qualifiedName}` : ''}  — ${call.reason}`,
      );
  }
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
