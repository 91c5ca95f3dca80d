/** Tokens and dollars of every model call a RunService made since it started: what /metrics counts. */
import type { ModelTokens } from '../../events/agent-event.js';

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

  add(tokens: ModelTokens, costUsd: number | null): void {
    this.turns++;
    this.tokens.input += tokens.input;
    this.tokens.output += tokens.output;
    this.tokens.cached_input += tokens.cached_input;
    this.tokens.cache_write += tokens.cache_write;
    this.tokens.reasoning += tokens.reasoning;
    if (costUsd === null) this.unpriced++;
    else this.costUsd += costUsd;
  }

  snapshot(): ModelUsageSnapshot {
    return { turns: this.turns, tokens: { ...this.tokens }, cost_usd: Math.round(this.costUsd * 1e6) / 1e6, unpriced_turns: this.unpriced };
  }
}
