/**
 * Shutdown: how a run service stops. close() cancels the queued and live runs and waits until each has
 * written its files, or (a server that stops: a deploy, Ctrl-C of `serve`) leaves the runs that can be
 * resumed to be resumed at its next start; drain() (a worker's SIGTERM) stops claiming, lets its runs
 * finish for a while, then leaves the rest to another worker (interrupts those that cannot be resumed).
 * Either way the queue, the fanout and the store are closed last, and from the first moment the
 * service takes no run in (`closed`, which intake and recovery read).
 */
import type { EventFanout } from '../storage/event-fanout.js';
import type { LiveRuns } from './live-runs.js';
import type { RunAccess } from './run-access.js';
import { stopRun } from '../errors.js';
import type { RunRecord } from '../run/run-record.js';
import type { RunQueue } from './run-queue.js';
import type { RunStore } from '../storage/run-store.js';
import { holdSignalForwarding } from '../../tools/signal-bridge.js';

export interface RunShutdownOptions {
  live: LiveRuns;
  access: RunAccess;
  queue: RunQueue;
  fanout: EventFanout;
  store: RunStore;
  /** A worker that drains on SIGTERM: the signal is not forwarded to its runs' commands until it closes. */
  drainsOnSignal: boolean;
  /** The operator's `durability.resume`: false, and no run is left to be resumed. */
  resumesRuns: () => boolean;
  /** One line per run left to be resumed. */
  log: (line: string) => void;
}

export class RunShutdown {
  private stopped = false;
  /** the runs left to be resumed rather than ended */
  private readonly leaving = new Set<RunRecord>();
  private releaseSignals: (() => void) | null = null;

  constructor(private readonly o: RunShutdownOptions) {
    if (o.drainsOnSignal) this.releaseSignals = holdSignalForwarding();
  }

  /** Whether close() or drain() was called: no run is taken in any more. */
  get closed(): boolean {
    return this.stopped;
  }

  /** Cancels queued and live runs (`because`: the reason their status gives) and waits until each has written its files;
   *  with `leaveResumable` the runs that can be resumed are left to be instead, after `graceMs` at most
   *  for the tool calls they have in flight to finish (a call that finished is not for the next start to judge). */
  async close(because?: string, o: { leaveResumable?: boolean; graceMs?: number } = {}): Promise<void> {
    this.stopped = true;
    if (o.leaveResumable && o.graceMs) await this.callsFinished(o.graceMs);
    const recs = this.o.live.all();
    const leaving = o.leaveResumable ? this.leave(recs, 'the server was stopped') : [];
    await Promise.all([...leaving, ...recs.filter((r) => !this.leaving.has(r)).map((r) => this.o.access.cancel(r.runId, because).catch(() => r.done))]);
    this.releaseSignals?.();
    await this.o.queue.close();
    await this.o.queue.dispose?.();
    await this.o.fanout.close?.();
    await this.o.store.close?.();
  }

  /**
   * Waits until no live run that would be left has a tool call in flight, or `graceMs` passed. Runs are
   * left together after it (a parent's run_agent call must find its child left too, not ended).
   */
  private async callsFinished(graceMs: number): Promise<void> {
    const calling = (r: RunRecord) => this.leavable(r) && r.machine.state === 'tool_executing';
    const runs = this.o.live.all().filter(calling);
    if (runs.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<void>((r) => {
      timer = setTimeout(r, graceMs);
    });
    const offs: Array<() => void> = [];
    const idle = runs.map(
      (r) =>
        new Promise<void>((resolve) => {
          // the run's state changes are events on its bus: each is a moment to look again
          offs.push(r.bus.subscribe(() => !calling(r) && resolve()));
          r.done.then(
            () => resolve(),
            () => resolve(),
          );
        }),
    );
    await Promise.race([Promise.all(idle), graceOver]);
    clearTimeout(timer);
    for (const off of offs) off();
  }

  /** A live run that can be resumed after this process stops: it writes a checkpoint (its agent did not
   *  say `durability: interrupt`) and the operator resumes runs. */
  private leavable(r: RunRecord): boolean {
    return r.durability.checkpoint && !r.machine.isTerminal && this.o.resumesRuns();
  }

  /**
   * Leaves the runs that can be resumed to be, not ended: one still waiting in this process's queue stays as it is
   * (its next start runs it from its request); a running one has its bus sealed — what it recorded so
   * far is where it goes on from — then stops, its files closed (run-engine.ts, a `left` stop).
   */
  private leave(recs: RunRecord[], why: string): Promise<void>[] {
    const leaving = recs.filter((r) => this.leavable(r));
    // every one sealed and stopped before any reacts to another's stop: a parent's run_agent call that
    // stops must find its child left too, not cancel it (a cancelled child would write its end)
    for (const r of leaving) {
      this.leaving.add(r);
      r.bus.seal();
    }
    for (const r of leaving) stopRun(r.abort, { kind: 'left', why });
    return leaving.map(async (r) => {
      if (!this.o.queue.shared && (await this.o.queue.remove(r.runId))) {
        // it never started: its next start runs it from its request
        r.store.close();
        await r.store.settled?.();
        this.o.live.drop(r.runId);
        r.resolveDone({ ...r.status });
        this.o.log(`run ${r.runId} (${r.status.plugin}) left queued: ${why}; the next start runs it`);
        return;
      }
      await r.done;
      this.o.log(`run ${r.runId} (${r.status.plugin}) left to be resumed while ${r.status.status}, after event ${r.bus.lastSeq}: ${why}`);
    });
  }

  /**
   * A worker's SIGTERM: it stops claiming, lets its runs finish for `drainMs`, then leaves the rest to
   * be resumed by another worker (those that cannot be are interrupted: failed, files written), and closes.
   */
  async drain(drainMs: number): Promise<void> {
    this.stopped = true;
    await this.o.queue.close(drainMs);
    const left = this.o.live.all();
    const why = `the worker was stopped and its ${Math.round(drainMs / 1000)} s to drain ran out`;
    const leaving = this.leave(left, why);
    const rest = left.filter((r) => !this.leaving.has(r));
    for (const r of rest) stopRun(r.abort, { kind: 'interrupted', why });
    await Promise.all([...leaving, ...rest.map((r) => r.done)]);
    this.releaseSignals?.();
    await this.o.queue.dispose?.();
    await this.o.fanout.close?.();
    await this.o.store.close?.();
  }
}
