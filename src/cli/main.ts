import { version } from '../../package.json';
import { EngineFailure, describeError } from '../engine/util/result';
import { UsageError } from './args';
import { ASK_HELP, askCommand } from './commands/ask';
import { CALLERS_HELP, callersCommand } from './commands/callers';
import { EVAL_HELP, evalCommand } from './commands/eval';
import { FIX_HELP, fixCommand } from './commands/fix';
import { INDEX_HELP, indexCommand } from './commands/index';
import { RESOLVE_HELP, resolveCommand } from './commands/resolve';
import { SEARCH_HELP, searchCommand } from './commands/search';
import { STATS_HELP, statsCommand } from './commands/stats';

/** `code-oracle <command> …`: the same engine as the extension, from a terminal. */
const COMMANDS: Record<string, { run: (args: string[]) => Promise<void>; help: string }> = {
  ask: { run: askCommand, help: ASK_HELP },
  index: { run: indexCommand, help: INDEX_HELP },
  search: { run: searchCommand, help: SEARCH_HELP },
  stats: { run: statsCommand, help: STATS_HELP },
  callers: { run: callersCommand, help: CALLERS_HELP },
  resolve: { run: resolveCommand, help: RESOLVE_HELP },
  fix: { run: fixCommand, help: FIX_HELP },
  eval: { run: evalCommand, help: EVAL_HELP },
};

const USAGE = `Code Oracle: questions about a codebase, answered with citations.

Usage: code-oracle <command> [options]
       code-oracle --version

${Object.values(COMMANDS)
  .map((command) => command.help)
  .join('\n\n')}

Environment: CODE_ORACLE_HOME (where stores and models live), CODE_ORACLE_MODEL (default --model),
CODE_ORACLE_HUB_URL (model hub mirror), CODE_ORACLE_LLM_PROVIDER / _MODEL / _BASE_URL / _API_KEY and
ANTHROPIC_API_KEY (the answering model; none unless chosen), CODE_ORACLE_LOG_PROMPTS=1.`;

export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return name ? 0 : 2;
  }
  if (name === '--version' || name === '-V' || name === 'version') {
    process.stdout.write(`code-oracle ${version}\n`);
    return 0;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`error: unknown command "${name}"\n\n${USAGE}\n`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(`${command.help}\n`);
    return 0;
  }
  try {
    await command.run(args);
    return 0;
  } catch (cause) {
    if (cause instanceof UsageError) {
      process.stderr.write(`error: ${cause.message}\n\n${command.help}\n`);
      return 2;
    }
    process.stderr.write(
      `error: ${cause instanceof EngineFailure ? cause.error.message : describeError(cause)}\n`,
    );
    return 1;
  }
}

if (require.main === module) {
  // `code-oracle index … | head -1`: the reader leaving is not an error, and nothing is left to say
  process.stdout.on('error', (cause: NodeJS.ErrnoException) => {
    if (cause.code !== 'EPIPE') throw cause;
    process.exit(process.exitCode ?? 0);
  });
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (cause: unknown) => {
      process.stderr.write(`error: ${describeError(cause)}\n`);
      process.exitCode = 1;
    },
  );
}
