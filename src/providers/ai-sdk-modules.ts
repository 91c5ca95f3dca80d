/**
 * The AI SDK, loaded when a real model first streams: `ai` and the provider packages are about
 * 25 MB of a process's memory and most of its start-up time, and a run on the offline or script
 * model, or a server that has not yet served a real model, never needs them.
 */
import type { LanguageModel } from 'ai';
import type { AiSdkProviderName } from './provider-env.js';

export type AiModule = typeof import('ai');

let ai: Promise<AiModule> | null = null;

export function loadAi(): Promise<AiModule> {
  ai ??= import('ai');
  return ai;
}

/** The SDK's language model of one provider, its package loaded on first use. */
export async function loadLanguageModel(
  provider: AiSdkProviderName,
  o: { apiKey: string | undefined; baseURL: string; label: string; model: string },
): Promise<LanguageModel> {
  const { apiKey, baseURL } = o;
  switch (provider) {
    case 'openai':
      // Chat completions: the API every OpenAI-style proxy and gateway also speaks.
      return (await import('@ai-sdk/openai')).createOpenAI({ apiKey, baseURL }).chat(o.model);
    case 'anthropic':
      return (await import('@ai-sdk/anthropic')).createAnthropic({ apiKey, baseURL })(o.model);
    case 'deepseek':
      return (await import('@ai-sdk/deepseek')).createDeepSeek({ apiKey, baseURL })(o.model);
    case 'openai-compatible':
      return (await import('@ai-sdk/openai-compatible')).createOpenAICompatible({ name: o.label, apiKey, baseURL, includeUsage: true }).chatModel(o.model);
  }
}
