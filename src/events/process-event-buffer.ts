/**
 * Throttles process events per operation (seed 000): non-terminal updates of one operation go out
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
    if (this.disposed) {
      // pushed while dispose flushes (from inside emit): that operation's pending update goes first
      const left = this.ops.get(event.operationId);
      if (left) {
        this.ops.delete(event.operationId);
        this.release(left);
      }
      this.out(event);
      return;
    }
    const id = event.operationId;
    let st = this.ops.get(id);
    const status = event.status;
    // Hot path: an update already waits for its timer, so the newest simply replaces it.
    if (st && st.pending && status !== 'completed' && status !== 'failed' && status !== 'cancelled' && status !== 'skipped') {
      st.pending = event;
      return;
    }
    if (isTerminalProcessStatus(status)) {
      if (st) {
        this.ops.delete(id);
        if (st.timer) clearTimeout(st.timer);
        if (st.pending) this.out(st.pending);
      }
      this.out(event);
      return;
    }
    const t = this.now();
    if (!st) {
      st = { lastEmit: t, pending: null, timer: null };
      this.ops.set(id, st);
      this.out(event);
      return;
    }
    if (!st.pending && t - st.lastEmit >= this.intervalMs) {
      st.lastEmit = t;
      this.out(event);
      return;
    }
    st.pending = event;
    if (!st.timer) {
      const s = st;
      const wait = Math.max(0, s.lastEmit + this.intervalMs - t);
      s.timer = setTimeout(() => this.release(s), wait);
      s.timer.unref?.();
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
