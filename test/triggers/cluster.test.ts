/**
 * Two Runtrail nodes on the same PostgreSQL and Redis (a schema and key prefix of this test's own),
 * both serving a project that declares `every: 2s`: each fire time starts exactly one run, on one node.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getJson } from '../server/helpers.js';
import pg from 'pg';
import { PG_URL, servicesDown, TestCluster } from '../distributed/cluster-helpers.js';

const down = await servicesDown();
let cluster: TestCluster | null = null;
afterEach(async () => {
  await cluster?.cleanup();
  cluster = null;
});

interface Run {
  run_id: string;
  status: string;
  trigger?: { schedule_id: string; fire_time: string };
}

describe.skipIf(down)('schedules on several nodes', () => {
  it('two nodes fire every fire time once, never twice, never from both', async () => {
    cluster = new TestCluster();
    const rt = join(cluster.dir, '.runtrail');
    mkdirSync(join(rt, 'agents'), { recursive: true });
    writeFileSync(join(rt, 'agents', 'note.md'), '---\nname: note\ndescription: writes a line\nmodel: script:note.turns.json\n---\nSay ok.\n');
    writeFileSync(join(rt, 'agents', 'note.turns.json'), JSON.stringify([{ text: 'ok' }]));
    writeFileSync(join(rt, 'schedules.json'), JSON.stringify({ tick: { agent: 'note', every: '2s', goal: 'tick' } }));
    const a = await cluster.start(['serve', '--port', '0']);
    const b = await cluster.start(['serve', '--port', '0']);
    const scheduled = async (url: string): Promise<Run[]> =>
      ((await getJson(`${url}/api/runs?limit=200`)).body.runs as Run[]).filter((r) => r.trigger?.schedule_id === 'tick');
    await vi.waitFor(async () => expect((await scheduled(a.url!)).length).toBeGreaterThanOrEqual(4), { timeout: 40_000, interval: 500 });
    await Promise.all([a.kill('SIGTERM'), b.kill('SIGTERM')]);

    // what the database holds once both have stopped
    const db = new pg.Client({ connectionString: PG_URL });
    await db.connect();
    let runs: Run[];
    let fires: Array<{ fire_time: string; outcome: string; run_id?: string }>;
    try {
      runs = (await db.query<{ record: string }>(`SELECT record FROM "${cluster.schema}".runtrail_runs`)).rows
        .map((r) => JSON.parse(r.record) as Run)
        .filter((r) => r.trigger?.schedule_id === 'tick');
      fires = (
        await db.query<{ record: { fire_time: string; outcome: string; run_id?: string } }>(
          `SELECT record FROM "${cluster.schema}".runtrail_schedule_fires WHERE schedule_id = 'tick'`,
        )
      ).rows.map((r) => r.record);
    } finally {
      await db.end();
    }
    const fireTimes = runs.map((r) => r.trigger!.fire_time);
    expect(runs.length).toBeGreaterThanOrEqual(4);
    expect(new Set(fireTimes).size, fireTimes.join('\n')).toBe(fireTimes.length);
    // consecutive fire times of the schedule, two seconds apart: none lost between the two nodes either
    const sorted = [...fireTimes].sort().map((t) => Date.parse(t));
    for (let i = 1; i < sorted.length; i++) expect(sorted[i] - sorted[i - 1]).toBe(2000);
    // each fire time was claimed once, and its record names the run that names it
    expect(new Set(fires.map((f) => f.fire_time)).size).toBe(fires.length);
    for (const r of runs) expect(fires.find((f) => f.fire_time === r.trigger!.fire_time)?.run_id).toBe(r.run_id);
  }, 90_000);
});
