/**
 * Edits of one message, no more often than the channel allows: the newest text wins, texts offered
 * between two edits are never sent, an edit refused for now (429) moves the next one to when the
 * service said (plus jitter) and resends the newest text then. At most one edit is in flight.
 */
import type { SendResult } from '../../channels/channel-types.js';
import { backoffDelay } from '../../channels/backoff.js';

export interface EditThrottleOptions {
  /** The least time from one edit to the next. */
  intervalMs: number;
  edit(text: string): Promise<SendResult>;
  /** Told of every edit's result (counters, the log). */
  onResult?(r: SendResult, text: string): void;
  now?: () => number;
  random?: () => number;
}

export class EditThrottle {
  private latest: string | null = null;
  private shown: string;
  private inFlight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private notBefore = 0;
  private failures = 0;
  private closed = false;
  private readonly now: () => number;
  private readonly random: () => number;

  /** `shown`: the text the message has now. */
  constructor(
    private readonly opts: EditThrottleOptions,
    shown: string,
  ) {
    this.shown = shown;
    this.now = opts.now ?? Date.now;
    this.random = opts.random ?? Math.random;
    this.notBefore = this.now() + opts.intervalMs;
  }

  /** The message should show `text`; sent when the interval allows, unless newer text comes first. */
  offer(text: string): void {
    if (this.closed) return;
    this.latest = text;
    this.schedule();
  }

  /** When the next edit may go (the interval, or what a 429 asked). */
  get readyAt(): number {
    return this.notBefore;
  }

  /** No more edits: waits for the one in flight. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight;
  }

  private schedule(): void {
    if (this.closed || this.inFlight || this.timer || this.latest === null) return;
    if (this.latest === this.shown) {
      this.latest = null;
      return;
    }
    const wait = this.notBefore - this.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.schedule();
      }, wait);
      this.timer.unref?.();
      return;
    }
    const text = this.latest;
    this.latest = null;
    this.notBefore = this.now() + this.opts.intervalMs;
    this.inFlight = this.opts
      .edit(text)
      .then((r) => this.settle(r, text))
      .finally(() => {
        this.inFlight = null;
        this.schedule();
      });
  }

  private settle(r: SendResult, text: string): void {
    this.opts.onResult?.(r, text);
    if (r.ok) {
      this.shown = text;
      this.failures = 0;
      // counted from the answer, not the request: the service sees two edits at least an interval apart
      // however long this one took to reach it
      this.notBefore = Math.max(this.notBefore, this.now() + this.opts.intervalMs);
      return;
    }
    const f = r.failure;
    if (f.kind === 'rejected') {
      // the message cannot be edited (deleted, too old): the answer goes out as messages of its own
      this.closed = true;
      return;
    }
    this.failures++;
    const asked = f.kind === 'rate_limited' ? f.retryAfterMs : (f.retryAfterMs ?? backoffDelay(this.failures, { baseMs: 1000, capMs: 30_000 }, this.random));
    this.notBefore = Math.max(this.notBefore, this.now() + Math.round(asked * (1 + 0.2 * this.random())));
    this.latest ??= text;
  }
}
