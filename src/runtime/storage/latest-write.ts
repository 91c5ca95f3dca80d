/**
 * Writes of one file whose newest content is all that matters (run_status.json, todo_state.json): in
 * order, so an older snapshot never lands after a newer one, and snapshots that arrive while a
 * write is in flight are folded into the one write after it. A run's turn changes state twice; one
 * file write per change would be most of a fast turn's time.
 */
export class LatestWrite<T> {
  private tail: Promise<void> = Promise.resolve();
  private queued: Promise<void> | null = null;
  private next: T | undefined;

  constructor(private readonly save: (value: T) => Promise<void>) {}

  /** Resolves once a write of `value` or of a newer one is done; rejects when that write failed. */
  write(value: T): Promise<void> {
    this.next = value;
    if (this.queued) return this.queued;
    const queued = this.tail.then(() => {
      this.queued = null;
      const v = this.next as T;
      this.next = undefined;
      return this.save(v);
    });
    this.queued = queued;
    this.tail = queued.catch(() => undefined);
    return queued;
  }
}
