/**
 * The waterfall's geometry and words, DOM-free so tests can import them: the shape GET /api/runs/:id/trace
 * answers with, bars placed on one time axis (open bars run to "now"), and ms / tokens as people read them.
 */

export interface Tokens {
  input: number;
  output: number;
  cached_input: number;
  cache_write: number;
  reasoning: number;
}

export interface TraceBar {
  id: string;
  parent_id: string | null;
  /** run | model | tool | skill | mcp | agent | kb | media | compaction */
  kind: string;
  name: string;
  label: string;
  start_ms: number;
  end_ms: number | null;
  duration_ms: number | null;
  status: 'running' | 'ok' | 'error' | 'cancelled';
  error: string | null;
  tokens: Tokens | null;
  cost_usd: number | null;
  step_index: number | null;
  turn?: number;
  attempt?: number;
  first_token_ms?: number | null;
  finish_reason?: string;
}

/** A person's message to the run (steer or follow-up) and when the model got it. */
export interface TraceMessage {
  id: string;
  mode: 'steer' | 'follow_up';
  text: string;
  from: string;
  at_ms: number;
  delivered_ms: number | null;
}

export interface RunTraceView {
  run_id: string;
  trace_id: string;
  t0: number;
  last_ms: number;
  ended: boolean;
  bars: TraceBar[];
  /** absent from servers before messages were shown */
  messages?: TraceMessage[];
}

export interface PlacedBar {
  bar: TraceBar;
  /** % of the axis */
  left: number;
  width: number;
  running: boolean;
  /** what the bar lasted, or has lasted so far */
  ms: number;
}

export const KIND_LABEL: Record<string, string> = {
  run: 'run',
  model: 'model',
  tool: 'tool',
  skill: 'skill',
  mcp: 'MCP',
  agent: 'subagent',
  kb: 'knowledge',
  media: 'media',
  compaction: 'compaction',
};

const n = (v: number) => v.toLocaleString('en-US');

export function formatMs(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1) return '<1 ms';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return s === 60 ? `${m + 1} min` : `${m} min ${String(s).padStart(2, '0')} s`;
}

/** "1,234 in · 56 out" (+ cached / reasoning when there are any); '' for a bar without tokens. */
export function tokensText(t: Tokens | null | undefined): string {
  if (!t) return '';
  const parts = [`${n(t.input)} in`, `${n(t.output)} out`];
  if (t.cached_input) parts.push(`${n(t.cached_input)} cached`);
  if (t.reasoning) parts.push(`${n(t.reasoning)} reasoning`);
  return parts.join(' · ');
}

/** Round steps (1, 2, 5 × 10^k ms) that cut the axis into at most `max` parts. */
export function axisTicks(totalMs: number, max = 6): number[] {
  if (!(totalMs > 0)) return [0];
  const raw = totalMs / max;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((k) => k * pow).find((s) => s >= raw) ?? 10 * pow;
  const ticks: number[] = [];
  for (let t = 0; t <= totalMs + 1e-9; t += step) ticks.push(Math.round(t * 1000) / 1000);
  return ticks;
}

/**
 * Every bar on the axis 0…total, where total is the run's length (or, while it runs, `nowMs`: ms since t0
 * as the page estimates it). A bar too short to see still gets a sliver.
 */
export function placeBars(view: RunTraceView, nowMs: number): { totalMs: number; bars: PlacedBar[] } {
  const ends = view.bars.map((b) => b.end_ms ?? 0);
  const totalMs = Math.max(1, view.ended ? view.last_ms : Math.max(view.last_ms, nowMs), ...ends);
  const bars = view.bars.map((bar): PlacedBar => {
    const running = bar.end_ms === null;
    const end = running ? totalMs : (bar.end_ms as number);
    const left = (100 * bar.start_ms) / totalMs;
    const width = Math.max(0.4, (100 * (end - bar.start_ms)) / totalMs);
    return { bar, left: Math.min(left, 99.6), width: Math.min(width, 100 - Math.min(left, 99.6)), running, ms: end - bar.start_ms };
  });
  return { totalMs, bars };
}

/** What a screen reader says for a bar, and what its tooltip shows. */
export function barSummary(p: PlacedBar): string {
  const b = p.bar;
  const bits = [KIND_LABEL[b.kind] ?? b.kind, b.label, p.running ? `running ${formatMs(p.ms)}` : formatMs(p.ms)];
  const t = tokensText(b.tokens);
  if (t) bits.push(t);
  if (b.status === 'error') bits.push(`failed${b.error ? `: ${b.error}` : ''}`);
  if (b.status === 'cancelled') bits.push('cut off');
  return bits.join(', ');
}
