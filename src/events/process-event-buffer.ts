/**
 * Throttles process events per operation: non-terminal updates of one operation go out
 * at most once per interval (the newest wins); a terminal event first flushes that operation's
 * pending update, then goes out at once. Nothing is lost at flush/dispose.
 */
import { isTerminalProcessStatus, type RuntimeProcessEvent } from './process-event.js';

export interface ProcessEventBufferOptions {
  intervalMs?: number;
  emit: (event: RuntimeProcessEvent) => void;
  now?: () => number;
  /** Told when `emit` throws; the buffer itself never throws into the reporter. */
  onEmitError?: (error: unknown, event: RuntimeProcessEvent) => void;
}

interface OpState {
  lastEmit: number;
  pending: RuntimeProcessEvent | null;
  timer: ReturnType<typeof setTimeout> | null;
}

export class ProcessEventBuffer {
  readonly intervalMs: number;
  private readonly emitFn: (event: RuntimeProcessEvent) => void;
  private readonly now: () => number;
  private readonly onEmitError?: (error: unknown, event: RuntimeProcessEvent) => void;
  private readonly ops = new Map<string, OpState>();
  private disposed = false;
  pushed = 0;
  emitted = 0;
  emitErrors = 0;

  constructor(opts: ProcessEventBufferOptions) {
    if (!opts || typeof opts.emit !== 'function') throw new TypeError('ProcessEventBuffer: emit must be a function');
    const iv = opts.intervalMs ?? 400;
    if (typeof iv !== 'number' || !Number.isFinite(iv) || iv < 0) {
      throw new TypeError(`ProcessEventBuffer: intervalMs must be a non-negative number, got ${String(opts.intervalMs)}`);
    }
    this.intervalMs = iv;
    this.emitFn = opts.emit;
    this.now = opts.now ?? Date.now;
    this.onEmitError = opts.onEmitError;
  }

  /** Operations with an update waiting for its interval. */
  get pendingCount(): number {
    let n = 0;
    for (const s of this.ops.values()) if (s.pending) n++;
    return n;
  }

  push(event: RuntimeProcessEvent): void {
    this.pushed++;
    const st = this.ops.get(event.operationId);
    // Hot path, kept to one lookup and one comparison: an update already waits for its timer, so
    // the newest simply replaces it. Every other case (first event, terminal, interval passed,
    // pushed during dispose, other statuses) takes the slow path.
    if (st !== undefined && st.pending !== null && event.status === 'running' && !this.disposed) {
      st.pending = event;
      return;
    }
    this.pushSlow(event, st);
  }

  private pushSlow(event: RuntimeProcessEvent, known: OpState | undefined): void {
    const id = event.operationId;
    if (this.disposed) {
      // pushed while dispose flushes (from inside emit): that operation's pending update goes first
      if (known) {
        this.ops.delete(id);
        this.release(known);
      }
      this.out(event);
      return;
    }
    if (isTerminalProcessStatus(event.status)) {
      if (known) {
        this.ops.delete(id);
        if (known.timer) clearTimeout(known.timer);
        if (known.pending) this.out(known.pending);
      }
      this.out(event);
      return;
    }
    if (known?.pending) {
      known.pending = event;
      return;
    }
    const t = this.now();
    if (!known) {
      this.ops.set(id, { lastEmit: t, pending: null, timer: null });
      this.out(event);
      return;
    }
    if (t - known.lastEmit >= this.intervalMs) {
      known.lastEmit = t;
      this.out(event);
      return;
    }
    known.pending = event;
    if (!known.timer) {
      const wait = Math.max(0, known.lastEmit + this.intervalMs - t);
      known.timer = setTimeout(() => this.release(known), wait);
      known.timer.unref?.();
    }
  }

  /** Emits every pending update now. */
  flush(): void {
    for (const st of this.ops.values()) this.release(st);
  }

  /** Flushes and stops timers; later pushes go straight through. */
  dispose(): void {
    // disposed first: an event pushed from inside emit during the flush goes straight out instead of
    // waiting in a cleared map for a timer that fires after the run has ended
    this.disposed = true;
    this.flush();
    this.ops.clear();
  }

  private release(st: OpState): void {
    if (st.timer) {
      clearTimeout(st.timer);
      st.timer = null;
    }
    const ev = st.pending;
    if (!ev) return;
    st.pending = null;
    st.lastEmit = this.now();
    this.out(ev);
  }

  private out(ev: RuntimeProcessEvent): void {
    this.emitted++;
    try {
      this.emitFn(ev);
    } catch (err) {
      this.emitErrors++;
      try {
        this.onEmitError?.(err, ev);
      } catch {
        // ignore: reporting must not break progress
      }
    }
  }
}
