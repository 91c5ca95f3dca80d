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
  // the trace's bars are in the order their events happened (by start time, ties in event order):
  // a bar's place in that list orders entries that share a millisecond — a turn's last tool calls and
  // the next model call often do
  const bars = trace?.bars ?? [];
  const barOfStep = new Map<number, { bar: TraceBar; pos: number }>();
  bars.forEach((bar, pos) => {
    if (bar.step_index !== null) barOfStep.set(bar.step_index, { bar, pos });
  });
  const out: Array<{ entry: TimelineEntry; pos: number }> = [];
  let at = 0;
  let pos = -1;
  for (const step of steps) {
    const own = barOfStep.get(step.index);
    // a step without a bar (stop validation) keeps its place after the step before it, and after
    // whatever else started in that millisecond
    at = own ? own.bar.start_ms : at;
    pos = own ? own.pos : Math.max(pos, lastBarBy(bars, at)) + 1 / (steps.length + 1);
    out.push({ entry: { kind: 'step', step, bar: own?.bar ?? null, at }, pos });
  }
  bars.forEach((bar, i) => {
    if (bar.kind === 'model') out.push({ entry: { kind: 'model', bar, at: bar.start_ms }, pos: i });
  });
  // a person's message comes before what started in the same millisecond
  for (const message of trace?.messages ?? []) out.push({ entry: { kind: 'message', message, at: message.at_ms }, pos: -Infinity });
  return out.sort((a, b) => a.entry.at - b.entry.at || a.pos - b.pos).map((x) => x.entry);
}

/** The place of the last bar that started by `ms` (bars are in start order). */
function lastBarBy(bars: readonly TraceBar[], ms: number): number {
  let i = bars.length - 1;
  while (i >= 0 && bars[i].start_ms > ms) i--;
  return i;
}

/** How long an entry took, or has taken so far (`nowMs`: ms since the run's first event). */
export function durationOf(bar: TraceBar | null, nowMs: number): { ms: number; running: boolean } | null {
  if (!bar) return null;
  if (bar.end_ms === null) return { ms: Math.max(0, nowMs - bar.start_ms), running: true };
  return { ms: bar.duration_ms ?? bar.end_ms - bar.start_ms, running: false };
}
