/**
 * What the runs list shows of each run beside its status: how long it took, its tokens and its cost,
 * from the run's metrics.json (written when it ends). A finished run's figures never change: they are
 * kept in memory (a bounded number), so the list's polling reads each file once.
 */
import { join } from 'node:path';
import { isTerminalRunState } from '../runtime/run-state-machine.js';
import type { RunStatusFile } from '../runtime/run-service-types.js';
import { RunFolder } from '../runtime/storage/run-folder.js';

export interface RunUsage {
  duration_ms: number | null;
  /** input + output tokens of every model call (its subagents' included); null before it ends */
  tokens: number | null;
  /** null: unknown (a model without a price) or not ended */
  cost_usd: number | null;
  model_calls: number | null;
}

const KEPT = 5_000;

export class RunUsageReader {
  private readonly finished = new Map<string, RunUsage>();

  constructor(private readonly dataDir: string) {}

  async of(run: RunStatusFile): Promise<RunUsage> {
    const known = this.finished.get(run.run_id);
    if (known) return known;
    const started = run.started_at ? Date.parse(run.started_at) : NaN;
    const ended = run.finished_at ? Date.parse(run.finished_at) : Date.now();
    const usage: RunUsage = { duration_ms: Number.isFinite(started) ? Math.max(0, ended - started) : null, tokens: null, cost_usd: null, model_calls: null };
    if (!isTerminalRunState(run.status)) return usage;
    const m = await new RunFolder(join(this.dataDir, 'runs'), run.run_id).readMetrics();
    if (!m) return usage; // no metrics (a run cancelled while queued): nothing more to tell, and it may still come
    usage.duration_ms = typeof m.duration_ms === 'number' ? m.duration_ms : usage.duration_ms;
    usage.tokens = (m.tokens?.input ?? 0) + (m.tokens?.output ?? 0);
    usage.cost_usd = typeof m.cost_usd === 'number' ? m.cost_usd : null;
    usage.model_calls = m.model_latency_ms?.turns ?? null;
    if (this.finished.size >= KEPT) this.finished.delete(this.finished.keys().next().value as string);
    this.finished.set(run.run_id, usage);
    return usage;
  }
}
