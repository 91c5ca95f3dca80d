/**
 * `runtrail schedules` through the built binary: add (a bad one refused, naming the field), list,
 * pause, resume, run now (followed to its end, its trigger on the run), rm; declared schedules are
 * listed and `validate` reports a broken one; a running server fires what the CLI added.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';
import { getJson } from '../server/helpers.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
const children: ChildProcess[] = [];
let p: ProjectFixture | null = null;
let home = '';
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  p?.cleanup();
  p = null;
  if (home) rmSync(home, { recursive: true, force: true });
});

function runtrail(args: string[], cwd: string) {
  home ||= mkdtempSync(join(tmpdir(), 'runtrail-home-'));
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_') && !k.startsWith('OTEL_')) clean[k] = v;
  const child = spawn(process.execPath, [MAIN, ...args], { cwd, env: { ...clean, HOME: home, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const done = new Promise<{ code: number | null; out: string; err: string }>((r) => child.once('close', (code) => r({ code, out, err })));
  return { done, out: () => out };
}

const NOTE = agentFile(
  'name: note\ndescription: writes a line\nmodel: script:note.turns.json\ninput:\n  type: object\n  properties:\n    topic: { type: string }\n  additionalProperties: false',
  'Say ok.',
);

describe.runIf(existsSync(MAIN))('runtrail schedules', () => {
  it('add, list, pause, resume, run now, rm; a bad schedule is refused naming its field', async () => {
    p = makeProject({
      '.runtrail/agents/note.md': NOTE,
      '.runtrail/agents/note.turns.json': JSON.stringify([{ text: 'ok' }]),
      '.runtrail/schedules.json': JSON.stringify({ nightly: { agent: 'note', cron: '0 3 * * *', tz: 'Europe/Berlin' } }),
    });
    const bad = await runtrail(['schedules', 'add', 'note', '--cron', '0 25 * * *'], p.dir).done;
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/runtrail: cron: "0 25 \* \* \*" is not a cron pattern of 5 or 6 fields/);
    const badZone = await runtrail(['schedules', 'add', 'note', '--every', '1h', '--tz', 'Nowhere/City'], p.dir).done;
    expect(badZone.err).toMatch(/tz: unknown time zone "Nowhere\/City"/);

    const added = await runtrail(['schedules', 'add', 'note', '--every', '1h', '--goal', 'hourly', '--input', 'topic=news', '--json'], p.dir).done;
    expect(added.code, added.err).toBe(0);
    const s = JSON.parse(added.out) as { schedule_id: string; input: unknown; next_run_at: string };
    expect(s.input).toEqual({ topic: 'news' });
    const list = await runtrail(['schedules', 'list'], p.dir).done;
    expect(list.out).toContain(`${s.schedule_id}  note  every 1h  next ${s.next_run_at}  no run yet`);
    expect(list.out).toMatch(
      /nightly {2}note {2}cron "0 3 \* \* \*" \(Europe\/Berlin\) {2}next \S+T0[12]:00:00\.000Z {2}no run yet {2}\(\.runtrail\/schedules\.json\)/,
    );

    expect((await runtrail(['schedules', 'pause', s.schedule_id], p.dir).done).out).toContain('paused');
    expect((await runtrail(['schedules', 'resume', s.schedule_id], p.dir).done).out).toMatch(/next \d{4}-/);
    // a declared schedule is changed in its file, not here
    const rmDeclared = await runtrail(['schedules', 'rm', 'nightly'], p.dir).done;
    expect(rmDeclared.code).toBe(2);
    expect(rmDeclared.err).toMatch(/declared in \.runtrail\/schedules\.json: remove it there/);

    const now = await runtrail(['schedules', 'run', s.schedule_id], p.dir).done;
    expect(now.code, now.err).toBe(0);
    expect(now.out).toMatch(new RegExp(`▶ run_\\S+ · schedule ${s.schedule_id} · fire time`));
    expect(now.out).toMatch(/✓ run run_\S+ completed/);
    const after = JSON.parse((await runtrail(['schedules', 'list', '--json'], p.dir).done).out) as {
      schedules: Array<{ schedule_id: string; last_run: { run_id: string; run_status: string; manual: boolean } }>;
    };
    const mine = after.schedules.find((x) => x.schedule_id === s.schedule_id)!;
    expect(mine.last_run).toMatchObject({ run_status: 'completed', manual: true });
    const show = await runtrail(['show', mine.last_run.run_id, '--json'], p.dir).done;
    expect(JSON.parse(show.out).status.trigger).toEqual({ type: 'schedule', schedule_id: s.schedule_id, fire_time: expect.any(String) });

    expect((await runtrail(['schedules', 'rm', s.schedule_id], p.dir).done).out).toBe(`removed ${s.schedule_id}\n`);
    expect((await runtrail(['schedules', 'list'], p.dir).done).out).not.toContain(s.schedule_id);
  }, 60_000);

  it('validate reports a broken declared schedule and a broken webhooks config, by file and field', async () => {
    p = makeProject({
      '.runtrail/agents/note.md': agentFile('name: note\ndescription: writes a line\nmodel: script:note.turns.json\nschedule:\n  every: 100ms', 'Say ok.'),
      '.runtrail/schedules.json': JSON.stringify({ daily: { agent: 'ghost', cron: '0 6 * * *' }, Bad_Name: { agent: 'note', every: '1h' } }),
      '.runtrail/config.json': JSON.stringify({ webhooks: { allow: ['ftp://x'], every_run: [{ url: 'https://a.example.com/h', secret: 'nope' }] } }),
    });
    const r = await runtrail(['validate'], p.dir).done;
    expect(r.code).toBe(2);
    expect(r.out).toContain('.runtrail/schedules.json: daily.agent: unknown agent "ghost"');
    expect(r.out).toContain('.runtrail/schedules.json: Bad_Name: a schedule name is lowercase');
    expect(r.out).toContain('.runtrail/agents/note.md: schedule.every: must be at least 1s, got "100ms"');
    expect(r.out).toContain('config.json: webhooks.allow.0: "ftp://x" must be an http(s) URL pattern');
    expect(r.out).toContain('config.json: webhooks.every_run.0.secret: must be a Standard Webhooks secret');
  });

  it('a running server fires a schedule the CLI adds', async () => {
    p = makeProject({ '.runtrail/agents/note.md': NOTE, '.runtrail/agents/note.turns.json': JSON.stringify([{ text: 'ok' }]) });
    const server = runtrail(['serve', '--port', '0'], p.dir);
    await vi.waitFor(() => expect(server.out()).toMatch(/on (http:\/\/\S+)/), { timeout: 30_000 });
    const url = /on (http:\/\/\S+)/.exec(server.out())![1];
    const added = await runtrail(['schedules', 'add', 'note', '--every', '1s', '--json'], p.dir).done;
    const id = (JSON.parse(added.out) as { schedule_id: string }).schedule_id;
    await vi.waitFor(async () => expect((await getJson(`${url}/api/schedules/${id}`)).body.last_run?.run_status).toBe('completed'), {
      timeout: 20_000,
      interval: 250,
    });
  }, 60_000);
});
