import { callerSummary, SYMBOL_ACTIONS, type SymbolAction } from '../../engine/resolve/symbols';
import { ENGINE_FLAGS, engineOptions, logLevel, parse, UsageError } from '../args';
import { json, out } from '../output';
import { ensureIndexed, unwrapOrThrow, withEngine } from '../session';

export const RESOLVE_HELP = `code-oracle resolve NAME [--action definition|references|callers|callees] [--dir DIR] [--json]
  Finds a symbol's definition, its references, its callers or its callees.`;

export async function resolveCommand(args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {
    ...ENGINE_FLAGS,
    dir: { type: 'string' },
    action: { type: 'string' },
  });
  if (positionals.length !== 1) throw new UsageError('resolve needs exactly one symbol name');
  const action = (values.action ?? 'definition') as SymbolAction;
  if (!SYMBOL_ACTIONS.includes(action))
    throw new UsageError(`--action must be one of ${SYMBOL_ACTIONS.join(', ')}`);
  await withEngine(
    engineOptions(values.dir ?? '.', values),
    logLevel(values['log-level'], 'error'),
    async (engine) => {
      await ensureIndexed(engine);
      const results = unwrapOrThrow(engine.resolveSymbol(positionals[0]!, action));
      if (values.json) return json(results);
      for (const result of results) {
        out(
          `${result.symbol.kind} ${result.symbol.qualifiedName}  ${result.symbol.path}:${result.symbol.startLine}-${result.symbol.endLine}`,
        );
        out(`  ${result.symbol.signature}`);
        if (result.counts) out(`  ${callerSummary(result.counts)}`);
        for (const reference of [
          ...(result.references ?? result.callers ?? []),
          ...(result.valueReferences ?? []),
        ]) {
          out(
            `  ${reference.kind.padEnd(6)} ${reference.path}:${reference.line}${reference.from ? `  in ${reference.from.qualifiedName}` : ''}`,
          );
        }
        for (const call of result.possible ?? [])
          out(
            `  possible ${call.path}:${call.line}${call.from ? `  in ${call.from.qualifiedName}` : ''}  — ${call.reason}`,
          );
        for (const callee of result.callees ?? [])
          out(
            `  calls  ${callee.target.qualifiedName}  ${callee.target.path}:${callee.target.startLine}  (line ${callee.line})`,
          );
      }
    },
  );
}
