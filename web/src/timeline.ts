/**
 * The Steps card's timeline: the wire steps, the model turns and people's messages in the order
 * they happened, each with its duration (from the trace view's bars). DOM-free so tests can import it.
 */
import type { StepView } from './run-state.js';
import type { RunTraceView, TraceBar, TraceMessage } from './trace-view.js';

export type TimelineEntry =
  | { kind: 'model'; bar: TraceBar; at: number }
  | { kind: 'step'; step: StepView; bar: TraceBar | null; at: number }
  | { kind: 'message'; message: TraceMessage; at: number };

export function timeline(steps: readonly StepView[], trace: RunTraceView | null): TimelineEntry[] {
  const barOfStep = new Map<number, TraceBar>();
  for (const b of trace?.bars ?? []) if (b.step_index !== null) barOfStep.set(b.step_index, b);
  const out: TimelineEntry[] = [];
  let at = 0;
  for (const step of steps) {
    const bar = barOfStep.get(step.index) ?? null;
    // a step without a bar (stop validation) keeps its place after the step before it
    at = bar ? bar.start_ms : at;
    out.push({ kind: 'step', step, bar, at });
  }
  for (const bar of trace?.bars ?? []) if (bar.kind === 'model') out.push({ kind: 'model', bar, at: bar.start_ms });
  for (const message of trace?.messages ?? []) out.push({ kind: 'message', message, at: message.at_ms });
  const rank = { message: 0, model: 1, step: 2 };
  return out.sort((a, b) => a.at - b.at || rank[a.kind] - rank[b.kind]);
}

/** How long an entry took, or has taken so far (`nowMs`: ms since the run's first event). */
export function durationOf(bar: TraceBar | null, nowMs: number): { ms: number; running: boolean } | null {
  if (!bar) return null;
  if (bar.end_ms === null) return { ms: Math.max(0, nowMs - bar.start_ms), running: true };
  return { ms: bar.duration_ms ?? bar.end_ms - bar.start_ms, running: false };
}
