import * as vscode from 'vscode';
import type { AnswerMode } from '../engine/answer/model';
import type { LlmProviderSetting } from '../engine/llm/providers';
import type { LogLevel } from '../engine/log/logger';

/**
 * Every setting the extension reads, typed, in one place. Defaults and allowed values live only in
 * package.json's `contributes.configuration`: VS Code answers a contributed setting the user has
 * not set with its default, so nothing here restates one (test/unit/settings.test.ts checks that
 * every key read here is contributed, and that the manifest agrees with the engine's constants).
 */
export type { LlmProviderSetting };
export type ChatModeSetting = AnswerMode;

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
  // contributed settings always have a value: the user's, or the manifest's default
  const read = <T>(key: string): T => config.get<T>(key) as T;
  return {
    embeddingModel: read<string>('embeddingModel').trim(),
    maxFileSize: read<number>('index.maxFileSize'),
    exclude: read<string[]>('index.exclude'),
    logLevel: read<LogLevel>('log.level'),
    llm: {
      provider: read<LlmProviderSetting>('llm.provider'),
      model: read<string>('llm.model').trim(),
      baseUrl: read<string>('llm.baseUrl').trim(),
      summarizeLongFunctions: read<boolean>('llm.summarizeLongFunctions'),
      logPrompts: read<boolean>('llm.logPrompts'),
    },
    chatMode: read<ChatModeSetting>('chat.defaultMode'),
    webSearchUrl: read<string>('search.webSearchUrl').trim(),
    callersLens: read<boolean>('callersLens.enabled'),
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
