/**
 * Two runs side by side: their settings, their figures and each artifact's difference, as rows a
 * person scans for what changed. DOM-free so tests can import it.
 */
import { diffLines } from 'diff';
import type { Diagnosis } from './wire-types.js';
import { formatMs } from './trace-view.js';
import { formatUsd } from './usage-summary.js';

/** What a comparison reads of a run's status (GET /api/runs/:id). */
export interface RunStatus {
  status: string;
  plugin: string;
  goal: string;
  provider: string;
  model: string;
  diagnosis: Diagnosis | null;
}

export interface CompareRow {
  label: string;
  a: string;
  b: string;
  differs: boolean;
}

interface ConfigLike {
  reasoning?: string;
  limits?: Record<string, unknown>;
  capture?: { model_io?: boolean; max_call_bytes?: number };
  declared_tools?: string[];
  capabilities?: { skill?: { name?: string; version?: string } | string | null; allowedTools?: string[] };
}

interface MetricsLike {
  duration_ms?: number;
  iterations?: number;
  tool_calls?: { total?: number; failed?: number };
  tokens?: { input?: number; output?: number; cached_input?: number; reasoning?: number };
  cost_usd?: number | null;
  provider_retries?: number;
  compactions?: { count?: number };
  model_latency_ms?: { mean?: number; first_token_mean?: number };
}

function skillOf(c: ConfigLike): string {
  const s = c.capabilities?.skill;
  if (!s) return '–';
  return typeof s === 'string' ? s : `${s.name ?? '?'} ${s.version ?? ''}`.trim();
}

const row = (label: string, a: string, b: string): CompareRow => ({ label, a, b, differs: a !== b });
const text = (v: unknown): string => (v === undefined || v === null ? '–' : typeof v === 'string' ? v : JSON.stringify(v));

export function settingsRows(a: { status: RunStatus; config: unknown }, b: { status: RunStatus; config: unknown }): CompareRow[] {
  const ca = (a.config ?? {}) as ConfigLike;
  const cb = (b.config ?? {}) as ConfigLike;
  const rows = [
    row('Agent', `${a.status.plugin}`, `${b.status.plugin}`),
    row('Model', `${a.status.provider}:${a.status.model}`, `${b.status.provider}:${b.status.model}`),
    row('Goal', a.status.goal, b.status.goal),
    row('Reasoning', text(ca.reasoning), text(cb.reasoning)),
    row('Skill', skillOf(ca), skillOf(cb)),
    row('Tools', (ca.declared_tools ?? []).join(', ') || '–', (cb.declared_tools ?? []).join(', ') || '–'),
    row('Model calls recorded', ca.capture ? (ca.capture.model_io ? 'yes' : 'no') : '–', cb.capture ? (cb.capture.model_io ? 'yes' : 'no') : '–'),
  ];
  const limits = [...new Set([...Object.keys(ca.limits ?? {}), ...Object.keys(cb.limits ?? {})])].sort();
  for (const k of limits) rows.push(row(`limits.${k}`, text(ca.limits?.[k]), text(cb.limits?.[k])));
  return rows;
}

export function metricsRows(a: { status: RunStatus; metrics: unknown }, b: { status: RunStatus; metrics: unknown }): CompareRow[] {
  const ma = (a.metrics ?? {}) as MetricsLike;
  const mb = (b.metrics ?? {}) as MetricsLike;
  const n = (v: number | undefined) => (v === undefined ? '–' : v.toLocaleString('en-US'));
  const ms = (v: number | undefined) => (v === undefined ? '–' : formatMs(v));
  const usd = (v: number | null | undefined) => (v === undefined ? '–' : v === null ? 'unknown' : formatUsd(v));
  const pair = (label: string, f: (m: MetricsLike) => string) => row(label, f(ma), f(mb));
  return [
    row('Status', a.status.status, b.status.status),
    row(
      'Diagnosis',
      a.status.diagnosis ? `${a.status.diagnosis.code}: ${a.status.diagnosis.summary}` : '–',
      b.status.diagnosis ? `${b.status.diagnosis.code}: ${b.status.diagnosis.summary}` : '–',
    ),
    pair('Duration', (m) => ms(m.duration_ms)),
    pair('Model turns', (m) => n(m.iterations)),
    pair('Tool calls', (m) => `${n(m.tool_calls?.total)}${m.tool_calls?.failed ? ` (${m.tool_calls.failed} failed)` : ''}`),
    pair('Input tokens', (m) => n(m.tokens?.input)),
    pair('Cached input', (m) => n(m.tokens?.cached_input)),
    pair('Output tokens', (m) => n(m.tokens?.output)),
    pair('Reasoning tokens', (m) => n(m.tokens?.reasoning)),
    pair('Cost', (m) => usd(m.cost_usd)),
    pair('Model latency (mean)', (m) => ms(m.model_latency_ms?.mean)),
    pair('First token (mean)', (m) => ms(m.model_latency_ms?.first_token_mean)),
    pair('Retries', (m) => n(m.provider_retries)),
    pair('Compactions', (m) => n(m.compactions?.count)),
  ];
}

export interface ArtifactDiff {
  path: string;
  state: 'same' | 'differs' | 'only-a' | 'only-b';
  /** lines in order, each kept, added (in b only) or removed (in a only) */
  lines: Array<{ kind: 'same' | 'added' | 'removed'; text: string }>;
  added: number;
  removed: number;
}

/** The artifacts of both runs by path, each with its line difference (a → b). */
export function artifactDiffs(a: Record<string, string>, b: Record<string, string>): ArtifactDiff[] {
  const paths = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
  return paths.map((path) => {
    const x = a[path];
    const y = b[path];
    if (x === undefined || y === undefined) {
      const only = (x ?? y ?? '').split('\n').map((t) => ({ kind: x === undefined ? ('added' as const) : ('removed' as const), text: t }));
      return {
        path,
        state: x === undefined ? 'only-b' : 'only-a',
        lines: only,
        added: x === undefined ? only.length : 0,
        removed: y === undefined ? only.length : 0,
      };
    }
    if (x === y) return { path, state: 'same', lines: [], added: 0, removed: 0 };
    const lines: ArtifactDiff['lines'] = [];
    let added = 0;
    let removed = 0;
    for (const part of diffLines(x, y)) {
      const kind = part.added ? 'added' : part.removed ? 'removed' : 'same';
      const body = part.value.endsWith('\n') ? part.value.slice(0, -1) : part.value;
      for (const t of body.split('\n')) {
        lines.push({ kind, text: t });
        if (kind === 'added') added++;
        if (kind === 'removed') removed++;
      }
    }
    return { path, state: 'differs', lines, added, removed };
  });
}

/** Long stretches of unchanged lines fold to a few around each change. */
export function foldSame(lines: ArtifactDiff['lines'], context = 3): Array<ArtifactDiff['lines'][number] | { kind: 'fold'; count: number }> {
  const keep = new Set<number>();
  lines.forEach((l, i) => {
    if (l.kind === 'same') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep.add(k);
  });
  const out: Array<ArtifactDiff['lines'][number] | { kind: 'fold'; count: number }> = [];
  let folded = 0;
  lines.forEach((l, i) => {
    if (l.kind !== 'same' || keep.has(i)) {
      if (folded) out.push({ kind: 'fold', count: folded });
      folded = 0;
      out.push(l);
    } else folded++;
  });
  if (folded) out.push({ kind: 'fold', count: folded });
  return out;
}
