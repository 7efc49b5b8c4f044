import * as vscode from 'vscode';
import type { LogLevel } from '../engine/log/logger';

/** Every setting the extension reads, typed, in one place. */
export interface OracleConfig {
  /** '' for the default model (downloaded on first use), 'none', a model folder, or owner/repo. */
  readonly embeddingModel: string;
  readonly maxFileSize: number;
  /** Extra exclusions on top of `.gitignore` and `files.exclude`. */
  readonly exclude: readonly string[];
  readonly logLevel: LogLevel;
}

export const SECTION = 'codeOracle';

export function readConfig(): OracleConfig {
  const config = vscode.workspace.getConfiguration(SECTION);
  return {
    embeddingModel: config.get<string>('embeddingModel', '').trim(),
    maxFileSize: config.get<number>('index.maxFileSize', 1024 * 1024),
    exclude: config.get<string[]>('index.exclude', []),
    logLevel: config.get<LogLevel>('log.level', 'info'),
  };
}

/** The editor's `files.exclude` patterns that are switched on, for a folder. */
export function filesExclude(folder: vscode.WorkspaceFolder): string[] {
  const patterns = vscode.workspace.getConfiguration('files', folder.uri).get<Record<string, boolean>>('exclude', {});
  return Object.entries(patterns)
    .filter(([, enabled]) => enabled === true)
    .map(([pattern]) => pattern);
}
