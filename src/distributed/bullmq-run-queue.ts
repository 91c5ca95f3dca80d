/**
 * The RunQueue of several nodes: BullMQ on Redis. API nodes add a job per run (job id =
 * run id); workers claim them under their concurrency. A cancel is a Redis pub/sub message the worker
 * that owns the run acts on. A worker that dies (kill -9, a lost machine) stops renewing its locks:
 * BullMQ's stalled check (in the other workers) puts its jobs back in the queue, and the worker that
 * claims one takes the run up (resumed from its checkpoint, or ended under the durability rules).
 */
import { Queue, QueueEvents, WaitingError, Worker, type ConnectionOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { RunHandler, RunQueue, RunQueueStats } from '../runtime/service/run-queue.js';
import { ServiceUnavailableError } from './service-url.js';

/** How often a run's job may come back after its worker stopped before BullMQ fails it. */
const STALLED_JOB_LIMIT = 100;

export interface BullRunQueueOptions {
  /** The Queue's connection: fails fast while Redis is away (an API request is answered 503, not held). */
  connection: ConnectionOptions;
  /** The Worker's and QueueEvents' connection options: they wait for Redis and reconnect (no retry limit). */
  blockingConnection: ConnectionOptions;
  /** RUNTRAIL_REDIS_URL without its password, for the errors of a lost Redis. */
  shownUrl: string;
  /** Key prefix of the queue and the cancel channel (tests isolate with it). */
  prefix: string;
  /** Publishes cancel signals. */
  pub: Redis;
  /** Subscribes to cancel signals (a connection in subscriber mode). */
  sub: Redis;
  /** Claims runs when true (the worker role); an API node only adds and cancels. */
  work: boolean;
  concurrency: number;
  /** Runs allowed to wait; past it create() answers queue_full. */
  maxQueue: number;
  /** BullMQ's stalled check interval (ms); default 30 s, so a dead worker's runs are found within 60 s. */
  stalledIntervalMs?: number;
  /** How long a worker's lock on a job lasts without renewal (ms); default 30 s. */
  lockDurationMs?: number;
  /** Told of the runs this worker holds whenever that changes (its presence file lists them). */
  onRunning?: (runIds: string[]) => void;
}

export class BullRunQueue implements RunQueue {
  readonly shared = true;
  private readonly queue: Queue;
  private worker: Worker | null = null;
  private events: QueueEvents | null = null;
  private readonly cancelListeners: Array<(runId: string) => void> = [];
  private readonly stalledListeners: Array<(runId: string) => void> = [];
  private readonly running = new Set<string>();
  private counts = { waiting: 0, active: 0 };
  private countTimer: NodeJS.Timeout | undefined;
  private readonly channel: string;

  constructor(private readonly o: BullRunQueueOptions) {
    this.queue = new Queue('runs', { connection: o.connection, prefix: o.prefix });
    this.queue.on('error', () => undefined); // Redis away: calls report it; the queue reconnects
    this.channel = `${o.prefix}:cancel`;
    o.sub.on('message', (channel: string, runId: string) => {
      if (channel === this.channel) for (const l of this.cancelListeners) l(runId);
    });
    void o.sub.subscribe(this.channel).catch(() => undefined);
    this.countTimer = setInterval(() => void this.refreshCounts(), 2_000);
    this.countTimer.unref();
  }

  private async refreshCounts(): Promise<void> {
    try {
      const c = await this.queue.getJobCounts('waiting', 'active', 'prioritized', 'delayed');
      this.counts = { waiting: (c.waiting ?? 0) + (c.prioritized ?? 0) + (c.delayed ?? 0), active: c.active ?? 0 };
    } catch {
      // keep the last counts while Redis is away
    }
  }

  /** Every node hears of runs whose worker stopped renewing its lock (failed by the stalled check). */
  onStalled(listener: (runId: string) => void): void {
    this.stalledListeners.push(listener);
    if (this.events) return;
    this.events = new QueueEvents('runs', { connection: this.o.blockingConnection, prefix: this.o.prefix });
    this.events.on('error', () => undefined);
    this.events.on('failed', ({ jobId, failedReason }) => {
      if (/stalled/i.test(failedReason)) for (const l of this.stalledListeners) l(jobId);
    });
  }

  /** Redis is away: the API's 503 (the queue's connection fails fast instead of holding requests). */
  private async redis<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (e) {
      throw new ServiceUnavailableError('Redis', this.o.shownUrl, (e as Error).message);
    }
  }

  async hasRoom(reserving: number): Promise<boolean> {
    const waiting = await this.redis(() => this.queue.getWaitingCount());
    return waiting + reserving < this.o.maxQueue;
  }

  async enqueue(runId: string): Promise<void> {
    await this.redis(() => this.queue.add('run', { runId }, { jobId: runId, removeOnComplete: true, removeOnFail: { age: 86_400 } }));
  }

  /** Whether BullMQ still knows the run (a flushed or restarted Redis forgets queued jobs). */
  async has(runId: string): Promise<boolean> {
    return (await this.redis(() => this.queue.getJob(runId))) !== undefined;
  }

  async reclaim(runId: string): Promise<void> {
    const job = await this.redis(() => this.queue.getJob(runId));
    const state = job ? await job.getState() : 'unknown';
    if (state === 'waiting' || state === 'delayed' || state === 'prioritized' || state === 'active' || state === 'waiting-children') return;
    // lost (Redis flushed) or finished without ending the run: a job of the same id again
    if (job) await job.remove().catch(() => undefined);
    await this.enqueue(runId);
  }

  async remove(runId: string): Promise<boolean> {
    const job = await this.redis(() => this.queue.getJob(runId));
    if (!job) return false;
    const state = await job.getState();
    if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized') return false;
    try {
      await job.remove();
      return true;
    } catch {
      return false; // a worker took it meanwhile: it gets the cancel signal instead
    }
  }

  process(handler: RunHandler): void {
    if (!this.o.work || this.worker) return;
    this.worker = new Worker(
      'runs',
      async (job, token) => {
        const runId = String((job.data as { runId?: unknown }).runId ?? job.id);
        this.running.add(runId);
        this.o.onRunning?.([...this.running]);
        try {
          const left = await handler(runId, () => undefined);
          if (left === 'left') {
            // this worker stopped and left the run to be resumed: its job goes back to the queue at
            // once, for another worker to claim (a completed job would be gone, and the run with it)
            await job.moveToWait(token);
            throw new WaitingError();
          }
        } finally {
          this.running.delete(runId);
          this.o.onRunning?.([...this.running]);
        }
      },
      {
        connection: this.o.blockingConnection,
        prefix: this.o.prefix,
        concurrency: this.o.concurrency,
        // a stalled run's job goes back to the queue: the worker that claims it resumes the run from its
        // checkpoint or ends it, and the run's own resume count (durability.max_resumes) stops a run that
        // kills its worker every time; this bound only backs that up (past it the job fails, and every
        // node hears of it: the run is interrupted)
        maxStalledCount: STALLED_JOB_LIMIT,
        stalledInterval: this.o.stalledIntervalMs ?? 30_000,
        lockDuration: this.o.lockDurationMs ?? 30_000,
      },
    );
    this.worker.on('error', () => undefined);
  }

  async signalCancel(runId: string): Promise<void> {
    await this.redis(() => this.o.pub.publish(this.channel, runId));
  }

  onCancel(listener: (runId: string) => void): void {
    this.cancelListeners.push(listener);
  }

  stats(): RunQueueStats {
    return { queueDepth: this.counts.waiting, running: this.worker ? this.running.size : this.counts.active };
  }

  /** Stops claiming and waits for this worker's runs (at most `drainMs`; the caller interrupts the rest). */
  async close(drainMs = 0): Promise<void> {
    clearInterval(this.countTimer);
    if (this.worker) {
      const closing = this.worker.close();
      await Promise.race([closing, new Promise((r) => setTimeout(r, drainMs).unref())]);
    }
  }

  /** After the caller interrupted what was left: everything closes. */
  async dispose(): Promise<void> {
    await this.worker?.close(true).catch(() => undefined);
    await this.events?.close().catch(() => undefined);
    await this.queue.close().catch(() => undefined);
  }

  runningHere(): string[] {
    return [...this.running];
  }
}
