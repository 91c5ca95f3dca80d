/**
 * SSE frames to one HTTP response, the frames of a burst in one write: the first frame of a tick is
 * held, the others of that tick join it, and the text goes out in one `res.write` once the tick's
 * microtasks are done (a run's events reach the route through promise chains, all within one tick).
 * One write and one chunk per burst instead of one per frame; no frame waits past its own tick.
 * Past a client's queue bound, `drain` hands the held text over piece by piece as the client reads,
 * so a client is judged by whether it reads, not by how large a frame it was sent.
 */
import { drained, type DrainEvents } from './response-drained.js';

/** What the writer uses of a response (a ServerResponse; any Writable has the same). */
export interface FrameSink extends DrainEvents {
  write(text: string): boolean;
  readonly writableLength: number;
  readonly writableNeedDrain: boolean;
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
}

/** The size of the pieces `drain` hands over: one must reach the client within a slow-client window. */
export const DRAIN_PIECE_CHARS = 64 * 1024;

export class SseFrameWriter {
  private held = '';
  private scheduled = false;
  /** while `drain` paces the held text, a scheduled flush must not hand it all over at once */
  private pacing = false;
  private readonly flushTask = (): void => {
    if (!this.pacing) this.flush();
  };

  constructor(private readonly res: FrameSink) {}

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
    if (this.open) this.res.write(text);
  }

  /**
   * Hands the held text to the socket a piece at a time as the client takes it: true once all of it
   * is handed over and the socket's buffer is under its mark, false when a whole window of `ms` went
   * by with nothing taken (or the response closed). A long final answer over a slow link is
   * delivered; a reader that stalls is given up on after one window.
   */
  async drain(ms: number): Promise<boolean> {
    this.pacing = true;
    try {
      for (;;) {
        while (this.held && !this.res.writableNeedDrain) {
          if (!this.open) return false;
          const piece = this.held.slice(0, DRAIN_PIECE_CHARS);
          this.held = this.held.slice(DRAIN_PIECE_CHARS);
          this.res.write(piece);
        }
        if (!this.res.writableNeedDrain) return this.open;
        if (!(await drained(this.res, ms))) return false;
      }
    } finally {
      this.pacing = false;
    }
  }

  /** Bytes waiting: held here and in the socket's buffer (the per-client queue bound counts both). */
  get queuedBytes(): number {
    return this.held.length + this.res.writableLength;
  }

  private get open(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }
}
