import { parseArgs, type ParseArgsConfig } from 'node:util';
import * as path from 'node:path';
import { parseModelSetting, type ModelRequest } from '../engine/embed/embedder';
import type { EngineOptions } from '../engine/engine';
import type { LogLevel } from '../engine/log/logger';

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
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (cause) {
    throw new UsageError((cause as Error).message);
  }
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
    ...(values['max-file-size']
      ? { maxFileBytes: positiveInteger(values['max-file-size'], '--max-file-size') }
      : {}),
    ...(values.exclude ? { exclude: values.exclude } : {}),
    ...(values['no-git'] ? { useGit: false } : {}),
    ...(values.workers ? { workers: positiveInteger(values.workers, '--workers') } : {}),
  };
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
