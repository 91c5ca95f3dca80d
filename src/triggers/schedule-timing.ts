/**
 * When a schedule fires. `every` counts whole intervals from the schedule's anchor (its creation or
 * last change), so every node computes the same instants; `cron` (five or six fields) and `at` (an ISO
 * time, one shot) are croner's, in the schedule's IANA zone, daylight saving included: a time that
 * does not exist fires at the first one after the gap, a time that happens twice fires once (for a
 * fixed time) or at both (for a pattern with steps, as croner's interval jobs do).
 */
import { Cron } from 'croner';
import { parseDuration } from './duration.js';

export type Timing = { kind: 'every'; ms: number; anchor: number } | { kind: 'cron' | 'at'; cron: Cron };

/** The timing of a checked definition (its `every` parses, its cron and zone were accepted). */
export function timingOf(d: { every?: string; cron?: string; at?: string; tz: string }, anchorMs: number): Timing {
  if (d.every !== undefined) return { kind: 'every', ms: parseDuration(d.every) ?? 1000, anchor: anchorMs };
  if (d.cron !== undefined) return { kind: 'cron', cron: cronOf(d.cron, d.tz) };
  return { kind: 'at', cron: cronOf(d.at ?? '', d.tz) };
}

/** A croner job that never runs a function: only its pattern and zone are used. Throws on a bad pattern. */
export function cronOf(pattern: string, tz: string): Cron {
  return new Cron(pattern.trim(), { timezone: tz, paused: true, mode: '5-or-6-parts' });
}

/** The first fire time strictly after `afterMs`, or null when there is none (an `at` that has passed). */
export function nextFireAfter(t: Timing, afterMs: number): number | null {
  if (t.kind === 'every') {
    const k = Math.floor((afterMs - t.anchor) / t.ms) + 1;
    return t.anchor + Math.max(1, k) * t.ms;
  }
  return t.cron.nextRun(new Date(afterMs))?.getTime() ?? null;
}

/**
 * The fire times in (afterMs, untilMs]: how many, and the last. `every` is counted, a pattern is
 * walked (at most `cap` steps: past that, `count` is a lower bound and `capped` says so).
 */
export function firesBetween(
  t: Timing,
  afterMs: number,
  untilMs: number,
  cap = 10_000,
): { count: number; first: number | null; last: number | null; capped: boolean } {
  const first = nextFireAfter(t, afterMs);
  if (first === null || first > untilMs) return { count: 0, first: null, last: null, capped: false };
  if (t.kind === 'every') {
    const count = Math.floor((untilMs - first) / t.ms) + 1;
    return { count, first, last: first + (count - 1) * t.ms, capped: false };
  }
  let count = 1;
  let last = first;
  for (;;) {
    const n = nextFireAfter(t, last);
    if (n === null || n > untilMs) return { count, first, last, capped: false };
    last = n;
    if (++count >= cap) {
      // the rest are counted no further; the last one due is what a catch-up needs
      const prev = t.cron.previousRuns(1, new Date(untilMs + 1))[0]?.getTime() ?? last;
      return { count, first, last: Math.max(last, prev), capped: true };
    }
  }
}
