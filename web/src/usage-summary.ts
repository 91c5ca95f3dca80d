/** The usage rows of a run's metrics.json as the page shows them: tokens, cache share, cost. */

export interface UsageRow {
  label: string;
  value: string;
}

interface MetricsLike {
  tokens?: { input?: number; output?: number; cached_input?: number; cache_write?: number; reasoning?: number };
  cost_usd?: number | null;
  model_latency_ms?: { turns?: number };
}

export function formatUsd(usd: number): string {
  if (usd === 0) return '$0';
  return `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(usd >= 0.01 ? 4 : 6)}`;
}

const n = (v: number | undefined) => (v ?? 0).toLocaleString('en-US');

/** null when the value is not a metrics file (nothing to summarise). */
export function usageRows(metrics: unknown): UsageRow[] | null {
  if (!metrics || typeof metrics !== 'object' || !('tokens' in metrics)) return null;
  const m = metrics as MetricsLike;
  const t = m.tokens ?? {};
  const input = t.input ?? 0;
  const cached = t.cached_input ?? 0;
  const share = input ? ` (${Math.round((100 * cached) / input)}%)` : '';
  return [
    { label: 'Model calls', value: n(m.model_latency_ms?.turns) },
    { label: 'Input tokens', value: n(input) },
    { label: 'From cache', value: `${n(cached)}${share}` },
    { label: 'Written to cache', value: n(t.cache_write) },
    { label: 'Output tokens', value: n(t.output) },
    { label: 'Reasoning tokens', value: n(t.reasoning) },
    { label: 'Cost', value: m.cost_usd === null ? 'unknown (no price for this model)' : m.cost_usd === undefined ? '–' : formatUsd(m.cost_usd) },
  ];
}
