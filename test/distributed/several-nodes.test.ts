/**
 * API nodes and workers as separate processes of the built CLI on the real PostgreSQL
 * and Redis, one shared data dir. Each promise of one machine holds across them: every run done,
 * every stream the same bytes from any node, resumed on another node without gap or duplicate, a
 * cancel through any node, a killed worker's run interrupted exactly once.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getJson, postJson, readSse } from '../server/helpers.js';
import { eventually, liveProcesses, marker } from '../tools/helpers.js';
import { MAIN, TestCluster, pgLines, servicesDown, shellRun, statusOf, until, type NodeProcess } from './cluster-helpers.js';

const down = existsSync(MAIN) ? await servicesDown() : 'the CLI is not built';

/** The SSE frames that end a run (a cancel is an `error` frame whose diagnosis says cancelled). */
const TERMINAL = /"type":"(done|error)"/;

describe.skipIf(down !== null)('two API nodes and two workers', () => {
  const cluster = new TestCluster();
  let a: NodeProcess;
  let b: NodeProcess;

  beforeAll(async () => {
    [a, b] = await Promise.all([cluster.api(), cluster.api()]);
    await Promise.all([cluster.worker(4), cluster.worker(4)]);
  }, 60_000);
  afterAll(() => cluster.cleanup(), 30_000);

  it('50 runs created round-robin all complete; each stream read live from the other node is byte for byte its replay', async () => {
    const created: Array<{ id: string; on: NodeProcess; other: NodeProcess; live: ReturnType<typeof readSse> }> = [];
    for (let i = 0; i < 50; i++) {
      const [on, other] = i % 2 === 0 ? [a, b] : [b, a];
      const id = await shellRun(on.url!, `echo run-${i}`);
      created.push({ id, on, other, live: readSse(`${other.url}/api/runs/${id}/events`) });
    }
    const lives = await Promise.all(created.map((c) => c.live));
    for (const [i, c] of created.entries()) {
      const live = lives[i];
      expect(live.status).toBe(200);
      expect(live.events.at(-1)?.data, c.id).toMatch(/"type":"done"/);
      expect(await statusOf(c.on.url!, c.id)).toBe('completed');
      // the replay from the creating node (from PostgreSQL) is the same bytes as the live stream
      const replay = await readSse(`${c.on.url}/api/runs/${c.id}/events`);
      expect(replay.raw, c.id).toBe(live.raw);
      // and PostgreSQL holds exactly the run folder's events.jsonl
      const file = readFileSync(join(cluster.dataDir, 'runs', c.id, 'runtime', 'events.jsonl'), 'utf8');
      expect((await pgLines(cluster.schema, c.id)).map((l) => `${l}\n`).join(''), c.id).toBe(file);
    }
    // the runs went to both workers
    const owners = new Set(created.map((c) => JSON.parse(readFileSync(join(cluster.dataDir, 'runs', c.id, 'runtime', 'owner.json'), 'utf8')).pid as number));
    expect(owners.size).toBe(2);
  }, 120_000);

  it('a stream dropped mid-run and resumed on the other node with Last-Event-ID has no gap and no duplicate', async () => {
    const id = await shellRun(a.url!, 'for i in 1 2 3 4 5 6 7 8; do echo tick-$i; sleep 0.3; done');
    const first = await readSse(`${a.url}/api/runs/${id}/events`, { stopWhen: (r) => r.raw.includes('tick-2') });
    expect(first.raw).not.toMatch(TERMINAL);
    const lastId = first.events.at(-1)!.id!;
    const rest = await readSse(`${b.url}/api/runs/${id}/events`, { headers: { 'last-event-id': lastId } });
    expect(rest.events.at(-1)?.data).toMatch(/"type":"done"/);
    const ids = [...first.events, ...rest.events].map((e) => Number(e.id));
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    // together they are the whole stream
    const whole = await readSse(`${b.url}/api/runs/${id}/events`);
    expect([...first.events, ...rest.events]).toEqual(whole.events);
    expect(whole.raw).toContain('tick-8');
  }, 60_000);

  it('a cancel through the node that did not create the run reaches its worker', async () => {
    const m = marker();
    cluster.markers.push(m);
    const id = await shellRun(a.url!, `sleep ${m}`);
    expect(await eventually(() => liveProcesses(m).length > 0, 20_000)).toBe(true);
    const live = readSse(`${a.url}/api/runs/${id}/events`);
    const r = await postJson(`${b.url}/api/runs/${id}/cancel`, {});
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    expect(await until(async () => (await statusOf(a.url!, id)) === 'cancelled', 15_000)).toBe(true);
    const events = (await live).events;
    expect(events.filter((e) => TERMINAL.test(e.data))).toHaveLength(1);
    expect(JSON.parse(events.at(-1)!.data)).toMatchObject({ type: 'error', diagnosis: { code: 'cancelled' } });
    expect(await eventually(() => liveProcesses(m).length === 0, 15_000)).toBe(true);
  }, 60_000);
});

describe.skipIf(down !== null)('a worker killed with SIGKILL', () => {
  // the stalled check every second, locks of two: a dead worker's run is found within seconds
  const cluster = new TestCluster({ RUNTRAIL_STALLED_INTERVAL_MS: '1000', RUNTRAIL_LOCK_DURATION_MS: '2000' });
  afterAll(() => cluster.cleanup(), 30_000);

  it('with resuming turned off has its run interrupted with one terminal event; the other runs are done by the other worker; its processes end when a worker starts there again', async () => {
    // on the host (the operator's sandbox off): a sandboxed command would die with its worker at
    // once (test/cli/sigkill-leftovers.test.ts); here the next worker must end what was left. The
    // operator turned resuming off: the run is interrupted, not taken up by the other worker
    // (resume-on-another-worker.test.ts)
    mkdirSync(join(cluster.dir, '.runtrail'), { recursive: true });
    writeFileSync(join(cluster.dir, '.runtrail', 'config.json'), JSON.stringify({ sandbox: { mode: 'off' }, durability: { resume: false } }));
    const api = await cluster.api();
    const other = await cluster.start(['serve', '--role', 'api', '--port', '0']);
    const w1 = await cluster.worker(1);
    const w2 = await cluster.worker(1);
    const m = marker();
    cluster.markers.push(m);
    const long = await shellRun(api.url!, `sleep ${m}`);
    expect(await eventually(() => liveProcesses(m).length > 0, 20_000)).toBe(true);
    const owner = JSON.parse(readFileSync(join(cluster.dataDir, 'runs', long, 'runtime', 'owner.json'), 'utf8')).pid as number;
    const [victim, survivor] = owner === w1.child.pid ? [w1, w2] : [w2, w1];
    expect(victim.child.pid).toBe(owner);
    // three more runs: they wait for the one free slot left, and for the victim's after it dies
    const short = [
      await shellRun(api.url!, 'sleep 1; echo one'),
      await shellRun(api.url!, 'sleep 1; echo two'),
      await shellRun(api.url!, 'sleep 1; echo three'),
    ];
    const watching = readSse(`${other.url}/api/runs/${long}/events`);
    await victim.kill('SIGKILL');
    expect(liveProcesses(m).length).toBeGreaterThan(0); // nothing ended them yet

    expect(await until(async () => (await statusOf(api.url!, long)) === 'failed', 30_000)).toBe(true);
    const run = (await getJson(`${other.url}/api/runs/${long}`)).body;
    expect(run.diagnosis.code).toBe('interrupted');
    const seen = (await watching).events;
    expect(seen.filter((e) => TERMINAL.test(e.data))).toHaveLength(1);
    expect(seen.at(-1)?.data).toMatch(/"type":"error"/);
    const lines = await pgLines(cluster.schema, long);
    expect(lines.filter((l) => /"type":"run\.(completed|failed|cancelled)"/.test(l))).toHaveLength(1);
    expect(lines.map((l) => JSON.parse(l).seq)).toEqual(lines.map((_, i) => i + 1));
    for (const id of short) expect(await until(async () => (await statusOf(api.url!, id)) === 'completed', 30_000), id).toBe(true);
    expect(survivor.child.exitCode).toBeNull();

    // a worker that starts on this host ends what the dead one left running
    const next = await cluster.worker(1);
    expect(await eventually(() => liveProcesses(m).length === 0, 15_000)).toBe(true);
    expect(next.out()).toContain(long);
  }, 120_000);
});

describe.skipIf(down !== null)('a worker stopped with SIGTERM', () => {
  const cluster = new TestCluster();
  afterAll(() => cluster.cleanup(), 30_000);

  it('stops claiming, lets its runs finish within --drain-s, and with resuming turned off interrupts what is left after it', async () => {
    // the operator turned resuming off: what is left is interrupted, not left to another worker
    // (resume-on-another-worker.test.ts); on the host, so that shell_task runs where no sandbox can start
    mkdirSync(join(cluster.dir, '.runtrail'), { recursive: true });
    writeFileSync(join(cluster.dir, '.runtrail', 'config.json'), JSON.stringify({ sandbox: { mode: 'off' }, durability: { resume: false } }));
    const api = await cluster.api();
    const w = await cluster.worker(2, ['--drain-s', '4']);
    const m = marker();
    cluster.markers.push(m);
    const quick = await shellRun(api.url!, 'sleep 2; echo finished');
    const slow = await shellRun(api.url!, `sleep ${m}`);
    expect(await eventually(() => liveProcesses(m).length > 0, 20_000)).toBe(true);
    expect(await until(async () => (await statusOf(api.url!, quick)) === 'tool_executing', 10_000)).toBe(true);
    const code = await w.kill('SIGTERM');
    expect(code).toBe(0);
    expect(await statusOf(api.url!, quick)).toBe('completed');
    const s = (await getJson(`${api.url}/api/runs/${slow}`)).body;
    expect(s.status).toBe('failed');
    expect(s.diagnosis.code).toBe('interrupted');
    expect(s.diagnosis.summary).toContain('drain');
    expect(liveProcesses(m)).toEqual([]);
  }, 60_000);
});
