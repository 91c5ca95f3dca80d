/** The scheduler on a fake clock: fire times, missed ones, overlap, backoff, and two schedulers on one store. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RunStatus } from '../../src/events/agent-event.js';
import { FileScheduleStore } from '../../src/triggers/schedule-store.js';
import { Scheduler, type ScheduleRuns } from '../../src/triggers/scheduler.js';
import type { Schedule, ScheduleDefinition } from '../../src/triggers/types.js';
import { FakeClock, removeDir } from './helpers.js';

class FakeRuns implements ScheduleRuns {
  readonly started: Array<{ schedule: string; fireTime: string; runId: string }> = [];
  private readonly statuses = new Map<string, RunStatus>();
  private readonly waiters = new Map<string, Array<(s: RunStatus) => void>>();
  private n = 0;
  refuse: string | null = null;
  async start(s: Schedule, fireTime: string): Promise<string> {
    if (this.refuse) throw new Error(this.refuse);
    const runId = `run_${++this.n}`;
    this.statuses.set(runId, 'model_thinking');
    this.started.push({ schedule: s.schedule_id, fireTime, runId });
    return runId;
  }
  async status(id: string): Promise<RunStatus | null> {
    return this.statuses.get(id) ?? null;
  }
  wait(id: string): Promise<RunStatus> {
    const s = this.statuses.get(id);
    if (s === 'completed' || s === 'failed' || s === 'cancelled') return Promise.resolve(s);
    return new Promise((r) => this.waiters.set(id, [...(this.waiters.get(id) ?? []), r]));
  }
  end(id: string, status: RunStatus): void {
    this.statuses.set(id, status);
    for (const w of this.waiters.get(id) ?? []) w(status);
    this.waiters.delete(id);
  }
}

let dir = '';
const schedulers: Scheduler[] = [];
afterEach(async () => {
  for (const s of schedulers.splice(0)) await s.stop();
  removeDir(dir);
  // each test its own folder: a late write of one test's store must not reach the next test's
  dir = '';
});

function schedule(id: string, d: Partial<ScheduleDefinition>, createdAt: string): Schedule {
  return {
    agent: 'talk',
    input: {},
    tz: 'UTC',
    overlap: 'skip',
    missed: 'run_once',
    enabled: true,
    ...d,
    schedule_id: id,
    source: { kind: 'api' },
    created_at: createdAt,
    updated_at: createdAt,
    version: 1,
    due_after: createdAt,
    failures: 0,
    backoff_until: null,
    fires: [],
  };
}

async function setup(
  defs: Schedule[],
  clock: FakeClock,
  runs = new FakeRuns(),
  missedWindowMs?: number,
): Promise<{ store: FileScheduleStore; runs: FakeRuns; scheduler: Scheduler }> {
  dir ||= mkdtempSync(join(tmpdir(), 'rt-sched-'));
  const store = new FileScheduleStore(dir);
  for (const d of defs) await store.put(d);
  const scheduler = new Scheduler({ store, runs, clock, refreshMs: 3_600_000, ...(missedWindowMs ? { missedWindowMs } : {}) });
  schedulers.push(scheduler);
  await scheduler.start();
  return { store, runs, scheduler };
}

const T0 = '2030-01-01T00:00:00.000Z';

describe('scheduler (fake clock)', () => {
  it('fires an every schedule at each interval, once per fire time, with the fire time on the run', async () => {
    const clock = new FakeClock(T0);
    const { runs, scheduler, store } = await setup([schedule('s1', { every: '1m' }, T0)], clock);
    for (let i = 0; i < 3; i++) {
      clock.advance(60_000);
      await scheduler.idle();
      // each run ends before the next fire time
      runs.end(runs.started.at(-1)!.runId, 'completed');
    }
    clock.advance(59_000);
    await scheduler.idle();
    expect(runs.started.map((r) => r.fireTime)).toEqual(['2030-01-01T00:01:00.000Z', '2030-01-01T00:02:00.000Z', '2030-01-01T00:03:00.000Z']);
    const s = await store.get('s1');
    expect(s!.fires.map((f) => [f.fire_time, f.outcome])).toEqual([
      ['2030-01-01T00:03:00.000Z', 'started'],
      ['2030-01-01T00:02:00.000Z', 'started'],
      ['2030-01-01T00:01:00.000Z', 'started'],
    ]);
    expect(scheduler.nextRunAt(s!)).toBe(Date.parse('2030-01-01T00:04:00.000Z'));
  });

  it('fire times missed while no Runtrail ran: run_once starts one run for the last of them', async () => {
    const clock = new FakeClock('2030-01-01T00:10:30.000Z');
    const { runs, store, scheduler } = await setup([schedule('s1', { every: '1m' }, T0)], clock);
    await scheduler.idle();
    expect(runs.started).toEqual([{ schedule: 's1', fireTime: '2030-01-01T00:10:00.000Z', runId: 'run_1' }]);
    const fire = (await store.get('s1'))!.fires[0];
    expect(fire).toMatchObject({ outcome: 'started', run_id: 'run_1' });
    expect(fire.detail).toMatch(/10 fire time\(s\) passed while no Runtrail was running.*run once/);
  });

  it('missed: skip records the skip and starts nothing; run_once past its window skips too', async () => {
    const clock = new FakeClock('2030-01-01T00:10:30.000Z');
    // 'old' last fired (missed) at 00:05, 5.5 min before the start: outside a 5 min window
    const { runs, store, scheduler } = await setup(
      [schedule('skip', { every: '1m', missed: 'skip' }, T0), schedule('old', { every: '10m' }, '2029-12-31T23:55:00.000Z')],
      clock,
      new FakeRuns(),
      5 * 60_000,
    );
    await scheduler.idle();
    expect(runs.started).toEqual([]);
    expect((await store.get('skip'))!.fires[0]).toMatchObject({ outcome: 'skipped', reason: 'missed', fire_time: '2030-01-01T00:10:00.000Z' });
    expect((await store.get('old'))!.fires[0]).toMatchObject({ outcome: 'skipped', reason: 'missed' });
    expect((await store.get('old'))!.fires[0].detail).toMatch(/older than the 5m window/);
    // the next fire time after the start is an ordinary one
    clock.advance(30_000);
    await scheduler.idle();
    expect(runs.started.map((r) => [r.schedule, r.fireTime])).toEqual([['skip', '2030-01-01T00:11:00.000Z']]);
  });

  it('overlap: skip records a skip while the previous run is live; queue starts the next run when it ends', async () => {
    const clock = new FakeClock(T0);
    const { runs, store, scheduler } = await setup([schedule('skip', { every: '1m' }, T0), schedule('queue', { every: '1m', overlap: 'queue' }, T0)], clock);
    clock.advance(60_000);
    await scheduler.idle();
    expect(runs.started.map((r) => r.schedule).sort()).toEqual(['queue', 'skip']);
    clock.advance(60_000);
    await scheduler.idle();
    const skip = (await store.get('skip'))!.fires[0];
    expect(skip).toMatchObject({ outcome: 'skipped', reason: 'overlap', fire_time: '2030-01-01T00:02:00.000Z' });
    expect(skip.detail).toMatch(/run run_\d \(fire time 2030-01-01T00:01:00.000Z\) is still model_thinking/);
    // the queued fire waits for its turn
    expect(runs.started.filter((r) => r.schedule === 'queue')).toHaveLength(1);
    expect((await store.get('queue'))!.fires[0]).toMatchObject({ outcome: 'waiting', fire_time: '2030-01-01T00:02:00.000Z' });
    runs.end(runs.started.find((r) => r.schedule === 'queue')!.runId, 'completed');
    await vi.waitFor(() => expect(runs.started.filter((r) => r.schedule === 'queue')).toHaveLength(2));
    await scheduler.idle();
    expect(runs.started.filter((r) => r.schedule === 'queue').map((r) => r.fireTime)).toEqual(['2030-01-01T00:01:00.000Z', '2030-01-01T00:02:00.000Z']);
    expect((await store.get('queue'))!.fires[0]).toMatchObject({ outcome: 'started', fire_time: '2030-01-01T00:02:00.000Z' });
  });

  it('after consecutive failures the schedule backs off (and says so); a success ends it', async () => {
    const clock = new FakeClock(T0);
    const lines: string[] = [];
    dir = mkdtempSync(join(tmpdir(), 'rt-sched-'));
    const store = new FileScheduleStore(dir);
    await store.put(schedule('s', { every: '10s' }, T0));
    const runs = new FakeRuns();
    const scheduler = new Scheduler({ store, runs, clock, refreshMs: 3_600_000, log: (l) => lines.push(l) });
    schedulers.push(scheduler);
    await scheduler.start();
    // the first failure backs off 30 s: the next two fire times are skipped
    clock.advance(10_000);
    await scheduler.idle();
    runs.end(runs.started.at(-1)!.runId, 'failed');
    await vi.waitFor(() =>
      expect(lines.join('\n')).toMatch(/run run_1 failed; 1 consecutive failure\(s\), backing off: no run before 2030-01-01T00:00:40\.000Z/),
    );
    clock.advance(20_000);
    await scheduler.idle();
    expect(runs.started).toHaveLength(1);
    let s = await store.get('s');
    expect(s!.fires.slice(0, 2).map((f) => [f.fire_time, f.outcome, f.reason])).toEqual([
      ['2030-01-01T00:00:30.000Z', 'skipped', 'backoff'],
      ['2030-01-01T00:00:20.000Z', 'skipped', 'backoff'],
    ]);
    expect(s!.fires[0].detail).toMatch(/1 consecutive failed run\(s\): the schedule waits until 2030-01-01T00:00:40\.000Z/);
    // the second failure in a row backs off a minute
    clock.advance(10_000);
    await scheduler.idle();
    expect(runs.started).toHaveLength(2);
    runs.end(runs.started.at(-1)!.runId, 'failed');
    await vi.waitFor(() => expect(lines.join('\n')).toMatch(/2 consecutive failure\(s\), backing off: no run before 2030-01-01T00:01:40\.000Z/));
    clock.advance(50_000);
    await scheduler.idle();
    expect(runs.started).toHaveLength(2);
    s = await store.get('s');
    expect(s!.failures).toBe(2);
    clock.advance(10_000);
    await scheduler.idle();
    expect(runs.started).toHaveLength(3);
    runs.end(runs.started.at(-1)!.runId, 'completed');
    await vi.waitFor(async () => expect((await store.get('s'))!.failures).toBe(0));
    s = await store.get('s');
    expect(s!.backoff_until).toBeNull();
  });

  it('a run that cannot start is recorded with the reason and counts as a failure', async () => {
    const clock = new FakeClock(T0);
    const runs = new FakeRuns();
    runs.refuse = 'unknown agent "talk"';
    const { store, scheduler } = await setup([schedule('s', { every: '1m' }, T0)], clock, runs);
    clock.advance(60_000);
    await scheduler.idle();
    const s = await store.get('s');
    expect(s!.fires[0]).toMatchObject({ outcome: 'not_started', detail: 'unknown agent "talk"' });
    expect(s!.failures).toBe(1);
  });

  it('two schedulers on one store (two processes on one data dir) start each fire time once', async () => {
    const clock = new FakeClock(T0);
    const runs = new FakeRuns();
    const a = await setup([schedule('s', { every: '1m' }, T0)], clock, runs);
    const b = new Scheduler({ store: a.store, runs, clock, refreshMs: 3_600_000 });
    schedulers.push(b);
    await b.start();
    for (let i = 0; i < 5; i++) {
      clock.advance(60_000);
      await Promise.all([a.scheduler.idle(), b.idle()]);
      runs.end(runs.started.at(-1)!.runId, 'completed');
    }
    expect(runs.started.map((r) => r.fireTime)).toEqual([1, 2, 3, 4, 5].map((m) => `2030-01-01T00:0${m}:00.000Z`));
  });

  it('a paused schedule does not fire', async () => {
    const clock = new FakeClock(T0);
    const { runs, scheduler, store } = await setup([schedule('s', { every: '1m', enabled: false }, T0)], clock);
    clock.advance(10 * 60_000);
    await scheduler.idle();
    expect(runs.started).toEqual([]);
    expect(scheduler.nextRunAt((await store.get('s'))!)).toBeNull();
  });
});
