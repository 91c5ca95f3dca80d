/**
 * Shutdown: how a run service stops. close() cancels the queued and live runs and waits until each has
 * written its files; drain() (a worker's SIGTERM) stops claiming, lets its runs finish for a while, then
 * interrupts the rest. Either way the queue, the fanout and the store are closed last, and from the
 * first moment the service takes no run in (`closed`, which intake and recovery read).
 */
import type { EventFanout } from './event-fanout.js';
import type { LiveRuns } from './live-runs.js';
import type { RunAccess } from './run-access.js';
import { RunInterrupted } from './run-engine.js';
import type { RunQueue } from './run-queue.js';
import type { RunStore } from './run-store.js';
import { holdSignalForwarding } from '../tools/signal-bridge.js';

export interface RunShutdownOptions {
  live: LiveRuns;
  access: RunAccess;
  queue: RunQueue;
  fanout: EventFanout;
  store: RunStore;
  /** A worker that drains on SIGTERM: the signal is not forwarded to its runs' commands until it closes. */
  drainsOnSignal: boolean;
}

export class RunShutdown {
  private stopped = false;
  private releaseSignals: (() => void) | null = null;

  constructor(private readonly o: RunShutdownOptions) {
    if (o.drainsOnSignal) this.releaseSignals = holdSignalForwarding();
  }

  /** Whether close() or drain() was called: no run is taken in any more. */
  get closed(): boolean {
    return this.stopped;
  }

  /** Cancels queued and live runs (`because`: the reason their status gives) and waits until each has written its files. */
  async close(because?: string): Promise<void> {
    this.stopped = true;
    const recs = this.o.live.all();
    await Promise.all(recs.map((r) => this.o.access.cancel(r.runId, because).catch(() => r.done)));
    this.releaseSignals?.();
    await this.o.queue.close();
    await this.o.queue.dispose?.();
    await this.o.fanout.close?.();
    await this.o.store.close?.();
  }

  /**
   * A worker's SIGTERM: it stops claiming, lets its runs finish for `drainMs`, then interrupts the
   * rest (failed as interrupted, files written), and closes.
   */
  async drain(drainMs: number): Promise<void> {
    this.stopped = true;
    await this.o.queue.close(drainMs);
    const left = this.o.live.all();
    for (const r of left) r.abort.abort(new RunInterrupted(`the worker was stopped and its ${Math.round(drainMs / 1000)} s to drain ran out`));
    await Promise.all(left.map((r) => r.done));
    this.releaseSignals?.();
    await this.o.queue.dispose?.();
    await this.o.fanout.close?.();
    await this.o.store.close?.();
  }
}
