/**
 * A `runtrail serve` stopped across a fire time: with `missed: run_once` the next start runs that fire
 * time once; with `missed: skip` it records the skip and runs nothing. Real processes of the built CLI.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MAIN } from '../distributed/cluster-helpers.js';
import { getJson, postJson } from '../server/helpers.js';

let dir = '';
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function serve(projectDir: string): Promise<{ url: string; stop(): Promise<void>; out(): string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_') && !k.startsWith('OTEL_')) env[k] = v;
  const child = spawn(process.execPath, [MAIN, 'serve', '--port', '0', '--project', projectDir], {
    cwd: projectDir,
    env: { ...env, NO_COLOR: '1', HOME: projectDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  await vi.waitFor(() => expect(out).toMatch(/on (http:\/\/\S+)/), { timeout: 30_000, interval: 100 });
  return {
    url: /on (http:\/\/\S+)/.exec(out)![1],
    out: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe('a server stopped across a fire time', () => {
  it('runs the missed fire time once with run_once, and not at all with skip', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rt-restart-'));
    mkdirSync(join(dir, '.runtrail', 'agents'), { recursive: true });
    // an agent answered by a scripted model: no provider needed
    writeFileSync(join(dir, '.runtrail', 'agents', 'note.md'), '---\nname: note\ndescription: writes a line\nmodel: script:note.turns.json\n---\nSay ok.\n');
    writeFileSync(join(dir, '.runtrail', 'agents', 'note.turns.json'), JSON.stringify([{ text: 'ok' }]));
    const first = await serve(dir);
    // croner fires on whole seconds
    const at = new Date(Math.ceil((Date.now() + 2500) / 1000) * 1000).toISOString();
    const once = await postJson(`${first.url}/api/schedules`, { agent: 'note', at, goal: 'once' });
    const skip = await postJson(`${first.url}/api/schedules`, { agent: 'note', at, goal: 'skipped', missed: 'skip' });
    expect([once.status, skip.status], JSON.stringify([once.body, skip.body])).toEqual([201, 201]);
    expect(once.body.next_run_at).toBe(at);
    await first.stop();
    // the fire time passes while no Runtrail runs
    await new Promise((r) => setTimeout(r, Date.parse(at) - Date.now() + 2500));

    const second = await serve(dir);
    try {
      const onceId = once.body.schedule_id as string;
      await vi.waitFor(async () => expect((await getJson(`${second.url}/api/schedules/${onceId}`)).body.last_run?.run_status).toBe('completed'), {
        timeout: 20_000,
        interval: 200,
      });
      const s1 = (await getJson(`${second.url}/api/schedules/${onceId}`)).body;
      expect(s1.runs).toHaveLength(1);
      expect(s1.runs[0]).toMatchObject({ fire_time: at, outcome: 'started' });
      expect(s1.runs[0].detail).toMatch(/1 fire time\(s\) passed while no Runtrail was running.*run once/);
      expect(s1.next_run_at).toBeNull();
      const s2 = (await getJson(`${second.url}/api/schedules/${skip.body.schedule_id}`)).body;
      expect(s2.runs).toEqual([expect.objectContaining({ fire_time: at, outcome: 'skipped', reason: 'missed' })]);
      // exactly one run, and it is the run_once schedule's
      const runs = (await getJson(`${second.url}/api/runs`)).body.runs;
      expect(runs.map((r: { trigger?: { schedule_id: string; fire_time: string } }) => r.trigger)).toEqual([
        { type: 'schedule', schedule_id: onceId, fire_time: at },
      ]);
      expect(second.out()).toMatch(/skipped: 1 fire time\(s\) passed while no Runtrail was running.*missed: skip/);
    } finally {
      await second.stop();
    }
  }, 90_000);
});
