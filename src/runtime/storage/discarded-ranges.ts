/**
 * The partial answers a run's resumes discarded: each `resumed` lifecycle event names the first
 * assistant or reasoning delta of the turn its dead process was streaming (`discardFromSeq`); from
 * there up to the `resumed` event itself, those deltas belong to a turn that was redone. A stream that
 * cannot take back what it sent (the AI SDK's UI message stream) leaves them out instead.
 */
import type { AgentEvent } from '../../events/agent-event.js';

export interface SeqRange {
  /** first seq of the range */
  from: number;
  /** first seq after it (the `resumed` event) */
  to: number;
}

export function discardedRanges(events: Iterable<AgentEvent>): SeqRange[] {
  const out: SeqRange[] = [];
  for (const e of events) {
    if (e.stream === 'lifecycle' && e.data.phase === 'resumed' && e.data.discardFromSeq !== null) out.push({ from: e.data.discardFromSeq, to: e.seq });
  }
  return out;
}

/** Whether `seq` falls in one of `ranges`. */
export function inRanges(ranges: readonly SeqRange[], seq: number): boolean {
  for (const r of ranges) if (seq >= r.from && seq < r.to) return true;
  return false;
}
