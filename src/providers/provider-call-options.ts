/**
 * The per-call provider options one request asks for, in each API's own terms (the AI SDK's
 * `providerOptions`): reasoning effort and the prompt-cache key. Cache breakpoints ride on the
 * messages, system prompt and tools instead (message-mapping.ts).
 */
import type { SharedV3ProviderOptions as ProviderOptions } from '@ai-sdk/provider';
import type { ModelApi } from './message-mapping.js';
import type { ModelInfo } from './model-catalog.js';
import type { ReasoningEffort } from './model-provider.js';

/** Anthropic extended thinking: `budget_tokens` per effort (the API's minimum is 1,024). */
export const ANTHROPIC_THINKING_BUDGET: Record<Exclude<ReasoningEffort, 'off'>, number> = { low: 2_048, medium: 8_192, high: 24_576 };

export interface CallOptions {
  providerOptions: ProviderOptions | undefined;
  /** Output tokens reserved for thinking on top of the reply (Anthropic). */
  reasoningBudget: number;
  /** Why an asked-for setting was not sent, for the run's notices. */
  notices: string[];
}

export interface CallOptionsInput {
  api: ModelApi;
  reasoning: ReasoningEffort;
  cacheKey: string | undefined;
  info: ModelInfo | null;
  /** e.g. `openai:gpt-4o-mini`, for notices */
  label: string;
  /** The key the SDK reads an openai-compatible provider's options under (its name, e.g. 'ollama'). */
  compatibleName?: string;
}

/** DeepSeek's reasoner always thinks; deepseek-chat thinks when asked (`thinking: enabled`). */
function deepseekAlwaysThinks(model: string): boolean {
  return model === 'deepseek-reasoner' || model.startsWith('deepseek-r1');
}

export function callOptions(o: CallOptionsInput): CallOptions {
  const notices: string[] = [];
  const wantsReasoning = o.reasoning !== 'off';
  // the catalog says this model has no reasoning option: asking would be rejected (e.g. gpt-4o-mini).
  // DeepSeek's chat model is listed without reasoning, yet its API turns thinking on by a switch.
  const cannotReason = wantsReasoning && o.info?.reasoning === false && o.api !== 'deepseek';
  if (cannotReason) notices.push(`${o.label} does not support reasoning: reasoning "${o.reasoning}" was not sent`);
  const reason = wantsReasoning && !cannotReason ? (o.reasoning as Exclude<ReasoningEffort, 'off'>) : null;
  switch (o.api) {
    case 'anthropic':
      return reason
        ? {
            providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: ANTHROPIC_THINKING_BUDGET[reason] } } },
            reasoningBudget: ANTHROPIC_THINKING_BUDGET[reason],
            notices,
          }
        : { providerOptions: undefined, reasoningBudget: 0, notices };
    case 'openai': {
      const openai: Record<string, string> = {};
      if (reason) openai.reasoningEffort = reason;
      // one key for the whole run: OpenAI routes requests with the same key to the same prompt cache
      if (o.cacheKey) openai.promptCacheKey = o.cacheKey;
      return { providerOptions: Object.keys(openai).length ? { openai } : undefined, reasoningBudget: 0, notices };
    }
    case 'deepseek': {
      const model = o.info?.model ?? o.label.slice(o.label.indexOf(':') + 1);
      if (!reason || deepseekAlwaysThinks(model)) return { providerOptions: undefined, reasoningBudget: 0, notices };
      return { providerOptions: { deepseek: { thinking: { type: 'enabled' } } }, reasoningBudget: 0, notices };
    }
    case 'openai-compatible':
      return reason && o.compatibleName
        ? { providerOptions: { [o.compatibleName]: { reasoningEffort: reason } }, reasoningBudget: 0, notices }
        : { providerOptions: undefined, reasoningBudget: 0, notices };
    default:
      return { providerOptions: undefined, reasoningBudget: 0, notices };
  }
}
