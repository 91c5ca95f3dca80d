/**
 * Where runs wait for a worker (the RunQueue seam, one of the three a cluster swaps): the in-process queue of one Runtrail, or
 * a shared one (BullMQ on Redis) that workers in other processes claim from. A cancel reaches the
 * worker that runs the run through `signalCancel`.
 */
export interface RunQueueStats {
  queueDepth: number;
  running: number;
}

export type RunHandler = (runId: string, release: () => void) => Promise<'left' | undefined>;

export interface RunQueue {
  /** True when workers in other processes claim the runs (they rebuild each run from its folder). */
  readonly shared: boolean;
  /** Whether one more run may wait; `reserving` counts creates on their way in. */
  hasRoom(reserving: number): boolean | Promise<boolean>;
  enqueue(runId: string): Promise<void>;
  /** Takes a run out before any worker claims it; true when it was still waiting. */
  remove(runId: string): Promise<boolean>;
  /** Starts claiming: `handler` runs one run to its end; its slot is free when it calls `release`
   *  (the run has its terminal state, before anyone waiting on it resumes) or resolves. It resolves
   *  'left' for a run this process left to be resumed: a shared queue hands it to another worker. */
  process(handler: RunHandler): void;
  /** Asks whichever worker runs `runId` to cancel it. */
  signalCancel(runId: string): Promise<void>;
  /** Called with each cancel signal this process's workers should act on. */
  onCancel(listener: (runId: string) => void): void;
  stats(): RunQueueStats;
  /** A shared queue: runs whose worker died (its lock expired), heard by every node. */
  onStalled?(listener: (runId: string) => void): void;
  /** A shared queue: makes sure a worker will claim the run again (its worker is gone): its job is
   *  added back when the queue lost or finished it; one waiting or held is left as it is. */
  reclaim?(runId: string): Promise<void>;
  /** A shared queue: whether it still holds the run (a flushed Redis forgets). */
  has?(runId: string): Promise<boolean>;
  /** A shared queue: closes its connections once the runs it claimed have ended or been interrupted. */
  dispose?(): Promise<void>;
  /** Stops claiming; resolves when the runs this process claimed have ended or `drainMs` passed. */
  close(drainMs?: number): Promise<void>;
}

/** One process, no services: a FIFO under a concurrency limit, and at most `maxQueue` waiting. */
export class LocalRunQueue implements RunQueue {
  readonly shared = false;
  private readonly waiting: string[] = [];
  private readonly running = new Set<string>();
  private handler: RunHandler | null = null;
  private readonly cancelListeners: Array<(runId: string) => void> = [];

  constructor(
    private readonly concurrency: number,
    private readonly maxQueue: number,
  ) {}

  hasRoom(reserving: number): boolean {
    return this.running.size + this.waiting.length + reserving < this.concurrency + this.maxQueue;
  }

  async enqueue(runId: string): Promise<void> {
    this.waiting.push(runId);
    this.pump();
  }

  async remove(runId: string): Promise<boolean> {
    const i = this.waiting.indexOf(runId);
    if (i < 0) return false;
    this.waiting.splice(i, 1);
    return true;
  }

  process(handler: RunHandler): void {
    this.handler = handler;
    this.pump();
  }

  async signalCancel(runId: string): Promise<void> {
    for (const l of this.cancelListeners) l(runId);
  }

  onCancel(listener: (runId: string) => void): void {
    this.cancelListeners.push(listener);
  }

  stats(): RunQueueStats {
    return { queueDepth: this.waiting.length, running: this.running.size };
  }

  async close(): Promise<void> {
    this.handler = null;
  }

  private pump(): void {
    while (this.handler && this.running.size < this.concurrency && this.waiting.length) {
      const runId = this.waiting.shift()!;
      this.running.add(runId);
      const done = () => {
        if (!this.running.delete(runId)) return;
        queueMicrotask(() => this.pump());
      };
      this.handler(runId, done).then(done, done);
    }
  }
}
