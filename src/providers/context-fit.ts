/**
 * Before a request is sent: does it fit the model's context window, and how many output tokens
 * may the reply use? A request that cannot fit is refused here with a `context_length`
 * diagnosis instead of being sent to fail (and be paid for) at the provider.
 */
import type { DiagnosisInit } from '../events/diagnosis.js';
import type { ModelInfo } from './model-catalog.js';
import type { ModelRequest } from './model-provider.js';
import { estimateRequestTokens } from './token-estimate.js';

/**
 * Output tokens asked for when the catalog allows more: a reply rarely needs more, and on APIs
 * that check input + max_tokens against the window a larger reservation only shrinks the input.
 */
export const DEFAULT_MAX_OUTPUT_TOKENS = 32_768;
/** The least room a reply must have; below it the request is refused. */
export const MIN_REPLY_TOKENS = 1_024;

export interface FitOptions {
  /** Display name for the diagnosis, e.g. `anthropic:claude-haiku-4-5`. */
  label: string;
  info: ModelInfo | null;
  /** An explicit output limit (provider option); wins over the catalog's. */
  maxOutputTokens?: number;
  /** Output tokens reasoning takes on top of the reply (Anthropic's thinking budget). */
  reasoningBudget?: number;
}

export type FitResult =
  | {
      ok: true;
      /** What to send as the output limit; undefined lets the provider decide (nothing known). */
      maxOutputTokens: number | undefined;
      estimatedInputTokens: number;
      /** The window checked against; null when unknown (nothing was checked). */
      contextWindow: number | null;
    }
  | { ok: false; diagnosis: DiagnosisInit; estimatedInputTokens: number; contextWindow: number };

export function fitRequest(request: Pick<ModelRequest, 'system' | 'messages' | 'tools' | 'contextTokens'>, opts: FitOptions): FitResult {
  const estimated = estimateRequestTokens(request);
  const window = request.contextTokens ?? opts.info?.contextWindow ?? null;
  const budget = opts.reasoningBudget ?? 0;
  const catalogMax = opts.info?.maxOutputTokens ?? null;
  const cap = opts.maxOutputTokens ?? Math.min(catalogMax ?? DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_MAX_OUTPUT_TOKENS);
  if (window === null) {
    // nothing to check against: send a limit only when one is known
    const known = opts.maxOutputTokens ?? catalogMax;
    return { ok: true, maxOutputTokens: known === null ? undefined : cap, estimatedInputTokens: estimated, contextWindow: null };
  }
  const room = window - estimated - budget;
  if (room < MIN_REPLY_TOKENS) {
    const source = request.contextTokens !== undefined ? 'limits.context_tokens' : 'its context window';
    return {
      ok: false,
      estimatedInputTokens: estimated,
      contextWindow: window,
      diagnosis: {
        code: 'context_length',
        severity: 'error',
        summary: `The request does not fit ${opts.label}: about ${estimated} input tokens${budget ? ` and ${budget} for reasoning` : ''}, ${source} is ${window}`,
        detail: `A reply needs at least ${MIN_REPLY_TOKENS} more tokens; the request was not sent. Input tokens are estimated (about 4 characters a token).`,
        hint: 'Shorten the input or the goal, lower --reasoning, raise limits.context_tokens if the model allows more, or use a model with a larger context window.',
        retryable: false,
      },
    };
  }
  return { ok: true, maxOutputTokens: Math.min(cap, room), estimatedInputTokens: estimated, contextWindow: window };
}
