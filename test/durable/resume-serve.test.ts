/**
 * `runtrail serve` killed with SIGKILL while a run waits for an approval, and again while it runs a
 * call that is not safe to repeat: each time the next `serve` resumes the run at start. The approval
 * is asked again with its id, the running call is not run again, and an SSE client that resumes
 * from before a kill reads what a fresh client of the finished run reads.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getJson, postJson, readSse } from '../server/helpers.js';
import { eventually } from '../tools/helpers.js';
import { checkEventLog, durableProject, killHard, MAIN, runEvents, type DurableProject, serve } from './durable-fixture.js';

const children: ChildProcess[] = [];
let p: DurableProject | null = null;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
});

/** The run's pending approval, once there is one (asked over HTTP, as a person's client would). */
async function pendingApproval(url: string, runId: string): Promise<string> {
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    const r = await getJson(`${url}/api/runs/${runId}/approvals`);
    const id = (r.body.approvals?.[0]?.id as string | undefined) ?? '';
    if (id) return id;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`run ${runId} asked for no approval within 30 s`);
}

/** The run reached `want`, and its terminal event is in its events.jsonl (the status is written just before it). */
async function statusOf(url: string, runId: string, want: string): Promise<boolean> {
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    if (
      (await getJson(`${url}/api/runs/${runId}`)).body.status === want &&
      runEvents(p!.dir, runId).some((e) => e.stream === 'run' && e.data.type === `run.${want}`)
    )
      return true;
    await new Promise((res) => setTimeout(res, 50));
  }
  return false;
}

describe.runIf(existsSync(MAIN))('serve killed with SIGKILL, started again', () => {
  it('resumes the run at start: the approval asked again with its id, the running call not run again, SSE continued as if nothing happened', async () => {
    p = durableProject(
      [
        { text: 'sending a', toolCalls: [{ name: 'send', args: { key: 'a', ms: 0 } }] },
        { text: 'sending b', toolCalls: [{ name: 'send', args: { key: 'b', ms: 60_000 } }] },
        { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nsent\n' } }] },
        { text: 'report written' },
      ],
      { agentExtra: 'permissions: { send: ask }' },
    );
    const first = await serve(p.dir, children);
    const created = await postJson(`${first.url}/api/runs`, { plugin: 'worker', input: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = created.body.run_id as string;
    const asked = await pendingApproval(first.url, runId);
    // a client that saw the run up to here
    const seen = await readSse(`${first.url}/api/runs/${runId}/events`, { stopWhen: (r) => r.raw.includes('"pending"') });
    const lastSeen = seen.events.at(-1)!.id!;
    await killHard(first.child);

    const second = await serve(p.dir, children);
    expect(await pendingApproval(second.url, runId)).toBe(asked);
    const decided = await postJson(`${second.url}/api/runs/${runId}/approvals/${asked}`, { decision: 'approve' });
    expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    const b = await pendingApproval(second.url, runId).then(async (id) => {
      expect(id).not.toBe(asked);
      return id;
    });
    await postJson(`${second.url}/api/runs/${runId}/approvals/${b}`, { decision: 'approve' });
    expect(await eventually(() => p!.effects().includes('start send:b'), 30_000)).toBe(true);
    await killHard(second.child);
    p.release();

    const third = await serve(p.dir, children);
    expect(await statusOf(third.url, runId, 'completed')).toBe(true);
    expect(p.effects().filter((l) => l === 'start send:a')).toHaveLength(1);
    expect(p.effects().filter((l) => l === 'start send:b')).toHaveLength(1);
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    const resumed = events.filter((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect(resumed.map((e) => (e.data as { attempt: number }).attempt)).toEqual([1, 2]);
    expect(events.find((e) => e.stream === 'tool' && e.data.phase === 'result' && e.data.name === 'send' && e.data.isError)?.data).toMatchObject({
      diagnosis: { code: 'interrupted_during_call' },
    });
    const metrics = JSON.parse(readFileSync(join(p.dir, 'data', 'runs', runId, 'runtime', 'metrics.json'), 'utf8'));
    expect(metrics.resumes).toBe(2);
    expect(existsSync(join(p.dir, 'data', 'runs', runId, 'artifacts', 'report.md'))).toBe(true);

    // the client reconnects with Last-Event-ID from before the first kill; a fresh client reads all
    const fresh = await readSse(`${third.url}/api/runs/${runId}/events`);
    const resumedClient = await readSse(`${third.url}/api/runs/${runId}/events`, { headers: { 'Last-Event-ID': lastSeen } });
    const at = fresh.events.findIndex((e) => e.id === lastSeen);
    expect(at).toBeGreaterThan(0);
    expect(resumedClient.events).toEqual(fresh.events.slice(at + 1));
    expect(fresh.events.some((e) => e.data.includes('"name":"resume"'))).toBe(true);
  }, 180_000);
});

describe.runIf(existsSync(MAIN))('serve killed during a subagent', () => {
  it('resumes the parent, whose run_agent call waits for its resumed child: one child, both complete', async () => {
    p = durableProject([
      { text: 'looking up', toolCalls: [{ name: 'lookup', args: { key: 'q', ms: 60_000 } }] },
      { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nlooked up\n' } }] },
      { text: 'child done' },
    ]);
    p.write('.runtrail/agents/boss.md', '---\nname: boss\ndescription: delegates\nmodel: script:boss.turns.json\nagents: [worker]\n---\nDelegate.\n');
    p.write(
      '.runtrail/agents/boss.turns.json',
      JSON.stringify([{ toolCalls: [{ name: 'run_agent', args: { agent: 'worker', goal: 'look it up' } }] }, { text: 'boss done' }]),
    );
    const first = await serve(p.dir, children);
    const created = await postJson(`${first.url}/api/runs`, { plugin: 'boss', input: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = created.body.run_id as string;
    expect(await eventually(() => p!.effects().includes('start lookup:q'), 30_000)).toBe(true);
    await killHard(first.child);
    p.release();

    const second = await serve(p.dir, children);
    expect(await statusOf(second.url, runId, 'completed')).toBe(true);
    const parent = (await getJson(`${second.url}/api/runs/${runId}`)).body;
    expect(parent.children).toHaveLength(1);
    const show = (id: string) =>
      runEvents(p!.dir, id)
        .map((e) => `${e.seq}:${e.stream}:${(e.data as { type?: string; phase?: string }).type ?? (e.data as { phase?: string }).phase}`)
        .join(' ');
    const child = (await getJson(`${second.url}/api/runs/${parent.children[0]}`)).body;
    expect(child.status, JSON.stringify(child.diagnosis) + show(child.run_id)).toBe('completed');
    expect(parent.final_answer).toBe('boss done');
    expect(checkEventLog(runEvents(p.dir, runId)), show(runId)).toEqual([]);
    expect(checkEventLog(runEvents(p.dir, child.run_id)), show(child.run_id)).toEqual([]);
    // the child's read-only call ran again; no second child was started
    expect(p.effects().filter((l) => l === 'start lookup:q')).toHaveLength(2);
    const result = runEvents(p.dir, runId).filter((e) => e.stream === 'tool' && e.data.phase === 'result' && e.data.name === 'run_agent');
    expect(result.map((e) => (e.data as { isError: boolean }).isError)).toEqual([false]);
  }, 180_000);
});
