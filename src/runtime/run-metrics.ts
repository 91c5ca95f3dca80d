/** Aggregates what runtime/metrics.json reports (seed 003 step 9). */
import type { RunStatus } from '../events/agent-event.js';

export interface RunMetricsFile {
  run_id: string;
  status: RunStatus;
  duration_ms: number;
  /** milliseconds spent in each state */
  stage_durations_ms: Partial<Record<RunStatus, number>>;
  iterations: number;
  tool_calls: { total: number; failed: number; by_name: Record<string, number> };
  tool_duration_ms: Record<string, number>;
  tokens: { input: number; output: number };
  model_latency_ms: { turns: number; total: number; mean: number; max: number; first_token_mean: number };
  provider_retries: number;
  events: number;
}

export class RunMetrics {
  iterations = 0;
  providerRetries = 0;
  private toolsByName: Record<string, number> = {};
  private toolMs: Record<string, number> = {};
  private toolFailed = 0;
  private inTokens = 0;
  private outTokens = 0;
  private latencies: number[] = [];
  private firstTokens: number[] = [];

  recordTool(name: string, ok: boolean, durationMs: number): void {
    this.toolsByName[name] = (this.toolsByName[name] ?? 0) + 1;
    this.toolMs[name] = (this.toolMs[name] ?? 0) + durationMs;
    if (!ok) this.toolFailed++;
  }

  recordTurn(latencyMs: number, firstTokenMs: number | null, usage?: { inputTokens: number; outputTokens: number }): void {
    this.latencies.push(latencyMs);
    if (firstTokenMs !== null) this.firstTokens.push(firstTokenMs);
    if (usage) {
      this.inTokens += usage.inputTokens || 0;
      this.outTokens += usage.outputTokens || 0;
    }
  }

  get toolCalls(): number {
    return Object.values(this.toolsByName).reduce((a, b) => a + b, 0);
  }

  toFile(opts: { runId: string; status: RunStatus; durationMs: number; stages: Partial<Record<RunStatus, number>>; events: number }): RunMetricsFile {
    const round = (n: number) => Math.round(n * 1000) / 1000;
    const sum = this.latencies.reduce((a, b) => a + b, 0);
    const ftSum = this.firstTokens.reduce((a, b) => a + b, 0);
    return {
      run_id: opts.runId,
      status: opts.status,
      duration_ms: round(opts.durationMs),
      stage_durations_ms: Object.fromEntries(Object.entries(opts.stages).map(([k, v]) => [k, round(v ?? 0)])),
      iterations: this.iterations,
      tool_calls: { total: this.toolCalls, failed: this.toolFailed, by_name: { ...this.toolsByName } },
      tool_duration_ms: Object.fromEntries(Object.entries(this.toolMs).map(([k, v]) => [k, round(v)])),
      tokens: { input: this.inTokens, output: this.outTokens },
      model_latency_ms: {
        turns: this.latencies.length,
        total: round(sum),
        mean: this.latencies.length ? round(sum / this.latencies.length) : 0,
        max: this.latencies.length ? round(Math.max(...this.latencies)) : 0,
        first_token_mean: this.firstTokens.length ? round(ftSum / this.firstTokens.length) : 0,
      },
      provider_retries: this.providerRetries,
      events: opts.events,
    };
  }
}
