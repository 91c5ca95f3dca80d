/**
 * runtime/metrics.json as figures a person reads: the headline numbers, time by stage (with shares),
 * tool calls by name (count and time) and model latency. DOM-free so tests can import it.
 */
import { formatUsd } from './usage-summary.js';
import { formatMs } from './trace-view.js';

export interface Figure {
  label: string;
  value: string;
}

export interface StageTime {
  stage: string;
  label: string;
  ms: number;
  /** share of the run, 0–100 */
  pct: number;
}

export interface ToolFigure {
  name: string;
  calls: number;
  ms: number;
}

export interface MetricsFigures {
  headline: Figure[];
  stages: StageTime[];
  tools: ToolFigure[];
  latency: Figure[];
}

interface MetricsLike {
  status?: string;
  duration_ms?: number;
  stage_durations_ms?: Record<string, number>;
  iterations?: number;
  tool_calls?: { total?: number; failed?: number; by_name?: Record<string, number> };
  tool_duration_ms?: Record<string, number>;
  cost_usd?: number | null;
  model_latency_ms?: { turns?: number; total?: number; mean?: number; max?: number; first_token_mean?: number };
  provider_retries?: number;
}

/** In the order a run goes through them. */
const STAGES: Array<[string, string]> = [
  ['queued', 'Queued'],
  ['created', 'Setting up'],
  ['planning', 'Planning'],
  ['model_thinking', 'Model'],
  ['tool_executing', 'Tools'],
  ['awaiting_approval', 'Waiting for approval'],
  ['validating', 'Validating'],
];

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const n = (v: number) => v.toLocaleString('en-US');

/** null when the value is not a metrics file. */
export function metricsFigures(metrics: unknown): MetricsFigures | null {
  if (!metrics || typeof metrics !== 'object' || !('duration_ms' in metrics)) return null;
  const m = metrics as MetricsLike;
  const duration = num(m.duration_ms);
  const stageMs = m.stage_durations_ms ?? {};
  const known = new Set(STAGES.map(([k]) => k));
  const order = [
    ...STAGES,
    ...Object.keys(stageMs)
      .filter((k) => !known.has(k))
      .map((k): [string, string] => [k, k.replace(/_/g, ' ')]),
  ];
  const stageTotal = Object.values(stageMs).reduce((a, b) => a + num(b), 0) || 1;
  const stages = order
    .filter(([k]) => num(stageMs[k]) > 0)
    .map(([stage, label]) => ({ stage, label, ms: num(stageMs[stage]), pct: (100 * num(stageMs[stage])) / stageTotal }));

  const byName = m.tool_calls?.by_name ?? {};
  const toolMs = m.tool_duration_ms ?? {};
  const tools = Object.keys(byName)
    .map((name) => ({ name, calls: num(byName[name]), ms: num(toolMs[name]) }))
    .sort((a, b) => b.calls - a.calls || b.ms - a.ms || a.name.localeCompare(b.name));

  const total = num(m.tool_calls?.total);
  const failed = num(m.tool_calls?.failed);
  const retries = num(m.provider_retries);
  const lat = m.model_latency_ms ?? {};
  const headline: Figure[] = [
    { label: 'Duration', value: formatMs(duration) },
    { label: 'Model calls', value: n(num(lat.turns)) },
    { label: 'Tool calls', value: failed ? `${n(total)} (${n(failed)} failed)` : n(total) },
    { label: 'Retries', value: retries ? `${n(retries)} model ${retries === 1 ? 'retry' : 'retries'}` : 'none' },
    { label: 'Cost', value: m.cost_usd === null ? 'unknown' : m.cost_usd === undefined ? '–' : formatUsd(m.cost_usd) },
  ];
  const latency: Figure[] = num(lat.turns)
    ? [
        { label: 'Mean per call', value: formatMs(num(lat.mean)) },
        { label: 'Slowest call', value: formatMs(num(lat.max)) },
        { label: 'First token (mean)', value: formatMs(num(lat.first_token_mean)) },
        { label: 'All model time', value: formatMs(num(lat.total)) },
      ]
    : [];
  return { headline, stages, tools, latency };
}
