/**
 * The newest events of a live run, in memory: a client that (re)connects to a live run — most connect
 * within its first events — gets its history from here instead of reading and parsing events.jsonl
 * (a burst of clients was a burst of file reads). Bounded by count and by line size; older history
 * comes from the file.
 */
import type { AgentEvent } from '../events/agent-event.js';

export const RECENT_EVENTS = 1_024;
export const RECENT_CHARS = 256 * 1024;

export class RecentEvents {
  private events: AgentEvent[] = [];
  private sizes: number[] = [];
  /** index of the oldest kept event (the arrays are compacted now and then, not shifted per event) */
  private head = 0;
  private chars = 0;

  constructor(
    private readonly maxEvents = RECENT_EVENTS,
    private readonly maxChars = RECENT_CHARS,
  ) {}

  add(event: AgentEvent, chars: number): void {
    this.events.push(event);
    this.sizes.push(chars);
    this.chars += chars;
    while (this.events.length - this.head > this.maxEvents || (this.chars > this.maxChars && this.events.length - this.head > 1)) {
      this.chars -= this.sizes[this.head];
      this.head++;
    }
    if (this.head > 1_024 && this.head * 2 > this.events.length) {
      this.events = this.events.slice(this.head);
      this.sizes = this.sizes.slice(this.head);
      this.head = 0;
    }
  }

  /** The events after seq `after`, or null when the oldest kept one is later than `after + 1` (read the file). */
  after(after: number): AgentEvent[] | null {
    const n = this.events.length;
    if (n === this.head || this.events[this.head].seq > after + 1) return null;
    let lo = this.head;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.events[mid].seq <= after) lo = mid + 1;
      else hi = mid;
    }
    return this.events.slice(lo);
  }
}
