/**
 * `runtrail serve` stopped with SIGTERM (a deploy) in the middle of a run: the run is left to be
 * resumed, not cancelled, and the next `serve` takes it up and completes it. An agent that says
 * `durability: interrupt` is cancelled as before.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { getJson, postJson, readSse } from '../server/helpers.js';
import { eventually } from '../tools/helpers.js';
import { checkEventLog, durableProject, MAIN, runEvents, type DurableProject, serve } from './durable-fixture.js';

const children: ChildProcess[] = [];
let p: DurableProject | null = null;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
});

const TURNS = [
  { text: 'sending a', toolCalls: [{ name: 'send', args: { key: 'a', ms: 0 } }] },
  { text: 'sending b', toolCalls: [{ name: 'send', args: { key: 'b', ms: 60_000 } }] },
  { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nsent\n' } }] },
  { text: 'report written' },
];

function statusFile(runId: string): { status: string; diagnosis: { code: string } | null } {
  return JSON.parse(readFileSync(join(p!.dir, 'data', 'runs', runId, 'runtime', 'run_status.json'), 'utf8'));
}

async function startRun(url: string): Promise<string> {
  const created = await postJson(`${url}/api/runs`, { plugin: 'worker', input: {} });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body.run_id as string;
}

describe.runIf(existsSync(MAIN))('serve stopped with SIGTERM mid-run', () => {
  it('leaves the run resumable (not cancelled); the next serve resumes it and it completes, its stream continued', async () => {
    p = durableProject(TURNS);
    // no grace: the call still running when the server stops is left unfinished
    const first = await serve(p.dir, children, ['--drain-s', '0']);
    const runId = await startRun(first.url);
    expect(await eventually(() => p!.effects().includes('start send:b'), 30_000)).toBe(true);
    const seen = await readSse(`${first.url}/api/runs/${runId}/events`, { stopWhen: (r) => r.events.length > 0 });
    const lastSeen = seen.events.at(-1)!.id!;
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // left as it was: not ended, no terminal event
    expect(statusFile(runId).status).toBe('tool_executing');
    expect(runEvents(p.dir, runId).filter((e) => e.stream === 'run' && /^run\.(completed|failed|cancelled)$/.test(String(e.data.type)))).toEqual([]);
    p.release();

    const second = await serve(p.dir, children);
    expect(await eventually(() => statusFile(runId).status === 'completed', 30_000), second.out()).toBe(true);
    expect(await eventually(() => runEvents(p!.dir, runId).some((e) => e.stream === 'run' && e.data.type === 'run.completed'), 10_000)).toBe(true);
    expect((await getJson(`${second.url}/api/runs/${runId}`)).body.final_answer).toBe('report written');
    expect(p.effects().filter((l) => l === 'start send:a')).toHaveLength(1);
    // the call that was running when the server stopped ran once and is not run again: the model is told
    expect(p.effects().filter((l) => l === 'start send:b')).toHaveLength(1);
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    const resumed = events.filter((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect(resumed.map((e) => (e.data as { attempt: number }).attempt)).toEqual([1]);
    expect(events.find((e) => e.stream === 'tool' && e.data.phase === 'result' && e.data.name === 'send' && e.data.isError)?.data).toMatchObject({
      diagnosis: { code: 'interrupted_during_call' },
    });
    expect(readFileSync(join(p.dir, 'data', 'runs', runId, 'artifacts', 'report.md'), 'utf8')).toContain('# Done');

    // a client that reconnects with Last-Event-ID from before the stop reads what a fresh one reads after it
    const fresh = await readSse(`${second.url}/api/runs/${runId}/events`);
    const again = await readSse(`${second.url}/api/runs/${runId}/events`, { headers: { 'Last-Event-ID': lastSeen } });
    const at = fresh.events.findIndex((e) => e.id === lastSeen);
    expect(at).toBeGreaterThan(0);
    expect(again.events).toEqual(fresh.events.slice(at + 1));
  }, 120_000);

  it('cancels a run whose agent says durability: interrupt, as before', async () => {
    p = durableProject(TURNS, { agentExtra: 'durability: interrupt' });
    const first = await serve(p.dir, children);
    const runId = await startRun(first.url);
    expect(await eventually(() => p!.effects().includes('start send:b'), 30_000)).toBe(true);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(statusFile(runId).status).toBe('cancelled');
    expect(checkEventLog(runEvents(p.dir, runId))).toEqual([]);
  }, 60_000);
});
