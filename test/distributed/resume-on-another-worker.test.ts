/**
 * A cluster's worker killed with SIGKILL in the middle of a run, or stopped with SIGTERM whose drain
 * runs out: the other worker takes the run up from its checkpoint in PostgreSQL, exactly once. Two worker processes of the built CLI and an API
 * node on the real PostgreSQL and Redis; the run's tools count their side effects in a file outside
 * the run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { parseEventLines } from '../../src/runtime/storage/event-store.js';
import { writeDurableAgent } from '../durable/durable-fixture.js';
import { getJson, postJson, readSse } from '../server/helpers.js';
import { eventually } from '../tools/helpers.js';
import { MAIN, PG_URL, TestCluster, pgLines, servicesDown, statusOf, until } from './cluster-helpers.js';

const down = existsSync(MAIN) ? await servicesDown() : 'the CLI is not built';

const TURNS = [
  { text: 'sending a', toolCalls: [{ name: 'send', args: { key: 'a', ms: 0 } }] },
  // the model takes its time, then calls a slow tool that is not safe to run twice: the worker dies in it
  { text: 'sending b', delayMs: 300, toolCalls: [{ name: 'send', args: { key: 'b', ms: 120_000 } }] },
  { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nsent a; b unknown\n' } }] },
  { text: 'report written' },
];

/** Writes the effects plugin and the scripted agent into the cluster's directory (the nodes' project). */
function projectIn(cluster: TestCluster) {
  return writeDurableAgent(
    {
      dir: cluster.dir,
      write: (rel, text) => {
        const abs = join(cluster.dir, rel);
        mkdirSync(dirname(abs), { recursive: true });
        writeFileSync(abs, text);
        return abs;
      },
    },
    TURNS,
  );
}

async function checkpointRows(schema: string, runId: string): Promise<number> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    const r = await c.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".runtrail_checkpoints WHERE run_id = $1`, [runId]);
    return Number(r.rows[0].n);
  } finally {
    await c.end();
  }
}

describe.skipIf(down !== null)('a worker killed with SIGKILL mid-run', () => {
  // the stalled check every second, locks of two: a dead worker's job is back in the queue within seconds
  const cluster = new TestCluster({ RUNTRAIL_STALLED_INTERVAL_MS: '1000', RUNTRAIL_LOCK_DURATION_MS: '2000' });
  afterAll(() => cluster.cleanup(), 30_000);

  it('has its run resumed by the other worker: finished calls not repeated, the running one not run again, one stream with no gap', async () => {
    const project = projectIn(cluster);
    const api = await cluster.api();
    const w1 = await cluster.worker(1);
    const w2 = await cluster.worker(1);
    const created = await postJson(`${api.url}/api/runs`, { plugin: 'worker', input: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = created.body.run_id as string;
    expect(await eventually(() => project.effects().includes('start send:b'), 30_000)).toBe(true);
    const ownerFile = join(cluster.dataDir, 'runs', runId, 'runtime', 'owner.json');
    const owner = JSON.parse(readFileSync(ownerFile, 'utf8')).pid as number;
    const [victim, survivor] = owner === w1.child.pid ? [w1, w2] : [w2, w1];
    expect(victim.child.pid).toBe(owner);
    // a client that saw the run up to here (the replay of what was committed, then it drops)
    const seen = await readSse(`${api.url}/api/runs/${runId}/events`, { stopWhen: (r) => r.events.length > 0 });
    const lastSeen = seen.events.at(-1)!.id!;
    await victim.kill('SIGKILL');
    project.release();

    expect(await until(async () => (await statusOf(api.url!, runId)) === 'completed', 60_000), survivor.out()).toBe(true);
    const run = (await getJson(`${api.url}/api/runs/${runId}`)).body;
    expect(run.final_answer).toBe('report written');
    expect(JSON.parse(readFileSync(ownerFile, 'utf8')).pid).toBe(survivor.child.pid);
    expect(readFileSync(join(cluster.dataDir, 'runs', runId, 'artifacts', 'report.md'), 'utf8')).toContain('# Done');

    // the finished call ran once; the one the worker died in ran at most once and was not run again
    const effects = project.effects();
    expect(effects.filter((l) => l === 'start send:a')).toHaveLength(1);
    expect(effects.filter((l) => l === 'start send:b')).toHaveLength(1);
    expect(effects).not.toContain('done send:b');

    // PostgreSQL holds one gap-free stream, the same as the run folder's file, with one end and one resume
    const lines = await pgLines(cluster.schema, runId);
    const events = lines.map((l) => JSON.parse(l) as { seq: number; stream: string; data: Record<string, unknown> });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(lines.filter((l) => /"type":"run\.(completed|failed|cancelled)"/.test(l))).toHaveLength(1);
    expect(lines.at(-1)).toMatch(/"type":"run\.completed"/);
    const file = readFileSync(join(cluster.dataDir, 'runs', runId, 'runtime', 'events.jsonl'), 'utf8');
    expect(lines.map((l) => `${l}\n`).join('')).toBe(file);
    const resumed = parseEventLines(file).filter((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect(resumed.map((e) => (e.data as { attempt: number }).attempt)).toEqual([1]);
    const b = events.find((e) => e.stream === 'tool' && e.data.phase === 'result' && e.data.name === 'send' && e.data.isError === true);
    expect(b?.data).toMatchObject({ diagnosis: { code: 'interrupted_during_call' } });

    // the checkpoint the survivor resumed from is in PostgreSQL (a cluster writes no checkpoint file)
    expect(await checkpointRows(cluster.schema, runId)).toBeGreaterThan(0);
    expect(existsSync(join(cluster.dataDir, 'runs', runId, 'runtime', 'checkpoint.jsonl'))).toBe(false);

    // the client reconnects with Last-Event-ID from before the kill; a fresh client reads all
    const fresh = await readSse(`${api.url}/api/runs/${runId}/events`);
    const again = await readSse(`${api.url}/api/runs/${runId}/events`, { headers: { 'Last-Event-ID': lastSeen } });
    const at = fresh.events.findIndex((e) => e.id === lastSeen);
    expect(at).toBeGreaterThan(0);
    expect(again.events).toEqual(fresh.events.slice(at + 1));
    expect(survivor.child.exitCode).toBeNull();
  }, 120_000);
});

describe.skipIf(down !== null)('a worker stopped with SIGTERM whose drain runs out', () => {
  const cluster = new TestCluster({ RUNTRAIL_STALLED_INTERVAL_MS: '1000', RUNTRAIL_LOCK_DURATION_MS: '2000' });
  afterAll(() => cluster.cleanup(), 30_000);

  it('leaves its run to the other worker, which resumes it: not interrupted, one stream, one end', async () => {
    const project = projectIn(cluster);
    const api = await cluster.api();
    const w1 = await cluster.worker(1, ['--drain-s', '1']);
    const created = await postJson(`${api.url}/api/runs`, { plugin: 'worker', input: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = created.body.run_id as string;
    expect(await eventually(() => project.effects().includes('start send:b'), 30_000)).toBe(true);
    // the other worker starts once the run is held, so that the first one holds it
    const w2 = await cluster.worker(1);
    expect(await w1.kill('SIGTERM')).toBe(0);
    // left, not ended: the stopped worker wrote no end
    expect((await pgLines(cluster.schema, runId)).filter((l) => /"type":"run\.(completed|failed|cancelled)"/.test(l))).toEqual([]);
    project.release();

    expect(await until(async () => (await statusOf(api.url!, runId)) === 'completed', 60_000), w2.out()).toBe(true);
    expect(JSON.parse(readFileSync(join(cluster.dataDir, 'runs', runId, 'runtime', 'owner.json'), 'utf8')).pid).toBe(w2.child.pid);
    const effects = project.effects();
    expect(effects.filter((l) => l === 'start send:a')).toHaveLength(1);
    expect(effects.filter((l) => l === 'start send:b')).toHaveLength(1);
    const lines = await pgLines(cluster.schema, runId);
    const events = lines.map((l) => JSON.parse(l) as { seq: number; stream: string; data: Record<string, unknown> });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(lines.filter((l) => /"type":"run\.(completed|failed|cancelled)"/.test(l))).toHaveLength(1);
    expect(events.filter((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed')).toHaveLength(1);
    const file = readFileSync(join(cluster.dataDir, 'runs', runId, 'runtime', 'events.jsonl'), 'utf8');
    expect(lines.map((l) => `${l}\n`).join('')).toBe(file);
  }, 120_000);
});
