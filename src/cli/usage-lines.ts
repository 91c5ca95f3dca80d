/** The tokens and cost lines of `runtrail show`, from a run's runtime/metrics.json. */
import { RunFolder } from '../runtime/storage/run-folder.js';
import type { RunMetricsFile } from '../runtime/metrics/run-metrics.js';

/** metrics.json of a run, or null while it runs (or when it is unreadable). */
export function readRunMetrics(runsDir: string, runId: string): Promise<RunMetricsFile | null> {
  return new RunFolder(runsDir, runId).readMetrics();
}

/** `$0.0123`: enough digits for a cheap turn, never a float tail. */
export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  return `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(usd >= 0.01 ? 4 : 6)}`;
}

export function usageLines(m: RunMetricsFile | null): string[] {
  if (!m) return ['tokens     - (no metrics yet)'];
  const t = m.tokens;
  // metrics.json of runs from before cache accounting has input/output only
  const cached = t.cached_input ?? 0;
  const written = t.cache_write ?? 0;
  const share = t.input ? ` = ${Math.round((100 * cached) / t.input)}% from cache` : '';
  const cost = m.cost_usd === undefined ? '-' : m.cost_usd === null ? 'unknown (the model has no price in the catalog)' : formatUsd(m.cost_usd);
  return [
    `tokens     in ${t.input} (cached ${cached}${share}, cache write ${written}) · out ${t.output} (reasoning ${t.reasoning ?? 0}) · ${m.model_latency_ms.turns} model call(s)`,
    `cost       ${cost}`,
  ];
}
