/** Tokens and dollars of every model call a RunService made since it started: what /metrics counts. */
import type { TokenUsage } from '../providers/model-provider.js';

export interface ModelUsageSnapshot {
  /** Model calls that reported usage. */
  turns: number;
  tokens: { input: number; output: number; cached_input: number; cache_write: number; reasoning: number };
  /** Sum over priced calls. */
  cost_usd: number;
  /** Calls to models without a known price (their cost is not in cost_usd). */
  unpriced_turns: number;
}

export class ModelUsageTotals {
  private turns = 0;
  private unpriced = 0;
  private costUsd = 0;
  private readonly tokens = { input: 0, output: 0, cached_input: 0, cache_write: 0, reasoning: 0 };

  add(usage: TokenUsage, costUsd: number | null): void {
    this.turns++;
    this.tokens.input += usage.inputTokens || 0;
    this.tokens.output += usage.outputTokens || 0;
    this.tokens.cached_input += usage.cachedInputTokens || 0;
    this.tokens.cache_write += usage.cacheWriteTokens || 0;
    this.tokens.reasoning += usage.reasoningTokens || 0;
    if (costUsd === null) this.unpriced++;
    else this.costUsd += costUsd;
  }

  snapshot(): ModelUsageSnapshot {
    return { turns: this.turns, tokens: { ...this.tokens }, cost_usd: Math.round(this.costUsd * 1e6) / 1e6, unpriced_turns: this.unpriced };
  }
}
