import { fail, ok, type Result } from '../util/result';
import { AnthropicClient } from './anthropic';
import type { LlmClient } from './client';
import { OpenAiCompatibleClient } from './openai-compatible';
import type { LlmProviderSetting } from './providers';

/** The providers this module makes clients for (VS Code's models run in the editor). */
export type LlmProvider = Exclude<LlmProviderSetting, 'vscode'>;

export interface LlmSettings {
  readonly provider: LlmProvider;
  /** Empty for the provider's default model. */
  readonly model?: string;
  /** Empty for the provider's default server. */
  readonly baseUrl?: string;
  readonly apiKey?: string;
  readonly timeoutMs?: number;
  /** Log prompt text at DEBUG; off by default because prompts hold the user's code. */
  readonly logPrompts?: boolean;
}

/** The client the settings describe, or null when no model is to be used. */
export function createLlmClient(settings: LlmSettings): LlmClient | null {
  const options = {
    ...(settings.model ? { model: settings.model } : {}),
    ...(settings.baseUrl ? { baseUrl: settings.baseUrl } : {}),
    ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
    ...(settings.timeoutMs ? { timeoutMs: settings.timeoutMs } : {}),
    logPrompts: settings.logPrompts ?? false,
  };
  switch (settings.provider) {
    case 'anthropic':
      return new AnthropicClient(options);
    case 'openai-compatible':
      return new OpenAiCompatibleClient(options);
    case 'none':
      return null;
  }
}

/** The provider names people use (CODE_ORACLE_LLM_PROVIDER, --provider): Ollama and OpenAI both mean the OpenAI-compatible API. */
const PROVIDER_NAMES: Record<string, LlmProvider> = {
  anthropic: 'anthropic',
  'openai-compatible': 'openai-compatible',
  openai: 'openai-compatible',
  ollama: 'openai-compatible',
  none: 'none',
};

/** The provider a name means, or undefined when it names none (own keys only: "toString" is no provider). */
export function providerNamed(name: string): LlmProvider | undefined {
  return Object.hasOwn(PROVIDER_NAMES, name) ? PROVIDER_NAMES[name] : undefined;
}

/**
 * LLM settings from the environment, with `overrides` (e.g. editor settings) taking precedence
 * where they are set. Without CODE_ORACLE_LLM_PROVIDER the provider is 'none': nothing leaves the
 * machine unless someone chose a model, even when an API key happens to be in the environment.
 */
export function llmSettingsFromEnv(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<LlmSettings> = {},
): Result<LlmSettings> {
  const providerName = (env.CODE_ORACLE_LLM_PROVIDER ?? '').trim().toLowerCase();
  const envProvider = providerName === '' ? 'none' : providerNamed(providerName);
  if (!envProvider) {
    return fail(
      'invalid_input',
      `CODE_ORACLE_LLM_PROVIDER=${providerName} is not one of ${Object.keys(PROVIDER_NAMES).join(', ')}.`,
    );
  }
  const provider = overrides.provider ?? envProvider;
  const fromEnv: LlmSettings = {
    provider,
    ...definedEntries({
      model: env.CODE_ORACLE_LLM_MODEL,
      baseUrl: env.CODE_ORACLE_LLM_BASE_URL,
      apiKey: apiKeyFromEnv(env, provider),
    }),
    logPrompts: env.CODE_ORACLE_LOG_PROMPTS === '1' || env.CODE_ORACLE_LOG_PROMPTS === 'true',
  };
  return ok({ ...fromEnv, ...definedEntries(overrides) });
}

/** ANTHROPIC_API_KEY is only for Anthropic: it must not be sent to some other server. */
function apiKeyFromEnv(env: NodeJS.ProcessEnv, provider: LlmProvider): string | undefined {
  const key =
    env.CODE_ORACLE_LLM_API_KEY || (provider === 'anthropic' ? env.ANTHROPIC_API_KEY : undefined);
  return key || undefined;
}

/** The entries whose values are set, so an unset override or empty variable keeps the default. */
function definedEntries<T extends object>(values: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(values).filter(([, value]) => value !== undefined && value !== ''),
  ) as Partial<T>;
}
