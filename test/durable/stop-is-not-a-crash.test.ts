/**
 * A stop on purpose (a deploy: SIGTERM to `serve`) is not a crash: the tool call in flight is given
 * --drain-s to finish, the run is left with one log line and taken up by the next start with one
 * more, and the attempt is not counted against durability.max_resumes. Bad durability settings and
 * a drain below 0 stop the command before any run starts (exit 2, naming the field and the value).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { postJson } from '../server/helpers.js';
import { eventually } from '../tools/helpers.js';
import { checkEventLog, durableProject, MAIN, runEvents, runtrail, serve, type DurableProject } from './durable-fixture.js';

const children: ChildProcess[] = [];
let p: DurableProject | null = null;
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
});

const TURNS = [
  { text: 'sending a', toolCalls: [{ name: 'send', args: { key: 'a', ms: 0 } }] },
  { text: 'sending b', toolCalls: [{ name: 'send', args: { key: 'b', ms: 1_500 } }] },
  { text: 'looking up', toolCalls: [{ name: 'lookup', args: { key: 'c', ms: 60_000 } }] },
  { toolCalls: [{ name: 'write_artifact', args: { path: 'report.md', content: '# Done\n\nsent\n' } }] },
  { text: 'report written' },
];

function status(runId: string): { status: string; diagnosis: { summary: string } | null } {
  return JSON.parse(readFileSync(join(p!.dir, 'data', 'runs', runId, 'runtime', 'run_status.json'), 'utf8'));
}

describe.runIf(existsSync(MAIN))('a stop on purpose is not a crash', () => {
  it('the call in flight finishes within --drain-s, the run is left and resumed with a line each, and max_resumes 0 does not end it', async () => {
    p = durableProject(TURNS, { config: { durability: { max_resumes: 0 } } });
    const first = await serve(p.dir, children, ['--drain-s', '30']);
    const created = await postJson(`${first.url}/api/runs`, { plugin: 'worker', input: {} });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const runId = created.body.run_id as string;
    expect(await eventually(() => p!.effects().includes('start send:b'), 30_000)).toBe(true);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    // the call that was running when the stop came finished: its effect is whole and its result recorded
    expect(p.effects()).toContain('done send:b');
    const leftLines = first
      .out()
      .split('\n')
      .filter((l) => l.includes(`run ${runId}`));
    expect(leftLines, first.out()).toHaveLength(1);
    expect(leftLines[0]).toMatch(/left to be resumed .*the server was stopped/);
    expect(runEvents(p.dir, runId).some((e) => e.stream === 'run' && /^run\.(completed|failed|cancelled)$/.test(String(e.data.type)))).toBe(false);

    p.release();
    const second = await serve(p.dir, children);
    expect(await eventually(() => status(runId).status === 'completed', 30_000), second.out()).toBe(true);
    const resumedLines = second
      .out()
      .split('\n')
      .filter((l) => l.includes(`run ${runId}`));
    expect(resumedLines, second.out()).toHaveLength(1);
    expect(resumedLines[0]).toMatch(/resumed from its checkpoint .*attempt 1: its last attempt was stopped on purpose/);
    // send b ran once and its result is the one the model got: nothing was cut short to be judged again
    expect(p.effects().filter((l) => l === 'start send:b')).toHaveLength(1);
    const events = runEvents(p.dir, runId);
    expect(checkEventLog(events)).toEqual([]);
    expect(events.filter((e) => e.stream === 'tool' && e.data.phase === 'result' && e.data.name === 'send')).toHaveLength(2);
    expect(events.filter((e) => e.stream === 'tool' && e.data.phase === 'result' && e.data.isError)).toEqual([]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 120_000);

  it('a crash after a stop is still counted: max_resumes 0 ends the killed run interrupted', async () => {
    p = durableProject(TURNS, { config: { durability: { max_resumes: 0 } } });
    const first = await serve(p.dir, children, ['--drain-s', '0']);
    const created = await postJson(`${first.url}/api/runs`, { plugin: 'worker', input: {} });
    const runId = created.body.run_id as string;
    expect(await eventually(() => p!.effects().includes('start send:b'), 30_000)).toBe(true);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const second = await serve(p.dir, children);
    expect(await eventually(() => p!.effects().includes('start lookup:c'), 30_000), second.out()).toBe(true);
    second.child.kill('SIGKILL');
    await second.exited;
    p.release();
    const third = await serve(p.dir, children);
    expect(await eventually(() => status(runId).status === 'failed', 30_000), third.out()).toBe(true);
    expect(status(runId).diagnosis?.summary).toContain('durability.max_resumes is 0');
    expect(third.out()).toMatch(new RegExp(`run ${runId} \\(worker\\) ended, not resumed: .*max_resumes is 0`));
    third.child.kill('SIGTERM');
    await third.exited;
  }, 120_000);
});

describe.runIf(existsSync(MAIN))('bad durability settings stop the command before any run', () => {
  for (const [value, says] of [
    [-1, 'durability.max_resumes: must be >= 0, got -1'],
    [1.5, 'durability.max_resumes: must be integer, got 1.5'],
    ['3', 'durability.max_resumes: must be integer, got "3"'],
  ] as const) {
    it(`config.json durability.max_resumes ${JSON.stringify(value)}: serve and run exit 2 naming the field and the value once`, async () => {
      p = durableProject(TURNS, { config: { durability: { max_resumes: value } } });
      for (const args of [
        ['serve', '--port', '0', '--data-dir', 'data'],
        ['run', 'worker', '--data-dir', 'data'],
      ]) {
        const r = runtrail(p.dir, args, children);
        expect(await r.exited, r.out()).toBe(2);
        expect(r.out().split(says).length - 1, r.out()).toBe(1);
        expect(r.out()).toContain('.runtrail/config.json');
      }
      expect(existsSync(join(p.dir, 'data', 'runs'))).toBe(false);
    }, 60_000);
  }

  it('serve and worker --drain-s below 0 exit 2 naming the option', async () => {
    p = durableProject(TURNS);
    for (const cmd of ['serve', 'worker']) {
      const r = runtrail(p.dir, [cmd, '--drain-s=-1', '--data-dir', 'data'], children);
      expect(await r.exited, r.out()).toBe(2);
      expect(r.out()).toContain('--drain-s must be a number ≥ 0, got "-1"');
    }
  }, 60_000);
});
