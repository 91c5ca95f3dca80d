/**
 * The offline model for a plugin without a reference procedure (a Markdown agent, most code
 * plugins): it does not pretend. The run fails at its first turn with `offline_unsupported`,
 * saying which models can run it.
 */
import type { ModelProvider, ModelStreamPart } from '../../providers/model-provider.js';
import { OFFLINE_MODEL } from '../../providers/offline-provider.js';

export const REAL_MODELS_HINT =
  "Run it with a model that can act: --model openai:<model>, anthropic:<model>, deepseek:<model>, openai-compatible:<model>, ollama:<model> or script:<turns.json> (or set model: in the agent file, RUNTRAIL_MODEL, or config.json's model).";

export function offlineUnsupportedProvider(pluginName: string): ModelProvider {
  return {
    provider: 'offline',
    model: OFFLINE_MODEL,
    async *stream(): AsyncGenerator<ModelStreamPart> {
      yield {
        type: 'error',
        diagnosis: {
          code: 'offline_unsupported',
          severity: 'error',
          summary: `the offline model cannot run ${pluginName}: it has no reference procedure to follow`,
          detail: 'The offline model only plays the reference procedures of the builtin plugins; for any other agent it would have to invent answers.',
          hint: REAL_MODELS_HINT,
          retryable: false,
        },
      };
    },
  };
}
