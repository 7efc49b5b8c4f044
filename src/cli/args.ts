import { parseArgs, type ParseArgsConfig } from 'node:util';
import * as path from 'node:path';
import { parseModelSetting, type ModelRequest } from '../engine/embed/embedder';
import { DEFAULT_MAX_FILE_BYTES, type EngineOptions } from '../engine/engine';
import type { LogLevel } from '../engine/log/logger';
import type { BuildRecord } from '../engine/store/manifest';
import { resolveBuild, storeDirectory } from './build-options';

/** Flags shared by every command that opens an index. */
export const ENGINE_FLAGS = {
  store: { type: 'string' },
  model: { type: 'string' },
  'max-file-size': { type: 'string' },
  exclude: { type: 'string', multiple: true },
  'no-git': { type: 'boolean' },
  workers: { type: 'string' },
  json: { type: 'boolean' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export class UsageError extends Error {}

export function parse<T extends NonNullable<ParseArgsConfig['options']>>(
  args: string[],
  options: T,
) {
  try {
    return parseArgs({
      args: joinNegativeValues(args, options),
      options,
      allowPositionals: true,
      strict: true,
    });
  } catch (cause) {
    throw new UsageError((cause as Error).message);
  }
}

/**
 * `--max-file-size -5` reaches the flag as its value (`--max-file-size=-5`), so the flag's own
 * check can say what is wrong, instead of the parser calling the value an ambiguous option.
 */
function joinNegativeValues(args: string[], options: ParseArgsConfig['options']): string[] {
  const joined: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const name = /^--([\w-]+)$/.exec(args[i]!)?.[1];
    const next = args[i + 1];
    if (name && options?.[name]?.type === 'string' && next !== undefined && /^-\d/.test(next)) {
      joined.push(`${args[i]}=${next}`);
      i++;
    } else joined.push(args[i]!);
  }
  return joined;
}

type EngineFlagValues = {
  [K in keyof typeof ENGINE_FLAGS]?: (typeof ENGINE_FLAGS)[K] extends { multiple: true }
    ? string[]
    : (typeof ENGINE_FLAGS)[K] extends { type: 'boolean' }
      ? boolean
      : string;
};

/** `--model DIR` loads a local model folder, `--model none` disables vectors, default is the hub model. */
export function modelRequest(value: string | undefined): ModelRequest | undefined {
  const chosen = value ?? process.env.CODE_ORACLE_MODEL;
  return chosen ? parseModelSetting(chosen, process.cwd()) : undefined;
}

export function engineOptions(root: string, values: EngineFlagValues): EngineOptions {
  const model = modelRequest(values.model);
  return {
    root: path.resolve(root),
    ...(values.store ? { storeDir: path.resolve(values.store) } : {}),
    ...(model ? { model } : {}),
    ...(values['max-file-size'] !== undefined
      ? { maxFileBytes: fileSizeLimit(values['max-file-size']) }
      : {}),
    ...(values.exclude ? { exclude: values.exclude } : {}),
    ...(values['no-git'] ? { useGit: false } : {}),
    ...(values.workers ? { workers: positiveInteger(values.workers, '--workers') } : {}),
  };
}

/**
 * The options of a command that opens an index, with --model, --exclude and --max-file-size
 * reconciled with what the index was built with (see build-options.ts).
 */
export async function resolvedEngineOptions(
  command: 'index' | 'query',
  root: string,
  values: EngineFlagValues,
): Promise<{ options: EngineOptions; build: BuildRecord }> {
  const given = engineOptions(root, values);
  const storeDir = storeDirectory(root, values.store);
  const build = await resolveBuild(command, given.root, storeDir, {
    ...(given.model ? { model: given.model } : {}),
    ...(given.exclude ? { exclude: given.exclude } : {}),
    ...(given.maxFileBytes !== undefined ? { maxFileBytes: given.maxFileBytes } : {}),
  });
  return {
    options: {
      ...given,
      storeDir,
      model: parseModelSetting(build.model, given.root),
      exclude: build.exclude,
      maxFileBytes: build.maxFileBytes,
    },
    build,
  };
}

/** A file size limit in bytes: 0 would leave every file out, a negative one means nothing. */
export function fileSizeLimit(value: string): number {
  const bytes = Number(value);
  if (value.trim() === '' || !Number.isInteger(bytes) || bytes < 0)
    throw new UsageError(
      `--max-file-size needs a whole number of bytes greater than 0, got "${value}"`,
    );
  if (bytes === 0)
    throw new UsageError(
      `--max-file-size 0 would leave every file out of the index: give the largest file size to index, in bytes (the default is ${DEFAULT_MAX_FILE_BYTES})`,
    );
  return bytes;
}

export function positiveInteger(value: string, flag: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0)
    throw new UsageError(`${flag} needs a whole number, got "${value}"`);
  return number;
}

export function logLevel(value: string | undefined, fallback: LogLevel): LogLevel {
  if (!value) return fallback;
  if (value === 'debug' || value === 'info' || value === 'warn' || value === 'error') return value;
  throw new UsageError(`--log-level must be debug, info, warn or error, got "${value}"`);
}

/** The question argument; `-` reads it from standard input (a long question, a pasted stack trace). */
export async function questionArgument(value: string): Promise<string> {
  if (value !== '-') return value;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const question = Buffer.concat(chunks).toString('utf8').trim();
  if (!question) throw new UsageError('the question read from standard input (-) is empty');
  return question;
}
