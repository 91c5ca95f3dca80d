/**
 * Fires schedules. One timer waits for the earliest next fire time of the enabled schedules; when it
 * comes, each schedule due is handled: its fire time claimed in the store (once across every node),
 * then skipped (it passed while no Runtrail ran and the policy or the window says so; the schedule
 * backs off after failures; the previous run is still live and `overlap: skip`) or started. Every
 * outcome is a fire record. Fire times that passed while no Runtrail was running are "missed": the
 * last of them runs once when `missed: run_once` and it is within the window, else it is skipped.
 */
import type { RunStatus } from '../events/agent-event.js';
import { formatDuration } from './duration.js';
import { nextFireAfter, firesBetween, timingOf } from './schedule-timing.js';
import type { Clock } from './clock.js';
import type { ScheduleStore } from './schedule-store.js';
import type { FireRecord, Schedule } from './types.js';

/** What the scheduler needs of the run service. */
export interface ScheduleRuns {
  /** Starts the schedule's run for a fire time; resolves with its run id, throws when it cannot start. */
  start(s: Schedule, fireTime: string): Promise<string>;
  /** The run's status now; null when there is no such run. */
  status(runId: string): Promise<RunStatus | null>;
  /** Resolves with the run's final status. */
  wait(runId: string): Promise<RunStatus>;
}

export interface SchedulerOptions {
  store: ScheduleStore;
  runs: ScheduleRuns;
  clock: Clock;
  /** `missed: run_once` catches up a fire time at most this old; default 1 h */
  missedWindowMs?: number;
  /** how often the store is asked whether another process changed it; default 2 s */
  refreshMs?: number;
  /** a fire time this close before the start is late, not missed; default 2 s */
  graceMs?: number;
  /** a line for the operator (a skip, a backoff) */
  log?: (line: string) => void;
}

/** After n consecutive failures the schedule waits this long before its next run (the last value repeats). */
export const BACKOFF_MS = [30_000, 60_000, 5 * 60_000, 15 * 60_000, 60 * 60_000];

const LIVE = (s: RunStatus | null): boolean => s !== null && s !== 'completed' && s !== 'failed' && s !== 'cancelled';
const iso = (ms: number) => new Date(ms).toISOString();

export class Scheduler {
  private schedules = new Map<string, Schedule>();
  private cancelTimer: (() => void) | null = null;
  private refresher: NodeJS.Timeout | null = null;
  private stamp = '';
  private startedAt = 0;
  private stopped = true;
  private readonly inflight = new Set<Promise<unknown>>();
  /** per schedule: the start of its latest run (queued fires wait for it) */
  private readonly lastStart = new Map<string, Promise<string | null>>();
  /** runs whose end this node is waiting for, so it records it once */
  private readonly watching = new Set<string>();

  constructor(private readonly o: SchedulerOptions) {}

  async start(): Promise<void> {
    this.stopped = false;
    this.startedAt = this.o.clock.now();
    await this.reload();
    // runs started before this process: their end still counts for the backoff
    for (const s of this.schedules.values()) for (const f of s.fires) if (f.run_id && !f.run_status && f.outcome === 'started') this.watch(s.schedule_id, f);
    this.refresher = setInterval(
      () => void this.refreshIfChanged().catch((e: unknown) => this.o.log?.(`schedules: cannot read the store: ${(e as Error).message}`)),
      this.o.refreshMs ?? 2_000,
    );
    this.refresher.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.cancelTimer?.();
    this.cancelTimer = null;
    if (this.refresher) clearInterval(this.refresher);
    await this.idle();
  }

  /** Resolves when every fire under way has been handled (its run started or its skip recorded). */
  async idle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  /** Re-reads the store and waits for the next fire time. */
  async reload(): Promise<void> {
    this.stamp = await this.o.store.stamp();
    const list = await this.o.store.list();
    const next = new Map(list.map((s) => [s.schedule_id, s]));
    // a claim this node made may not be in what it read yet: never go back before it
    for (const [id, s] of next) {
      const had = this.schedules.get(id);
      if (had && had.version === s.version && had.due_after > s.due_after) s.due_after = had.due_after;
    }
    this.schedules = next;
    this.arm();
  }

  private async refreshIfChanged(): Promise<void> {
    if (this.stopped) return;
    if ((await this.o.store.stamp()) !== this.stamp) await this.reload();
  }

  /** The next fire time of a schedule (ms), or null when paused or none is left. */
  nextRunAt(s: Schedule): number | null {
    if (!s.enabled) return null;
    return nextFireAfter(timingOf(s, Date.parse(s.due_after)), Date.parse(s.due_after));
  }

  private arm(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
    if (this.stopped) return;
    let earliest = Infinity;
    for (const s of this.schedules.values()) {
      const n = this.nextRunAt(s);
      if (n !== null && n < earliest) earliest = n;
    }
    if (earliest === Infinity) return;
    const wait = earliest - this.o.clock.now();
    // due now (a start after fire times passed, a change): handled at once; each handling moves its
    // schedule's due time past now before its first await, so this does not come back here
    if (wait <= 0) return this.tick();
    // a long wait is re-armed every minute: the clock may be changed, and the store re-read meanwhile
    this.cancelTimer = this.o.clock.setTimeout(() => this.tick(), Math.min(wait, 60_000));
  }

  private tick(): void {
    this.cancelTimer = null;
    if (this.stopped) return;
    const now = this.o.clock.now();
    for (const s of this.schedules.values()) {
      const n = this.nextRunAt(s);
      if (n === null || n > now) continue;
      this.track(this.handleDue(s, now));
    }
    this.arm();
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch((e: unknown) => this.o.log?.(`schedules: ${(e as Error).message}`)).finally(() => this.inflight.delete(t));
    this.inflight.add(t);
  }

  /** The fire times of `s` due by `now`: the last is handled; earlier ones (a late timer) fold into it. */
  private async handleDue(s: Schedule, now: number): Promise<void> {
    const due = firesBetween(timingOf(s, Date.parse(s.due_after)), Date.parse(s.due_after), now);
    if (due.last === null) return;
    const fireTime = iso(due.last);
    const version = s.version;
    // before any await: the next tick computes from here
    s.due_after = fireTime;
    const claimed = await this.o.store.claim(s.schedule_id, fireTime, version, false, iso(this.o.clock.now()));
    if (!claimed) return;
    // what other nodes did since this one last read (their runs, failures) decides overlap and backoff;
    // taken from the claim, not read again: 100 re-reads of the file when 100 schedules fired together
    // put their runs at 175 / 255 ms late (p50 / p99, `npm run bench -- triggers`), 83 / 110 ms without
    Object.assign(s, { fires: claimed.fires, failures: claimed.failures, backoff_until: claimed.backoff_until });
    const record: FireRecord = { fire_time: fireTime, at: iso(this.o.clock.now()), outcome: 'waiting' };
    const missed = due.last <= this.startedAt - (this.o.graceMs ?? 2_000);
    const earlier = due.count - 1;
    const more = due.capped ? 'more than ' : '';
    if (missed) {
      const window = this.o.missedWindowMs ?? 3_600_000;
      const passed = `${more}${due.count} fire time(s) passed while no Runtrail was running (the last ${fireTime})`;
      if (s.missed === 'skip' || now - due.last > window) {
        const why = s.missed === 'skip' ? 'missed: skip' : `older than the ${formatDuration(window)} window of missed: run_once`;
        return this.skip(s, { ...record, reason: 'missed', detail: `${passed}; skipped (${why})` });
      }
      record.detail = `${passed}; run once`;
    } else if (earlier > 0) {
      record.detail = `${more}${earlier} earlier fire time(s) came while this node was busy; run once for the last`;
    }
    await this.fire(s, record);
  }

  /** Backoff, overlap, then the run. */
  private async fire(s: Schedule, record: FireRecord): Promise<void> {
    if (s.backoff_until && record.fire_time < s.backoff_until) {
      return this.skip(s, { ...record, reason: 'backoff', detail: `${s.failures} consecutive failed run(s): the schedule waits until ${s.backoff_until}` });
    }
    const prev = await this.liveRun(s);
    if (prev && s.overlap === 'skip') {
      return this.skip(s, { ...record, reason: 'overlap', detail: `run ${prev.runId} (fire time ${prev.fireTime}) is still ${prev.status}` });
    }
    if (prev) {
      await this.o.store.record(s.schedule_id, {
        ...record,
        detail: [record.detail, `waits for run ${prev.runId} to end (overlap: queue)`].filter(Boolean).join('; '),
      });
    }
    const before = this.lastStart.get(s.schedule_id) ?? Promise.resolve(prev?.runId ?? null);
    const started = (async () => {
      const p = await before.catch(() => null);
      if (p) await this.o.runs.wait(p).catch(() => undefined);
      return this.startRun(s, record);
    })();
    this.lastStart.set(s.schedule_id, started);
    // a queued fire waits for its turn apart: it holds up neither the timer nor idle() and stop()
    if (!prev) await started;
    else started.catch((e: unknown) => this.o.log?.(`schedules: ${(e as Error).message}`));
  }

  /** The schedule's newest run that has not ended, or null. */
  private async liveRun(s: Schedule): Promise<{ runId: string; fireTime: string; status: RunStatus } | null> {
    for (const f of s.fires) {
      if (!f.run_id || f.run_status) continue;
      const status = await this.o.runs.status(f.run_id);
      if (LIVE(status)) return { runId: f.run_id, fireTime: f.fire_time, status: status! };
    }
    return null;
  }

  private async startRun(s: Schedule, record: FireRecord): Promise<string | null> {
    let runId: string;
    try {
      runId = await this.o.runs.start(s, record.fire_time);
    } catch (e) {
      const message = (e as Error).message;
      await this.o.store.record(s.schedule_id, { ...record, outcome: 'not_started', detail: [record.detail, message].filter(Boolean).join('; ') });
      await this.failed(s, `could not start a run: ${message}`);
      return null;
    }
    const fire: FireRecord = { ...record, outcome: 'started', run_id: runId };
    s.fires = [fire, ...s.fires.filter((f) => f.fire_time !== fire.fire_time)];
    await this.o.store.record(s.schedule_id, fire);
    this.watch(s.schedule_id, fire);
    return runId;
  }

  private async skip(s: Schedule, record: FireRecord): Promise<void> {
    const fire: FireRecord = { ...record, outcome: 'skipped' };
    s.fires = [fire, ...s.fires.filter((f) => f.fire_time !== fire.fire_time)];
    await this.o.store.record(s.schedule_id, fire);
    this.o.log?.(`schedule ${s.schedule_id}: fire time ${record.fire_time} skipped: ${record.detail ?? record.reason}`);
  }

  /** Records the run's end and keeps the failure count (and the backoff) of its schedule. */
  private watch(scheduleId: string, fire: FireRecord): void {
    const runId = fire.run_id!;
    if (this.watching.has(runId)) return;
    this.watching.add(runId);
    void this.o.runs
      .wait(runId)
      .then(async (status) => {
        await this.o.store.record(scheduleId, { ...fire, run_status: status });
        const s = this.schedules.get(scheduleId) ?? (await this.o.store.get(scheduleId));
        if (!s) return;
        const mine = s.fires.find((f) => f.fire_time === fire.fire_time);
        if (mine) mine.run_status = status;
        if (status === 'failed') await this.failed(s, `run ${runId} failed`);
        else if (status === 'completed' && (s.failures > 0 || s.backoff_until)) {
          s.failures = 0;
          s.backoff_until = null;
          await this.o.store.setState(scheduleId, { failures: 0, backoff_until: null });
        }
      })
      .catch(() => undefined)
      .finally(() => this.watching.delete(runId));
  }

  private async failed(s: Schedule, why: string): Promise<void> {
    s.failures += 1;
    const wait = BACKOFF_MS[Math.min(s.failures, BACKOFF_MS.length) - 1];
    s.backoff_until = iso(this.o.clock.now() + wait);
    await this.o.store.setState(s.schedule_id, { failures: s.failures, backoff_until: s.backoff_until });
    this.o.log?.(`schedule ${s.schedule_id}: ${why}; ${s.failures} consecutive failure(s), backing off: no run before ${s.backoff_until}`);
  }

  /** Starts a run of the schedule now (a person asked); its fire record. */
  async fireNow(id: string): Promise<FireRecord> {
    const s = this.schedules.get(id) ?? (await this.o.store.get(id));
    if (!s) throw new Error(`no schedule ${id}`);
    const now = this.o.clock.now();
    const fireTime = iso(now);
    await this.o.store.claim(id, fireTime, s.version, true, fireTime);
    const record: FireRecord = { fire_time: fireTime, at: fireTime, outcome: 'waiting', manual: true };
    const runId = await this.o.runs.start(s, fireTime).catch(async (e: unknown) => {
      await this.o.store.record(id, { ...record, outcome: 'not_started', detail: (e as Error).message });
      throw e;
    });
    const fire: FireRecord = { ...record, outcome: 'started', run_id: runId };
    await this.o.store.record(id, fire);
    s.fires = [fire, ...s.fires];
    this.watch(id, fire);
    return fire;
  }
}
