/** An unbounded async queue of strings that ends at close(): what SseAdapter#frames() reads. */
export class FrameQueue implements AsyncIterable<string> {
  private items: string[] = [];
  private head = 0;
  /** next() calls waiting for a frame, oldest first (the iterator protocol allows several at once) */
  private waiters: Array<(r: IteratorResult<string>) => void> = [];
  private closed = false;

  get size(): number {
    return this.items.length - this.head;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  push(item: string): void {
    if (this.closed) return;
    const w = this.waiters.shift();
    if (w) {
      w({ value: item, done: false });
      return;
    }
    this.items.push(item);
  }

  /** Idempotent; items already queued are still delivered. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w({ value: undefined, done: true });
  }

  /** Everything queued right now, removed from the queue (for batched writes). */
  drain(): string[] {
    const out = this.head === 0 ? this.items : this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return out;
  }

  next(): Promise<IteratorResult<string>> {
    if (this.head < this.items.length) {
      const value = this.items[this.head++];
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiters.push(resolve);
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<string> {
    return { next: () => this.next() };
  }
}
