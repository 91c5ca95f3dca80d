/**
 * SSE frames to one HTTP response, the frames of a burst in one write: the first frame of a tick is
 * held, the others of that tick join it, and the text goes out in one `res.write` once the tick's
 * microtasks are done (a run's events reach the route through promise chains, all within one tick).
 * One write and one chunk per burst instead of one per frame; no frame waits past its own tick.
 */
import type { ServerResponse } from 'node:http';

export class SseFrameWriter {
  private held = '';
  private scheduled = false;
  private readonly flushTask = (): void => this.flush();

  constructor(private readonly res: ServerResponse) {}

  write(text: string): void {
    this.held += text;
    if (this.scheduled) return;
    this.scheduled = true;
    // nextTick queued from a microtask runs once the microtask queue is empty: after the whole burst
    process.nextTick(this.flushTask);
  }

  /** Writes what is held now (before a frame that must go out at once, or the end). */
  flush(): void {
    this.scheduled = false;
    if (!this.held) return;
    const text = this.held;
    this.held = '';
    if (!this.res.writableEnded && !this.res.destroyed) this.res.write(text);
  }

  /** Bytes waiting: held here and in the socket's buffer (the per-client queue bound counts both). */
  get queuedBytes(): number {
    return this.held.length + this.res.writableLength;
  }
}
