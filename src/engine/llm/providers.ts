/**
 * Who writes answers, as the editor's `codeOracle.llm.provider` setting names them: no model, the
 * HTTP backends, or VS Code's language models (which only the editor can call). A module of its
 * own, so the editor's side reads the list without loading the clients.
 */
export const LLM_PROVIDERS = ['none', 'anthropic', 'openai-compatible', 'vscode'] as const;
export type LlmProviderSetting = (typeof LLM_PROVIDERS)[number];
