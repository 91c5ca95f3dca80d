/**
 * A `write_artifact` call the crash cut short: its started record holds the size and hash of the
 * file it meant to write. On resume a file that is whole on the disk counts as the call finished
 * (its result given to the model, the call not run again); a file cut short is written again.
 *
 * The window between the file's write and the call's finished record is microseconds wide: the test
 * kills the process for real later (during a slow read-only call), then cuts the run's records back
 * to that window — the checkpoint after the call's started record, the events after its start event
 * — which is what a kill there leaves on the disk.
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

const REPORT = '# Done\n\nall written, in one go\n';
const TURNS = [
  { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: REPORT } }] },
  { toolCalls: [{ name: 'lookup', args: { key: 'q', ms: 60_000 } }] },
  { text: 'report written' },
];

/** Kills the run during its slow lookup, then leaves its records as a kill right after the report's write would. */
async function killAfterReportWrite(proj: DurableProject): Promise<{ runId: string; root: string; callId: string }> {
  const first = runtrail(proj.dir, ['run', 'worker', '--data-dir', 'data'], children);
  expect(await eventually(() => proj.effects().includes('start lookup:q'), 30_000), first.out()).toBe(true);
  await killHard(first.child);
  const runId = readdirSync(join(proj.dir, 'data', 'runs'))[0];
  const root = join(proj.dir, 'data', 'runs', runId);
  const cp = join(root, 'runtime', 'checkpoint.jsonl');
  const lines = readFileSync(cp, 'utf8').split('\n');
  const started = lines.findIndex((l) => l.includes('"phase":"started"') && l.includes('"name":"write_artifact"'));
  expect(started).toBeGreaterThan(0);
  expect(lines[started]).toContain('"sha256"');
  writeFileSync(cp, `${lines.slice(0, started + 1).join('\n')}\n`);
  const events = join(root, 'runtime', 'events.jsonl');
  const evLines = readFileSync(events, 'utf8').split('\n');
  const start = evLines.findIndex((l) => l.includes('"stream":"tool"') && l.includes('"phase":"start"') && l.includes('"name":"write_artifact"'));
  expect(start).toBeGreaterThan(0);
  writeFileSync(events, `${evLines.slice(0, start + 1).join('\n')}\n`);
  const callId = JSON.parse(evLines[start]).data.toolCallId as string;
  return { runId, root, callId };
}

async function resume(proj: DurableProject, runId: string, root: string) {
  proj.release();
  const again = runtrail(proj.dir, ['resume', runId, '--data-dir', 'data'], children);
  expect(await again.exited, again.out()).toBe(0);
  const status = JSON.parse(readFileSync(join(root, 'runtime', 'run_status.json'), 'utf8'));
  return { status, events: runEvents(proj.dir, runId), out: again.out() };
}

describe.runIf(existsSync(MAIN))('a write_artifact call cut short by a SIGKILL', () => {
  it('whose file is whole on the disk counts as finished: not written again, its result given to the model', async () => {
    p = durableProject(TURNS);
    const { runId, root, callId } = await killAfterReportWrite(p);
    expect(readFileSync(join(root, 'artifacts', 'report.md'), 'utf8')).toBe(REPORT);
    const r = await resume(p, runId, root);
    expect(r.status.status, r.out).toBe('completed');
    expect(checkEventLog(r.events)).toEqual([]);
    const ofCall = r.events.filter((e) => e.stream === 'tool' && 'toolCallId' in e.data && e.data.toolCallId === callId);
    // the dead attempt's start, then the result settled from the disk: no second start (no second write)
    expect(ofCall.map((e) => (e.data as { phase: string }).phase)).toEqual(['start', 'result']);
    expect(ofCall[1].data).toMatchObject({ isError: false, details: { path: 'report.md', bytes: Buffer.byteLength(REPORT), checked: 'markdown' } });
    const resumed = r.events.find((e) => e.stream === 'lifecycle' && e.data.phase === 'resumed');
    expect((resumed?.data as { diagnosis: { detail: string } }).diagnosis.detail).toContain(`write_artifact (${callId}) was running`);
    // the next turn is the model's, with the settled result: the lookup runs (again), the run ends
    expect(readFileSync(join(root, 'artifacts', 'report.md'), 'utf8')).toBe(REPORT);
  }, 120_000);

  it('whose file is cut short is written again, whole', async () => {
    p = durableProject(TURNS);
    const { runId, root, callId } = await killAfterReportWrite(p);
    writeFileSync(join(root, 'artifacts', 'report.md'), REPORT.slice(0, 10));
    const r = await resume(p, runId, root);
    expect(r.status.status, r.out).toBe('completed');
    expect(checkEventLog(r.events)).toEqual([]);
    const ofCall = r.events.filter((e) => e.stream === 'tool' && 'toolCallId' in e.data && e.data.toolCallId === callId);
    expect(ofCall.map((e) => (e.data as { phase: string }).phase)).toEqual(['start', 'start', 'result']);
    expect(readFileSync(join(root, 'artifacts', 'report.md'), 'utf8')).toBe(REPORT);
  }, 120_000);
});
