/**
 * Redis restarted (everything it held lost) or PostgreSQL lost in the middle of
 * runs. Queued runs come back from PostgreSQL, live streams go on from it, the API answers 503 with
 * Retry-After while a service is away, and nothing is half-written once it is back.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { getJson, readSse } from '../server/helpers.js';
import { marker, sleep } from '../tools/helpers.js';
import { CuttableProxy, MAIN, PG_URL, TestCluster, ownRedisCluster, pgLines, servicesDown, shellRun, statusOf, until } from './cluster-helpers.js';

const down = existsSync(MAIN) ? await servicesDown() : 'the CLI is not built';

/** The ids of an SSE stream are 1…n with gaps only where the server sends no frame: strictly increasing, no duplicate. */
function increasing(ids: number[]): boolean {
  return ids.every((id, i) => i === 0 || id > ids[i - 1]);
}

describe.skipIf(down !== null)('Redis restarted mid-run', () => {
  let own: Awaited<ReturnType<typeof ownRedisCluster>> | undefined;
  afterAll(() => own?.stop(), 30_000);

  it('the running run finishes and its stream goes on; the queued run it forgot is run; new runs are taken', async () => {
    own = await ownRedisCluster({ RUNTRAIL_RECONCILE_MS: '500' });
    const { redis, cluster } = own;
    const api = await cluster.api();
    await cluster.worker(1);
    const running = await shellRun(api.url!, 'for i in 1 2 3 4 5 6; do echo beat-$i; sleep 0.5; done');
    expect(await until(async () => (await statusOf(api.url!, running)) === 'tool_executing', 15_000)).toBe(true);
    const queued = await shellRun(api.url!, 'echo after-the-restart');
    const live = readSse(`${api.url}/api/runs/${running}/events`);
    await sleep(300);
    await redis.restart(); // a Redis with nothing on disk: the queued job is gone

    const seen = await live;
    expect(seen.events.at(-1)?.data).toMatch(/"type":"done"/);
    expect(seen.raw).toContain('beat-6');
    expect(increasing(seen.events.map((e) => Number(e.id)))).toBe(true);
    // the stream is every frame the run has, as a replay gives it
    expect(seen.raw).toBe((await readSse(`${api.url}/api/runs/${running}/events`)).raw);
    expect(await statusOf(api.url!, running)).toBe('completed');
    // the reconciler found the queued run in PostgreSQL and queued it again
    expect(await until(async () => (await statusOf(api.url!, queued)) === 'completed', 30_000)).toBe(true);
    const fresh = await shellRun(api.url!, 'echo fresh');
    expect(await until(async () => (await statusOf(api.url!, fresh)) === 'completed', 30_000)).toBe(true);
  }, 90_000);

  it('while Redis is away a new run is refused with 503 and Retry-After, naming Redis without a password', async () => {
    const { redis, cluster } = own!;
    await redis.stop();
    const api = cluster.nodes[0];
    const r = await fetch(`${api.url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'shell_task', input: { command: 'echo x' } }),
    });
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('5');
    const body = (await r.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('service_unavailable');
    expect(body.error.message).toContain(`Redis at redis://127.0.0.1:${redis.port}/0 is unreachable`);
    // reading runs needs only PostgreSQL
    expect((await getJson(`${api.url}/api/runs`)).status).toBe(200);
    await redis.start();
  }, 30_000);
});

describe.skipIf(down !== null)('a worker killed while Redis lost everything', () => {
  let own: Awaited<ReturnType<typeof ownRedisCluster>> | undefined;
  afterAll(() => own?.stop(), 30_000);

  it('with resuming turned off has its run interrupted from PostgreSQL and its presence file, once', async () => {
    own = await ownRedisCluster({ RUNTRAIL_RECONCILE_MS: '500' });
    const { redis, cluster } = own;
    // the operator turned resuming off: the reconciler ends the run instead of putting it back in the
    // queue for another worker to take up (resume-on-another-worker.test.ts)
    mkdirSync(join(cluster.dir, '.runtrail'), { recursive: true });
    writeFileSync(join(cluster.dir, '.runtrail', 'config.json'), JSON.stringify({ durability: { resume: false } }));
    const api = await cluster.api();
    const worker = await cluster.worker(1);
    const m = marker();
    cluster.markers.push(m);
    const id = await shellRun(api.url!, `sleep ${m}`);
    expect(await until(async () => (await statusOf(api.url!, id)) === 'tool_executing', 15_000)).toBe(true);
    await redis.restart(); // the job, its lock and the stalled check's state are gone
    await worker.kill('SIGKILL');
    expect(await until(async () => (await statusOf(api.url!, id)) === 'failed', 30_000)).toBe(true);
    const run = (await getJson(`${api.url}/api/runs/${id}`)).body;
    expect(run.diagnosis.code).toBe('interrupted');
    expect(run.diagnosis.summary).toContain('its worker stopped');
    const lines = await pgLines(cluster.schema, id);
    expect(lines.filter((l) => /"type":"run\.(completed|failed|cancelled)"/.test(l))).toHaveLength(1);
  }, 90_000);
});

describe.skipIf(down !== null)('PostgreSQL lost mid-run', () => {
  const proxy = new CuttableProxy('127.0.0.1', Number(new URL(PG_URL).port || 5432));
  let cluster: TestCluster;
  afterAll(async () => {
    await cluster?.cleanup();
    await proxy.cut();
  }, 30_000);

  it('answers 503 with Retry-After; the worker keeps the run and commits every event once it is back', async () => {
    await proxy.open();
    const viaProxy = new URL(PG_URL);
    viaProxy.port = String(proxy.port);
    cluster = new TestCluster({}, undefined, viaProxy.toString());
    const api = await cluster.api();
    await cluster.worker(1);
    const id = await shellRun(api.url!, 'for i in 1 2 3 4 5 6 7 8; do echo line-$i; sleep 0.4; done');
    expect(await until(async () => (await statusOf(api.url!, id)) === 'tool_executing', 15_000)).toBe(true);
    await proxy.cut();

    const get = await fetch(`${api.url}/api/runs/${id}`);
    expect(get.status).toBe(503);
    expect(get.headers.get('retry-after')).toBe('5');
    expect(((await get.json()) as { error: { message: string } }).error.message).toMatch(
      /^PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1:\d+\/test is unreachable/,
    );
    const post = await fetch(`${api.url}/api/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'shell_task', input: { command: 'echo x' } }),
    });
    expect(post.status).toBe(503);
    await sleep(2_000); // the run goes on meanwhile, its events wait in the worker
    await proxy.restore();

    expect(await until(async () => (await statusOf(api.url!, id)) === 'completed', 60_000)).toBe(true);
    // nothing half-written: the database has every event, in order, exactly the run folder's file
    const replay = await readSse(`${api.url}/api/runs/${id}/events`);
    expect(replay.raw).toContain('line-8');
    expect(replay.events.at(-1)?.data).toMatch(/"type":"done"/);
    const file = readFileSync(join(cluster.dataDir, 'runs', id, 'runtime', 'events.jsonl'), 'utf8')
      .trimEnd()
      .split('\n');
    const seqs = file.map((l) => JSON.parse(l).seq as number);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(await pgLines(cluster.schema, id)).toEqual(file);
    const listed = await getJson(`${api.url}/api/runs?status=completed`);
    expect(listed.body.runs.map((r: { run_id: string }) => r.run_id)).toEqual([id]);
    expect(listed.body.runs[0].last_seq).toBe(seqs.at(-1));
  }, 120_000);
});
