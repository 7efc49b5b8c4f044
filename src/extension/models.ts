import * as vscode from 'vscode';
import type { LlmWire } from '../engine/host/protocol';
import { readConfig, type LlmProviderSetting } from './config';

/**
 * Which model answers, as the engine worker needs it. API keys live in SecretStorage (the "Set
 * API Key" command), never in settings or logs; they travel to the worker in memory only. In a
 * workspace that is not trusted no model is used: its settings could send the code elsewhere.
 */
const KEY_PREFIX = 'codeOracle.apiKey.';

export async function llmWire(secrets: vscode.SecretStorage): Promise<LlmWire> {
  const { llm } = readConfig();
  if (llm.provider === 'none' || !vscode.workspace.isTrusted) return { provider: 'none' };
  const apiKey =
    llm.provider === 'vscode' ? undefined : await secrets.get(`${KEY_PREFIX}${llm.provider}`);
  return {
    provider: llm.provider,
    logPrompts: llm.logPrompts,
    ...(llm.model ? { model: llm.model } : {}),
    ...(llm.baseUrl && llm.provider === 'openai-compatible' ? { baseUrl: llm.baseUrl } : {}),
    ...(apiKey ? { apiKey } : {}),
  };
}

export async function setApiKey(
  secrets: vscode.SecretStorage,
  provider: Exclude<LlmProviderSetting, 'none' | 'vscode'>,
  key: string,
): Promise<void> {
  if (key) await secrets.store(`${KEY_PREFIX}${provider}`, key);
  else await secrets.delete(`${KEY_PREFIX}${provider}`);
}

/** Whether a model writes answers: Thinking and Deep need one. */
export function hasModel(): boolean {
  return readConfig().llm.provider !== 'none' && vscode.workspace.isTrusted;
}

/** What the chat shows as the answering model. */
export function modelLabel(): string {
  const { llm } = readConfig();
  if (llm.provider === 'none') return 'No model: answers show the evidence';
  if (!vscode.workspace.isTrusted) return 'No model in Restricted Mode';
  const names: Record<LlmProviderSetting, string> = {
    none: '',
    anthropic: 'Anthropic',
    'openai-compatible': 'Local server',
    vscode: 'VS Code',
  };
  return `${names[llm.provider]}${llm.model ? ` · ${llm.model}` : ''}`;
}
