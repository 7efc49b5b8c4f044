import * as vscode from 'vscode';
import type { LogLevel } from '../engine/log/logger';

/** Every setting the extension reads, typed, in one place. */
export type LlmProviderSetting = 'none' | 'anthropic' | 'openai-compatible' | 'vscode';
export type ChatModeSetting = 'fast' | 'thinking' | 'deep';

export interface OracleConfig {
  /** '' for the default model (downloaded on first use), 'none', a model folder, or owner/repo. */
  readonly embeddingModel: string;
  readonly maxFileSize: number;
  /** Extra exclusions on top of `.gitignore` and `files.exclude`. */
  readonly exclude: readonly string[];
  readonly logLevel: LogLevel;
  readonly llm: {
    readonly provider: LlmProviderSetting;
    /** '' for the provider's default (for VS Code's models: the first one offered). */
    readonly model: string;
    /** The OpenAI-compatible server; '' for a local Ollama. */
    readonly baseUrl: string;
    readonly summarizeLongFunctions: boolean;
    readonly logPrompts: boolean;
  };
  readonly chatMode: ChatModeSetting;
  /** A SearXNG server for questions the code cannot answer; '' for none. */
  readonly webSearchUrl: string;
  readonly callersLens: boolean;
}

export const SECTION = 'codeOracle';

export function readConfig(): OracleConfig {
  const config = vscode.workspace.getConfiguration(SECTION);
  return {
    embeddingModel: config.get<string>('embeddingModel', '').trim(),
    maxFileSize: config.get<number>('index.maxFileSize', 1024 * 1024),
    exclude: config.get<string[]>('index.exclude', []),
    logLevel: config.get<LogLevel>('log.level', 'info'),
    llm: {
      provider: config.get<LlmProviderSetting>('llm.provider', 'none'),
      model: config.get<string>('llm.model', '').trim(),
      baseUrl: config.get<string>('llm.baseUrl', '').trim(),
      summarizeLongFunctions: config.get<boolean>('llm.summarizeLongFunctions', true),
      logPrompts: config.get<boolean>('llm.logPrompts', false),
    },
    chatMode: config.get<ChatModeSetting>('chat.defaultMode', 'fast'),
    webSearchUrl: config.get<string>('search.webSearchUrl', '').trim(),
    callersLens: config.get<boolean>('callersLens.enabled', true),
  };
}

/** The editor's `files.exclude` patterns that are switched on, for a folder. */
export function filesExclude(folder: vscode.WorkspaceFolder): string[] {
  const patterns = vscode.workspace
    .getConfiguration('files', folder.uri)
    .get<Record<string, boolean>>('exclude', {});
  return Object.entries(patterns)
    .filter(([, enabled]) => enabled === true)
    .map(([pattern]) => pattern);
}
