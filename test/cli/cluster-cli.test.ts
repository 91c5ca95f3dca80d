/**
 * Several nodes at the command line: roles need both services; a service that cannot be reached
 * at start is an exit 2 naming it and its URL without the password; `runtrail doctor` tells whether
 * the data dir is the one the workers write to.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { MAIN, PG_URL, REDIS_URL, TestCluster, freePort, servicesDown } from '../distributed/cluster-helpers.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'runtrail-cluster-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function runtrail(args: string[], env: Record<string, string>): Promise<{ code: number; out: string }> {
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_') && !k.startsWith('OTEL_')) clean[k] = v;
  try {
    const r = await run(process.execPath, [MAIN, ...args], {
      cwd: dir,
      env: { ...clean, NO_COLOR: '1', RUNTRAIL_DATA_DIR: join(dir, 'data'), ...env },
      timeout: 30_000,
    });
    return { code: 0, out: r.stdout + r.stderr };
  } catch (e) {
    const x = e as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof x.code === 'number' ? x.code : -1, out: `${x.stdout ?? ''}${x.stderr ?? ''}` };
  }
}

describe.runIf(existsSync(MAIN))('several nodes at the command line', () => {
  it('a role or a worker without the two variables is a usage error naming them', async () => {
    for (const args of [['worker'], ['serve', '--role', 'api']]) {
      const r = await runtrail(args, {});
      expect(r.code, r.out).toBe(2);
      expect(r.out).toContain('needs RUNTRAIL_REDIS_URL and RUNTRAIL_DATABASE_URL');
    }
    const bad = await runtrail(['serve', '--role', 'leader'], {});
    expect(bad.code).toBe(2);
    expect(bad.out).toContain('--role must be api, worker or all, got "leader"');
    const conc = await runtrail(['worker', '--concurrency', '0'], {});
    expect(conc.code).toBe(2);
    expect(conc.out).toContain('--concurrency must be a number ≥ 1, got "0"');
  });

  it('one variable without the other exits 2 naming the one missing', async () => {
    const r = await runtrail(['worker'], { RUNTRAIL_REDIS_URL: REDIS_URL });
    expect(r.code).toBe(2);
    expect(r.out).toContain('RUNTRAIL_REDIS_URL is set but RUNTRAIL_DATABASE_URL is not');
  });

  it('Redis or PostgreSQL unreachable at start: exit 2 with a line naming which, its URL without the password', async () => {
    const port = await freePort();
    const redis = await runtrail(['worker'], { RUNTRAIL_REDIS_URL: `redis://:s3cret-pw@127.0.0.1:${port}/0`, RUNTRAIL_DATABASE_URL: PG_URL });
    expect(redis.code, redis.out).toBe(2);
    expect(redis.out).toContain(`runtrail: Redis at redis://:***@127.0.0.1:${port}/0 is unreachable: connect ECONNREFUSED`);
    expect(redis.out).not.toContain('s3cret-pw');
    if (await servicesDown()) return; // the PostgreSQL case needs a Redis that answers
    const pg = await runtrail(['serve', '--role', 'api', '--port', '0'], {
      RUNTRAIL_REDIS_URL: REDIS_URL,
      RUNTRAIL_DATABASE_URL: `postgres://runner:pg-s3cret@127.0.0.1:${port}/x`,
    });
    expect(pg.code, pg.out).toBe(2);
    expect(pg.out).toContain(`runtrail: PostgreSQL at postgres://runner:***@127.0.0.1:${port}/x is unreachable`);
    expect(pg.out).not.toContain('pg-s3cret');
  }, 60_000);

  it('doctor on one process checks the data dir and says no services are used', async () => {
    const r = await runtrail(['doctor'], {});
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain(`✓ data dir: ${join(dir, 'data')} is writable`);
    expect(r.out).toContain('✓ mode: one process');
  });
});

const down = existsSync(MAIN) ? await servicesDown() : 'the CLI is not built';

describe.skipIf(down !== null)('runtrail doctor with several nodes', () => {
  const cluster = new TestCluster();
  afterAll(() => cluster.cleanup(), 30_000);

  it("sees a worker's presence file on a shared data dir, and says when the data dir is not shared", async () => {
    const w = await cluster.worker(1);
    const here = await runtrail(['doctor', '--json'], cluster.env() as Record<string, string>);
    expect(here.code, here.out).toBe(0);
    const report = JSON.parse(here.out) as { ok: boolean; checks: Array<{ name: string; status: string; detail: string }> };
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['redis', 'postgresql', `worker ${hostname()}-${w.child.pid}`]));
    expect(report.checks.find((c) => c.name.startsWith('worker '))!.detail).toContain('shared');

    const elsewhere = await runtrail(['doctor'], { ...(cluster.env() as Record<string, string>), RUNTRAIL_DATA_DIR: join(cluster.dir, 'not-shared') });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.out).toContain('RUNTRAIL_DATA_DIR must be one folder every node mounts');
  }, 60_000);
});
