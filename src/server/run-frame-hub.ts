/**
 * One run's frames, made once for all the clients that watch it. Each SSE client used to read the
 * run's events itself (its events.jsonl, then the bus), translate every event through its own bridge
 * and format every frame: five clients of a run did that work five times. A hub pumps `runFrames`
 * once and keeps the frames it made; each client walks the same list from the start (its `after`
 * skips what it already has), then waits for the next frame. The frames are those a client alone
 * would get, byte for byte: the same bridge over the same events from seq 1.
 *
 * A hub lives while clients watch its run: the last one leaving stops it (a client that comes in the
 * same turn of the event loop keeps it; a later one starts a new hub, which reads the history again);
 * at the run's end it finishes and is let go. Past
 * MAX_HUB_FRAMES it lets go of the frames every client has passed and takes no new clients (they
 * read on their own, as before), so a long run watched for hours does not keep its whole stream.
 */
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { runFrames, type RunFrame } from './run-frames.js';

/** Frames a hub keeps before it lets go of those all its clients have passed (a delta frame is ~100 bytes). */
export const MAX_HUB_FRAMES = 20_000;

interface Cursor {
  /** index of the client's next frame in the whole stream */
  at: number;
}

class Hub {
  private frames: RunFrame[] = [];
  /** index in the whole stream of frames[0]; above 0 once frames were let go */
  private base = 0;
  private readonly cursors = new Set<Cursor>();
  ended = false;
  /** the pump's failure, thrown to each client that reaches it */
  private error: unknown = null;
  private readonly abort = new AbortController();
  /** set while the last client has left and the pump is about to be stopped */
  private stopping: NodeJS.Immediate | null = null;
  /** one promise per frame, shared by every waiting client */
  private tick: Promise<void> | null = null;
  private resolveTick: (() => void) | null = null;

  constructor(
    service: RunServiceApi,
    runId: string,
    private readonly maxFrames: number,
    private readonly onDone: () => void,
  ) {
    void this.pump(service, runId);
  }

  /** Whether a client that needs the stream from its start can still join. */
  get hasWholeStream(): boolean {
    return this.base === 0;
  }

  private async pump(service: RunServiceApi, runId: string): Promise<void> {
    try {
      for await (const frame of runFrames(service, runId, { signal: this.abort.signal })) {
        this.frames.push(frame);
        if (this.frames.length > this.maxFrames) this.letGo();
        this.wake();
      }
    } catch (e) {
      this.error = e;
    } finally {
      this.ended = true;
      this.onDone();
      this.wake();
    }
  }

  /** Drops the frames every client has passed, once they are at least half of what is kept. */
  private letGo(): void {
    let slowest = this.base + this.frames.length;
    for (const c of this.cursors) slowest = Math.min(slowest, c.at);
    const passed = slowest - this.base;
    if (passed * 2 < this.frames.length) return;
    this.frames.splice(0, passed);
    this.base += passed;
  }

  join(): Cursor {
    if (this.stopping) clearImmediate(this.stopping);
    this.stopping = null;
    const c = { at: this.base };
    this.cursors.add(c);
    return c;
  }

  leave(c: Cursor): void {
    this.cursors.delete(c);
    if (this.cursors.size > 0 || this.ended || this.stopping) return;
    // nobody watches: stop reading the run, unless a client joins within this turn of the event loop
    // (a WebSocket resuming from another seq, an SSE client reconnecting) and takes the frames as they are
    this.stopping = setImmediate(() => {
      this.stopping = null;
      if (this.cursors.size > 0 || this.ended) return;
      this.abort.abort();
      this.onDone();
    });
  }

  /** The client's next frame, or null when it has them all for now. */
  take(c: Cursor): RunFrame | null {
    const i = c.at - this.base;
    if (i >= this.frames.length) return null;
    c.at++;
    return this.frames[i];
  }

  /** Throws the pump's failure, once the client has every frame made before it. */
  throwIfFailed(): void {
    if (this.error) throw this.error;
  }

  /** Resolves at the next frame, the end, or a wake(). */
  next(): Promise<void> {
    this.tick ??= new Promise((r) => (this.resolveTick = r));
    return this.tick;
  }

  wake(): void {
    const r = this.resolveTick;
    this.tick = null;
    this.resolveTick = null;
    r?.();
  }
}

export class RunFrameHubs {
  private readonly hubs = new Map<string, Hub>();

  constructor(
    private readonly service: RunServiceApi,
    private readonly maxFrames = MAX_HUB_FRAMES,
  ) {}

  /** The run's frames after `after`, as `runFrames` gives them, made once for all its clients. */
  async *frames(runId: string, opts: { after?: number; signal?: AbortSignal } = {}): AsyncGenerator<RunFrame> {
    const after = opts.after ?? 0;
    const { signal } = opts;
    let hub = this.hubs.get(runId);
    if (hub && !hub.hasWholeStream) {
      yield* runFrames(this.service, runId, opts);
      return;
    }
    if (!hub) {
      const created: Hub = new Hub(this.service, runId, this.maxFrames, () => {
        if (this.hubs.get(runId) === created) this.hubs.delete(runId);
      });
      this.hubs.set(runId, created);
      hub = created;
    }
    const h = hub;
    const cursor = h.join();
    let stopped = signal?.aborted ?? false;
    const stop = (): void => {
      stopped = true;
      h.wake();
    };
    signal?.addEventListener('abort', stop, { once: true });
    try {
      for (;;) {
        for (let f = h.take(cursor); f; f = h.take(cursor)) {
          if (stopped) return;
          if (f.seq > after) yield f;
        }
        if (stopped) return;
        if (h.ended) {
          h.throwIfFailed();
          return;
        }
        await h.next();
      }
    } finally {
      signal?.removeEventListener('abort', stop);
      h.leave(cursor);
    }
  }

  /** Runs watched through a hub now. */
  get size(): number {
    return this.hubs.size;
  }
}
