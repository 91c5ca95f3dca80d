/**
 * The run page's trace view: the same span fold OpenTelemetry gets (run-spans.ts), as bars on one
 * time axis, each with its duration, tokens and the index of the wire step it belongs to (so a click
 * opens that step). Built from the run's events alone, so it works for live, finished and old runs,
 * with or without an exporter. Times are ms from the run's first event.
 */
import type { AgentEvent, ModelTokens } from '../events/agent-event.js';
import { createEngineBridge } from '../events/engine-bridge.js';
import { RunSpanFolder, type RunSpan, type RunSpanKind } from './run-spans.js';

export interface TraceBar {
  id: string;
  parent_id: string | null;
  kind: RunSpanKind;
  /** the OpenTelemetry span name */
  name: string;
  label: string;
  start_ms: number;
  /** null while it runs */
  end_ms: number | null;
  duration_ms: number | null;
  status: RunSpan['status'];
  error: string | null;
  tokens: ModelTokens | null;
  cost_usd: number | null;
  /** the wire step (`index`) of a tool call; null for model calls and compactions */
  step_index: number | null;
  /** model calls: which loop turn and which try of it */
  turn?: number;
  attempt?: number;
  /** model calls: ms to the first streamed token */
  first_token_ms?: number | null;
  finish_reason?: string;
}

/** A person's message to the run (steer or follow-up), where it landed on the time axis. */
export interface TraceMessage {
  id: string;
  mode: 'steer' | 'follow_up';
  text: string;
  /** web, api, im, cli */
  from: string;
  at_ms: number;
  /** when the model got it (the next turn, or after the answer); null while it waits */
  delivered_ms: number | null;
}

export interface RunTraceView {
  run_id: string;
  trace_id: string;
  /** epoch ms of the run's first event: bar times count from here */
  t0: number;
  /** ms from t0 to the last event (the run's length once it ended) */
  last_ms: number;
  ended: boolean;
  /** the run's own bar first, then its children by start */
  bars: TraceBar[];
  /** messages people sent the live run, in order */
  messages: TraceMessage[];
}

export function runTraceView(events: Iterable<AgentEvent>, run: { runId: string; traceId: string }): RunTraceView {
  const spans: RunSpan[] = [];
  const folder = new RunSpanFolder({ open: (s) => void spans.push(s), close: () => undefined }, { runId: run.runId });
  const bridge = createEngineBridge({ traceId: run.traceId });
  const stepOf = new Map<string, number>();
  const messages: TraceMessage[] = [];
  let t0: number | null = null;
  let last = 0;
  for (const ev of events) {
    t0 ??= ev.ts;
    last = ev.ts;
    const wire = bridge.translate(ev);
    if (ev.stream === 'tool' && wire?.index !== null && wire?.index !== undefined) stepOf.set(ev.data.toolCallId, wire.index);
    folder.push(ev);
    if (ev.stream === 'run' && ev.data.type === 'message.received') {
      const d = ev.data;
      messages.push({ id: d.id, mode: d.mode, text: d.text, from: d.from, at_ms: ev.ts, delivered_ms: null });
    } else if (ev.stream === 'run' && ev.data.type === 'message.delivered') {
      for (const m of messages) if (ev.data.ids.includes(m.id)) m.delivered_ms = ev.ts;
    }
  }
  const base = t0 ?? 0;
  const rel = (ms: number) => Math.max(0, ms - base);
  const bars = spans.map((s): TraceBar => {
    const a = s.attributes;
    return {
      id: s.id,
      parent_id: s.parentId,
      kind: s.kind,
      name: s.name,
      label: s.label,
      start_ms: rel(s.startMs),
      end_ms: s.endMs === null ? null : rel(s.endMs),
      duration_ms: s.endMs === null ? null : s.endMs - s.startMs,
      status: s.status,
      error: s.error,
      tokens: s.tokens ?? null,
      cost_usd: s.costUsd ?? null,
      step_index: s.toolCallId !== undefined ? (stepOf.get(s.toolCallId) ?? null) : null,
      ...(s.kind === 'model'
        ? {
            turn: Number(a['runtrail.turn']),
            attempt: Number(a['runtrail.attempt']),
            first_token_ms: typeof a['runtrail.first_token_ms'] === 'number' ? a['runtrail.first_token_ms'] : null,
            ...(Array.isArray(a['gen_ai.response.finish_reasons']) ? { finish_reason: a['gen_ai.response.finish_reasons'][0] } : {}),
          }
        : {}),
    };
  });
  bars.sort((x, y) => (x.kind === 'run' ? -1 : y.kind === 'run' ? 1 : x.start_ms - y.start_ms));
  const root = spans.find((s) => s.kind === 'run');
  const at = messages.map((m) => ({ ...m, at_ms: rel(m.at_ms), delivered_ms: m.delivered_ms === null ? null : rel(m.delivered_ms) }));
  return { run_id: run.runId, trace_id: run.traceId, t0: base, last_ms: rel(last), ended: root ? root.endMs !== null : false, bars, messages: at };
}
