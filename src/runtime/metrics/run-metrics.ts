/**
 * Aggregates what runtime/metrics.json (and runtime/model_turns.jsonl) report. A run's metrics are
 * folded from the events its loop publishes (follow): model calls, provider retries, tool calls and
 * compactions; subagent runs and resumes are added by the parts that know them.
 */
import type { RunStatus } from '../../events/agent-event.js';
import type { TokenUsage } from '../../providers/model-provider.js';
import type { ModelUsageTotals } from './model-usage-totals.js';
import type { PublishedEvent } from '../run-publisher.js';

export interface TokenCounts {
  /** All input tokens, cached ones included. */
  input: number;
  /** All output tokens, reasoning included. */
  output: number;
  /** Input tokens read from the prompt cache. */
  cached_input: number;
  /** Input tokens written to the prompt cache. */
  cache_write: number;
  /** Output tokens spent on reasoning. */
  reasoning: number;
}

/** One line of runtime/model_turns.jsonl: one model call (a retry is a call of its own). */
export interface ModelTurnLine {
  /** The loop iteration (1-based); retries of a turn share it. */
  turn: number;
  /** 0 for the first try of a turn, then 1, 2, … for provider retries. */
  attempt: number;
  /** provider:model */
  model: string;
  started_at: string;
  /** null when the provider reported no usage (a call that failed). */
  tokens: TokenCounts | null;
  /** null when the model has no known price or no usage was reported. */
  cost_usd: number | null;
  latency_ms: number;
  first_token_ms: number | null;
  /** stop, tool-calls, length, content-filter, other; `error` for a failed call. */
  finish_reason: string;
  /** The diagnosis code of a failed call. */
  error?: string;
}

export interface RunMetricsFile {
  run_id: string;
  status: RunStatus;
  duration_ms: number;
  /** milliseconds spent in each state */
  stage_durations_ms: Partial<Record<RunStatus, number>>;
  iterations: number;
  tool_calls: { total: number; failed: number; by_name: Record<string, number> };
  tool_duration_ms: Record<string, number>;
  tokens: TokenCounts;
  /** USD of all model calls; null when a call used a model without a known price. */
  cost_usd: number | null;
  model_latency_ms: { turns: number; total: number; mean: number; max: number; first_token_mean: number };
  provider_retries: number;
  /** context compactions, and the tokens they took out of the context (estimated) */
  compactions: { count: number; tokens_saved: number };
  /** subagent runs this run started (their tokens and cost are in `tokens` and `cost_usd`) */
  subagent_runs: number;
  events: number;
  /** times the run was resumed after its process died, and what the model turns redone then cost */
  resumes: number;
  lost_to_resumes?: { turns: number; tokens: TokenCounts; cost_usd: number | null };
}

export interface ModelTurnRecord {
  latencyMs: number;
  firstTokenMs: number | null;
  /** null when the provider reported no usage */
  tokens: TokenCounts | null;
  costUsd: number | null;
  /** provider:model */
  model: string;
  turn: number;
  attempt: number;
  startedAt: Date;
  finishReason: string;
  errorCode?: string;
}

export function tokenCounts(u: TokenUsage): TokenCounts {
  return {
    input: u.inputTokens || 0,
    output: u.outputTokens || 0,
    cached_input: u.cachedInputTokens || 0,
    cache_write: u.cacheWriteTokens || 0,
    reasoning: u.reasoningTokens || 0,
  };
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** The counters of RunMetrics as a checkpoint keeps them (the model-call lines go separately, a few per record). */
export interface MetricsSnapshot {
  iterations: number;
  providerRetries: number;
  compactions: number;
  compactionTokensSaved: number;
  subagentRuns: number;
  toolsByName: Record<string, number>;
  toolMs: Record<string, number>;
  toolFailed: number;
  tokens: TokenCounts;
  costUsd: number;
  unpriced: boolean;
  resumes?: number;
  lost?: { turns: number; tokens: TokenCounts; costUsd: number; unpriced: boolean };
}

export class RunMetrics {
  iterations = 0;
  providerRetries = 0;
  compactions = 0;
  compactionTokensSaved = 0;
  subagentRuns = 0;
  /** times the run was resumed, and the model turns it had to redo (their tokens were paid twice) */
  resumes = 0;
  lost = { turns: 0, tokens: { input: 0, output: 0, cached_input: 0, cache_write: 0, reasoning: 0 } as TokenCounts, costUsd: 0, unpriced: false };
  private toolsByName: Record<string, number> = {};
  private toolMs: Record<string, number> = {};
  private toolFailed = 0;
  private tokens: TokenCounts = { input: 0, output: 0, cached_input: 0, cache_write: 0, reasoning: 0 };
  private costUsd = 0;
  /** a call that reported usage had no price: the run's cost is unknown */
  private unpriced = false;
  private latencies: number[] = [];
  private firstTokens: number[] = [];
  private readonly lines: ModelTurnLine[] = [];
  /** lines already handed to the checkpoint */
  private linesTaken = 0;

  /** `totals`: the service-wide counters /metrics reads, fed turn by turn. */
  constructor(private readonly totals?: ModelUsageTotals) {}

  recordTool(name: string, ok: boolean, durationMs: number): void {
    this.toolsByName[name] = (this.toolsByName[name] ?? 0) + 1;
    this.toolMs[name] = (this.toolMs[name] ?? 0) + durationMs;
    if (!ok) this.toolFailed++;
  }

  /**
   * One event the run's loop published: a model call's start (its turn; a retry when not the first
   * attempt) and end (its line), a tool call's result, a compaction that replaced messages. Every
   * other event is not the metrics'.
   */
  follow(e: PublishedEvent): void {
    if (e.stream === 'model') {
      const d = e.data;
      if (d.phase === 'start') {
        // the turn number is the loop's count (a resumed run's included); a compacted context retries a turn under the same number
        this.iterations = Math.max(this.iterations, d.turn);
        if (d.attempt > 0) this.providerRetries++;
        return;
      }
      this.recordTurn({
        latencyMs: d.latencyMs,
        firstTokenMs: d.firstTokenMs,
        tokens: d.tokens,
        costUsd: d.costUsd,
        model: `${d.provider}:${d.model}`,
        turn: d.turn,
        attempt: d.attempt,
        startedAt: new Date(d.startedAt),
        finishReason: d.finishReason,
        ...(d.error ? { errorCode: d.error } : {}),
      });
    } else if (e.stream === 'tool' && e.data.phase === 'result') {
      this.recordTool(e.data.name, !e.data.isError, e.data.durationMs ?? 0);
    } else if (e.stream === 'compaction' && e.data.phase === 'end' && e.data.replacedMessages) {
      this.compactions++;
      this.compactionTokensSaved += Math.max(0, (e.data.tokensBefore ?? 0) - (e.data.tokensAfter ?? 0));
    }
  }

  recordTurn(t: ModelTurnRecord): void {
    this.latencies.push(t.latencyMs);
    if (t.firstTokenMs !== null) this.firstTokens.push(t.firstTokenMs);
    const counts = t.tokens;
    if (counts) {
      for (const k of Object.keys(counts) as Array<keyof TokenCounts>) this.tokens[k] += counts[k];
      if (t.costUsd === null) this.unpriced = true;
      else this.costUsd += t.costUsd;
      this.totals?.add(counts, t.costUsd);
    }
    this.lines.push({
      turn: t.turn,
      attempt: t.attempt,
      model: t.model,
      started_at: t.startedAt.toISOString(),
      tokens: counts,
      cost_usd: counts ? t.costUsd : null,
      latency_ms: round3(t.latencyMs),
      first_token_ms: t.firstTokenMs === null ? null : round3(t.firstTokenMs),
      finish_reason: t.finishReason,
      ...(t.errorCode ? { error: t.errorCode } : {}),
    });
  }

  /** A subagent run finished: its tokens and cost join this run's (its own metrics.json keeps them apart). */
  addSubagent(child: Pick<RunMetricsFile, 'tokens' | 'cost_usd'> | null): void {
    this.subagentRuns++;
    if (!child) return;
    for (const k of Object.keys(this.tokens) as Array<keyof TokenCounts>) this.tokens[k] += child.tokens?.[k] ?? 0;
    if (child.cost_usd === null) this.unpriced = true;
    else this.costUsd += child.cost_usd ?? 0;
  }

  snapshot(): MetricsSnapshot {
    return {
      iterations: this.iterations,
      providerRetries: this.providerRetries,
      compactions: this.compactions,
      compactionTokensSaved: this.compactionTokensSaved,
      subagentRuns: this.subagentRuns,
      toolsByName: { ...this.toolsByName },
      toolMs: { ...this.toolMs },
      toolFailed: this.toolFailed,
      tokens: { ...this.tokens },
      costUsd: this.costUsd,
      unpriced: this.unpriced,
      resumes: this.resumes,
      lost: { ...this.lost, tokens: { ...this.lost.tokens } },
    };
  }

  /** The model-call lines recorded since the last call (a checkpoint record carries each once). */
  takeNewLines(): ModelTurnLine[] {
    const out = this.lines.slice(this.linesTaken);
    this.linesTaken = this.lines.length;
    return out;
  }

  /** A resumed attempt: the counters its checkpoint kept, one resume more, and what the turns it redoes cost. */
  restoreResumed(r: {
    point: { metrics: MetricsSnapshot; turns: ModelTurnLine[] };
    attempt: number;
    lost: { turns: number; tokens: TokenCounts; costUsd: number | null };
  }): void {
    this.restore(r.point.metrics, r.point.turns);
    this.resumes = r.attempt;
    this.lost.turns += r.lost.turns;
    for (const k of Object.keys(this.lost.tokens) as Array<keyof TokenCounts>) this.lost.tokens[k] += r.lost.tokens[k];
    if (r.lost.costUsd === null) this.lost.unpriced = true;
    else this.lost.costUsd += r.lost.costUsd;
  }

  /** A resumed run's counters and model-call lines, as its checkpoint kept them. */
  restore(s: MetricsSnapshot, lines: ModelTurnLine[]): void {
    Object.assign(this, {
      iterations: s.iterations,
      providerRetries: s.providerRetries,
      compactions: s.compactions,
      compactionTokensSaved: s.compactionTokensSaved,
      subagentRuns: s.subagentRuns,
      toolsByName: { ...s.toolsByName },
      toolMs: { ...s.toolMs },
      toolFailed: s.toolFailed,
      tokens: { ...s.tokens },
      costUsd: s.costUsd,
      unpriced: s.unpriced,
      resumes: s.resumes ?? 0,
      lost: s.lost ? { ...s.lost, tokens: { ...s.lost.tokens } } : this.lost,
    });
    for (const l of lines) {
      this.lines.push(l);
      this.latencies.push(l.latency_ms);
      if (l.first_token_ms !== null) this.firstTokens.push(l.first_token_ms);
    }
    this.linesTaken = this.lines.length;
  }

  get toolCalls(): number {
    return Object.values(this.toolsByName).reduce((a, b) => a + b, 0);
  }

  /** runtime/model_turns.jsonl: one JSON line per model call, in order. */
  turnLines(): string {
    return this.lines.map((l) => `${JSON.stringify(l)}\n`).join('');
  }

  toFile(opts: { runId: string; status: RunStatus; durationMs: number; stages: Partial<Record<RunStatus, number>>; events: number }): RunMetricsFile {
    const sum = this.latencies.reduce((a, b) => a + b, 0);
    const ftSum = this.firstTokens.reduce((a, b) => a + b, 0);
    return {
      run_id: opts.runId,
      status: opts.status,
      duration_ms: round3(opts.durationMs),
      stage_durations_ms: Object.fromEntries(Object.entries(opts.stages).map(([k, v]) => [k, round3(v ?? 0)])),
      iterations: this.iterations,
      tool_calls: { total: this.toolCalls, failed: this.toolFailed, by_name: { ...this.toolsByName } },
      tool_duration_ms: Object.fromEntries(Object.entries(this.toolMs).map(([k, v]) => [k, round3(v)])),
      tokens: { ...this.tokens },
      cost_usd: this.unpriced ? null : Math.round(this.costUsd * 1e6) / 1e6,
      model_latency_ms: {
        turns: this.latencies.length,
        total: round3(sum),
        mean: this.latencies.length ? round3(sum / this.latencies.length) : 0,
        max: this.latencies.length ? round3(Math.max(...this.latencies)) : 0,
        first_token_mean: this.firstTokens.length ? round3(ftSum / this.firstTokens.length) : 0,
      },
      provider_retries: this.providerRetries,
      compactions: { count: this.compactions, tokens_saved: this.compactionTokensSaved },
      subagent_runs: this.subagentRuns,
      events: opts.events,
      resumes: this.resumes,
      ...(this.resumes
        ? {
            lost_to_resumes: {
              turns: this.lost.turns,
              tokens: { ...this.lost.tokens },
              cost_usd: this.lost.unpriced ? null : Math.round(this.lost.costUsd * 1e6) / 1e6,
            },
          }
        : {}),
    };
  }
}
