/**
 * `runtrail run` killed with SIGKILL at each kind of point, then `runtrail resume <run_id>`: the run
 * completes from its checkpoint, a finished call is not run again, the call that was running is run
 * again only when it is safe to, and the event log goes on with no gap and one end.
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from '../tools/helpers.js';
import { checkEventLog, durableProject, killHard, MAIN, runEvents, runtrail, type DurableProject } from './durable-fixture.js';

const children: ChildProcess[] = [];
let p: DurableProject | null = null;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
});

const SEND_A = { name: 'send', args: { key: 'a', ms: 0 } };
const REPORT = { name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nall sent\n' } };

function turnsWith(slow: unknown): unknown[] {
  return [{ text: 'sending a', toolCalls: [SEND_A] }, slow, { toolCalls: [REPORT] }, { text: 'report written' }];
}

async function killAt(proj: DurableProject, when: () => boolean): Promise<string> {
  const first = runtrail(proj.dir, ['run', 'worker', '--data-dir', 'data', '--json'], children);
  expect(await eventually(when, 30_000), first.out()).toBe(true);
  await killHard(first.child);
  const id = /"run_id":"(run_[0-9_]+)"|(run_\d{8}_\d{6}_\d{6})/.exec(first.out() + readRunIds(proj).join(' '));
  return (id?.[1] ?? id?.[2])!;
}

function readRunIds(proj: DurableProject): string[] {
  const d = join(proj.dir, 'data', 'runs');
  return existsSync(d) ? readdirSync(d) : [];
}

async function resumeToEnd(proj: DurableProject, runId: string) {
  proj.release();
  const again = runtrail(proj.dir, ['resume', runId, '--data-dir', 'data'], children);
  const code = await again.exited;
  const status = JSON.parse(readFileSync(join(proj.dir, 'data', 'runs', runId, 'runtime', 'run_status.json'), 'utf8'));
  return { code, out: again.out(), status, events: runEvents(proj.dir, runId) };
}

describe.runIf(existsSync(MAIN))('a CLI run killed with SIGKILL, resumed', () => {
  it('during a slow call that is not safe to repeat: not run again, the model is told, the run completes', async () => {
    p = durableProject(turnsWith({ text: 'sending b', toolCalls: [{ name: 'send', args: { key: 'b', ms: 60_000 } }] }));
    const runId = await killAt(p, () => p!.effects().includes('start send:b'));
    const r = await resumeToEnd(p, runId);
    expect(r.status.status, r.out).toBe('completed');
    expect(p.effects().filter((l) => l.startsWith('start send:a'))).toHaveLength(1);
    expect(p.effects().filter((l) => l.startsWith('start send:b'))).toHaveLength(1);
    expect(checkEventLog(r.events)).toEqual([]);
    const resumed = r.events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect(resumed?.data).toMatchObject({ attempt: 1, diagnosis: { code: 'resumed', detail: expect.stringContaining('interrupted_during_call') } });
    const b = r.events.find((e) => e.stream === 'tool' && e.data.phase === 'result' && e.data.name === 'send' && e.data.isError);
    expect(b?.data).toMatchObject({ diagnosis: { code: 'interrupted_during_call' } });
    expect(existsSync(join(p.dir, 'data', 'runs', runId, 'artifacts', 'report.md'))).toBe(true);
    const metrics = JSON.parse(readFileSync(join(p.dir, 'data', 'runs', runId, 'runtime', 'metrics.json'), 'utf8'));
    expect(metrics.resumes).toBe(1);
  }, 120_000);
});

describe.runIf(existsSync(MAIN))('a CLI run killed with SIGKILL at other points, resumed', () => {
  it('during a read-only call: it is run again, the finished call before it is not', async () => {
    p = durableProject(turnsWith({ toolCalls: [{ name: 'lookup', args: { key: 'q', ms: 60_000 } }] }));
    const runId = await killAt(p, () => p!.effects().includes('start lookup:q'));
    const r = await resumeToEnd(p, runId);
    expect(r.status.status, r.out).toBe('completed');
    expect(p.effects().filter((l) => l === 'start send:a')).toHaveLength(1);
    expect(p.effects().filter((l) => l === 'start lookup:q')).toHaveLength(2);
    expect(checkEventLog(r.events)).toEqual([]);
    const resumed = r.events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect(resumed?.data).toMatchObject({ diagnosis: { detail: expect.stringContaining('lookup') } });
    expect((resumed?.data as { diagnosis: { detail: string } }).diagnosis.detail).toContain('run again');
  }, 120_000);

  it('during a model turn: its partial text stays in the log marked discarded, the turn is redone, what it cost is counted', async () => {
    const long = Array.from({ length: 30 }, (_, i) => `part${i} `).join('');
    p = durableProject(turnsWith({ text: long, chunkDelayMs: 100, toolCalls: [{ name: 'send', args: { key: 'b', ms: 0 } }] }));
    const runsDir = join(p.dir, 'data', 'runs');
    const streaming = () =>
      readRunIds(p!).some(
        (id) =>
          existsSync(join(runsDir, id, 'runtime', 'events.jsonl')) &&
          readFileSync(join(runsDir, id, 'runtime', 'events.jsonl'), 'utf8').includes('"delta":"part3'),
      );
    const runId = await killAt(p, streaming);
    const r = await resumeToEnd(p, runId);
    expect(r.status.status, r.out).toBe('completed');
    expect(p.effects().filter((l) => l === 'start send:b')).toHaveLength(1);
    expect(checkEventLog(r.events)).toEqual([]);
    const resumed = r.events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    const d = resumed?.data as { discardFromSeq: number | null; fromSeq: number; seq?: number };
    expect(d.discardFromSeq).not.toBeNull();
    // the discarded deltas are the cut turn's: before the resume, after the checkpoint
    const discarded = r.events.filter((e) => e.stream === 'assistant' && e.seq >= d.discardFromSeq! && e.seq < resumed!.seq);
    expect(discarded.length).toBeGreaterThan(0);
    expect(d.fromSeq).toBeLessThan(d.discardFromSeq!);
    const metrics = JSON.parse(readFileSync(join(runsDir, runId, 'runtime', 'metrics.json'), 'utf8'));
    expect(metrics.lost_to_resumes.turns).toBe(1);
  }, 120_000);

  it('between two turns (the next model call sent, nothing streamed yet): the turn is redone, nothing is discarded', async () => {
    p = durableProject(turnsWith({ delayMs: 2_000, text: 'after a pause', toolCalls: [{ name: 'send', args: { key: 'b', ms: 0 } }] }));
    const runsDir = join(p.dir, 'data', 'runs');
    const secondTurn = () =>
      readRunIds(p!).some(
        (id) =>
          existsSync(join(runsDir, id, 'runtime', 'events.jsonl')) &&
          (readFileSync(join(runsDir, id, 'runtime', 'events.jsonl'), 'utf8').match(/"stream":"model","data":\{"phase":"start"/g) ?? []).length === 2,
      );
    const runId = await killAt(p, secondTurn);
    const r = await resumeToEnd(p, runId);
    expect(r.status.status, r.out).toBe('completed');
    expect(checkEventLog(r.events)).toEqual([]);
    const resumed = r.events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect(resumed?.data).toMatchObject({ discardFromSeq: null });
    expect(p.effects().filter((l) => l === 'start send:a')).toHaveLength(1);
    expect(p.effects().filter((l) => l === 'start send:b')).toHaveLength(1);
    const metrics = JSON.parse(readFileSync(join(runsDir, runId, 'runtime', 'metrics.json'), 'utf8'));
    expect(metrics.lost_to_resumes.turns).toBe(1);
  }, 120_000);

  it('after a turn of parallel read-only calls (one checkpoint step for all their results), during the next model turn: none is run again', async () => {
    const lookups = ['a', 'b', 'c'].map((key) => ({ name: 'lookup', args: { key, ms: 0 } }));
    p = durableProject([
      { text: 'looking up', toolCalls: lookups },
      { delayMs: 2_000, text: 'after a pause', toolCalls: [REPORT] },
      { text: 'report written' },
    ]);
    const runsDir = join(p.dir, 'data', 'runs');
    const secondTurn = () =>
      readRunIds(p!).some(
        (id) =>
          existsSync(join(runsDir, id, 'runtime', 'events.jsonl')) &&
          (readFileSync(join(runsDir, id, 'runtime', 'events.jsonl'), 'utf8').match(/"stream":"model","data":\{"phase":"start"/g) ?? []).length === 2,
      );
    const runId = await killAt(p, secondTurn);
    const r = await resumeToEnd(p, runId);
    expect(r.status.status, r.out).toBe('completed');
    for (const key of ['a', 'b', 'c']) expect(p.effects().filter((l) => l === `start lookup:${key}`)).toHaveLength(1);
    expect(checkEventLog(r.events)).toEqual([]);
    const metrics = JSON.parse(readFileSync(join(runsDir, runId, 'runtime', 'metrics.json'), 'utf8'));
    expect(metrics.tool_calls.by_name).toEqual({ lookup: 3, write_artifact: 1 });
    expect(metrics.lost_to_resumes.turns).toBe(1);
  }, 120_000);

  it('runtrail runs marks the killed run resumable, and `run <agent> --resume` takes it up (not a new run)', async () => {
    p = durableProject(turnsWith({ toolCalls: [{ name: 'lookup', args: { key: 'q', ms: 60_000 } }] }));
    const runId = await killAt(p, () => p!.effects().includes('start lookup:q'));
    const list = runtrail(p.dir, ['runs', '--data-dir', 'data'], children);
    await list.exited;
    expect(list.out()).toMatch(new RegExp(`${runId}\\s+\\S+ \\(resumable\\)`));
    p.release();
    const again = runtrail(p.dir, ['run', 'worker', '--resume', '--data-dir', 'data'], children);
    expect(await again.exited, again.out()).toBe(0);
    expect(readRunIds(p)).toEqual([runId]);
    expect(JSON.parse(readFileSync(join(p.dir, 'data', 'runs', runId, 'runtime', 'run_status.json'), 'utf8')).status).toBe('completed');
    expect(checkEventLog(runEvents(p.dir, runId))).toEqual([]);
  }, 120_000);

  it('a damaged checkpoint fails the resume with a clear diagnosis and the run ends interrupted, never with a wrong conversation', async () => {
    p = durableProject(turnsWith({ toolCalls: [{ name: 'lookup', args: { key: 'q', ms: 60_000 } }] }));
    const runId = await killAt(p, () => p!.effects().includes('start lookup:q'));
    const file = join(p.dir, 'data', 'runs', runId, 'runtime', 'checkpoint.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[1] = lines[1].replace('"k":"step"', '"k":"stap"');
    writeFileSync(file, lines.join('\n'));
    const r = await resumeToEnd(p, runId);
    expect(r.status.status).toBe('failed');
    expect(r.status.diagnosis).toMatchObject({ code: 'interrupted', summary: expect.stringContaining('checkpoint is damaged at line 2') });
    expect(r.status.diagnosis.detail).toMatch(/checksum/);
    expect(checkEventLog(r.events)).toEqual([]);
    expect(p.effects().filter((l) => l === 'start lookup:q')).toHaveLength(1);
  }, 120_000);

  it('a run resumed max_resumes times is not resumed again: it ends interrupted saying why', async () => {
    p = durableProject(turnsWith({ toolCalls: [{ name: 'lookup', args: { key: 'q', ms: 60_000 } }] }), { config: { durability: { max_resumes: 0 } } });
    const runId = await killAt(p, () => p!.effects().includes('start lookup:q'));
    const list = runtrail(p.dir, ['runs', '--data-dir', 'data'], children);
    await list.exited;
    const r = await resumeToEnd(p, runId);
    expect(r.status.status).toBe('failed');
    expect(r.status.diagnosis.summary).toContain('durability.max_resumes is 0');
    expect(checkEventLog(r.events)).toEqual([]);
  }, 120_000);
});
