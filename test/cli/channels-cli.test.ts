/**
 * Chat channels through the built binary: `validate` names a bad channels.json's file and key,
 * `channels check` and `doctor` ask the service who the bot is (a wrong token fails without showing
 * it), `serve` starts the channels beside the HTTP server (GET /api/channels, /metrics) and keeps
 * serving when one channel's service is away, and `channels run` answers chats without the server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { FakeTelegram } from '../channels/fakes/fake-telegram.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';
import { getJson } from '../server/helpers.js';
import { eventually } from '../tools/helpers.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
const children: ChildProcess[] = [];
const fixtures: ProjectFixture[] = [];
const fakes: FakeTelegram[] = [];
let home = '';

afterEach(async () => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const f of fixtures.splice(0)) f.cleanup();
  for (const f of fakes.splice(0)) await f.stop();
  if (home) rmSync(home, { recursive: true, force: true });
  home = '';
});

function runtrail(args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  home ||= mkdtempSync(join(tmpdir(), 'runtrail-home-'));
  const clean: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_')) clean[k] = v;
  const child = spawn(process.execPath, [MAIN, ...args], { cwd, env: { ...clean, HOME: home, NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const done = new Promise<{ code: number | null; out: string; err: string }>((r) => child.once('close', (code) => r({ code, out, err })));
  return { child, done, out: () => out, err: () => err };
}

/** A read-only tool that waits until the test creates <project>/release (safe to run again after a resume). */
const LOOKUP_PLUGIN = `import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
export default {
  name: 'lookup',
  tools: [{
    name: 'lookup', description: 'Looks something up', readOnly: true,
    parameters: { type: 'object', properties: {} },
    execute: (_a, ctx) => new Promise((r) => {
      writeFileSync(join(process.cwd(), 'lookup.started'), '');
      const tick = () => (existsSync(join(process.cwd(), 'release')) || ctx?.signal?.aborted ? r('42') : setTimeout(tick, 20));
      tick();
    }),
  }],
};
`;

/** Whether `.runtrail/runs/<any>/runtime/checkpoint.jsonl` holds `text` (the run can go on from there). */
function checkpointHolds(dir: string, text: string): boolean {
  const runs = join(dir, '.runtrail', 'runs');
  try {
    return readdirSync(runs).some((id) => {
      const file = join(runs, id, 'runtime', 'checkpoint.jsonl');
      return existsSync(file) && readFileSync(file, 'utf8').includes(text);
    });
  } catch {
    return false; // no run yet
  }
}

async function fake(): Promise<FakeTelegram> {
  const f = new FakeTelegram();
  await f.start();
  fakes.push(f);
  return f;
}

function project(channels: unknown) {
  const p = makeProject({
    '.runtrail/channels.json': JSON.stringify(channels),
    '.runtrail/agents/chat.md': agentFile('name: chat\ndescription: chats\nmodel: script:chat.turns.json'),
    '.runtrail/agents/chat.turns.json': JSON.stringify([{ text: 'Hi from the chat agent.' }]),
  });
  fixtures.push(p);
  return p;
}

describe.runIf(existsSync(MAIN))('chat channels through the CLI', { timeout: 120_000 }, () => {
  it('validate: a bad channels.json is exit 2 with one line per problem naming the file and the key', async () => {
    const p = project({ telegram: { token: '${NOT_SET_TG}', allow_from: '42', agents: ['nope'] } });
    const r = await runtrail(['validate'], p.dir).done;
    expect(r.code).toBe(2);
    expect(r.out).toContain('.runtrail/channels.json: telegram.allow_from: must be array');
  });

  it('channels check and doctor ask Telegram who the bot is; a wrong token fails (exit 1) and is never printed', async () => {
    const tg = await fake();
    const p = project({ telegram: { token: '${TG}', api_root: tg.url, allow_from: [1] } });
    const ok = await runtrail(['channels', 'check'], p.dir, { TG: tg.token }).done;
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toBe(`✓ channel telegram: telegram: bot @runtrail_test_bot (id 7000001) at ${tg.url}\n`);
    const wrong = '654321:WRONG-token_value';
    const bad = await runtrail(['channels', 'check', '--json'], p.dir, { TG: wrong }).done;
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.out)).toMatchObject({ ok: false, checks: [{ name: 'channel telegram', status: 'fail' }] });
    expect(bad.out).toMatch(/Unauthorized/);
    const doctor = await runtrail(['doctor'], p.dir, { TG: wrong }).done;
    expect(doctor.code).toBe(1);
    expect(doctor.out).toMatch(/^✗ channel telegram: telegram: .*Unauthorized/m);
    for (const text of [bad.out, bad.err, doctor.out, doctor.err]) expect(text).not.toContain('WRONG-token_value');
    const list = await runtrail(['channels', 'list'], p.dir, { TG: tg.token }).done;
    expect(list.out).toBe('✓ telegram (telegram, .runtrail/channels.json): 1 allowed id(s), default agent chat\n');
  });

  it('serve starts the channels: a chat is answered, GET /api/channels and /metrics show each; a channel whose service is away retries and stops nothing', async () => {
    const tg = await fake();
    const p = project({
      telegram: { token: '${TG}', api_root: tg.url, allow_from: [555], poll_timeout_s: 1 },
      // nothing listens on port 9: this bot cannot connect
      away: { type: 'telegram', token: '${TG}', api_root: 'http://127.0.0.1:9', allow_from: [555] },
    });
    const s = runtrail(['serve', '--port', '0'], p.dir, { TG: tg.token });
    await eventually(() => /serving on (http:\/\/\S+)/.test(s.out()), 30_000);
    const url = /serving on (http:\/\/\S+)/.exec(s.out())![1];
    tg.userMessage({ chatId: 555, from: 555, text: 'hello' });
    expect(await eventually(() => tg.messagesIn(555).some((m) => m.text === 'Hi from the chat agent.'), 30_000), s.err()).toBe(true);
    let channels: Array<{ name: string; connected: boolean; messages_in: number; last_error: string | null }> = [];
    await eventually(() => {
      void getJson(`${url}/api/channels`).then((r) => (channels = r.body.channels));
      return channels.find((c) => c.name === 'away')?.last_error != null && channels.find((c) => c.name === 'telegram')?.messages_in === 1;
    }, 30_000);
    expect(channels.find((c) => c.name === 'telegram')).toMatchObject({ connected: true, messages_in: 1 });
    expect(channels.find((c) => c.name === 'away')).toMatchObject({ connected: false });
    expect(channels.find((c) => c.name === 'away')!.last_error).toMatch(/cannot start: .*ECONNREFUSED/);
    const metrics = await fetch(`${url}/metrics`).then((r) => r.text());
    expect(metrics).toContain('runtrail_channel_connected{channel="telegram",type="telegram"} 1');
    expect(metrics).toContain('runtrail_channel_connected{channel="away",type="telegram"} 0');
    expect(metrics).toContain('runtrail_channel_messages_in_total{channel="telegram",type="telegram"} 1');
    s.child.kill('SIGTERM');
    const r = await s.done;
    expect(r.code).toBe(0);
    // the bot token is in every URL grammY calls; no log line shows it
    expect(r.err + r.out + JSON.stringify(channels)).not.toContain(tg.token.split(':')[1]);
  });

  it('channels run answers chats without the HTTP server', async () => {
    const tg = await fake();
    const p = project({ telegram: { token: '${TG}', api_root: tg.url, allow_from: [555], poll_timeout_s: 1 } });
    const c = runtrail(['channels', 'run'], p.dir, { TG: tg.token });
    await eventually(() => /channels running: telegram/.test(c.out()), 30_000);
    expect(c.out()).not.toMatch(/http:\/\//);
    tg.userMessage({ chatId: 555, from: 555, text: 'hello' });
    expect(await eventually(() => tg.messagesIn(555).some((m) => m.text === 'Hi from the chat agent.'), 30_000), c.err()).toBe(true);
    c.child.kill('SIGTERM');
    expect((await c.done).code).toBe(0);
  });

  it('the process dies mid-reply (SIGKILL): started again, the chat is told the run was interrupted, in the same message', async () => {
    const tg = await fake();
    const p = project({ telegram: { token: '${TG}', api_root: tg.url, allow_from: [555], poll_timeout_s: 1 } });
    p.write('.runtrail/agents/slow.md', agentFile('name: slow\ndescription: slow\nmodel: script:slow.turns.json\ndurability: interrupt'));
    p.write('.runtrail/agents/slow.turns.json', JSON.stringify([{ text: 'never reached', delayMs: 120_000 }]));
    const first = runtrail(['channels', 'run'], p.dir, { TG: tg.token });
    await eventually(() => /channels running/.test(first.out()), 30_000);
    tg.userMessage({ chatId: 555, from: 555, text: '/run slow -- take your time' });
    expect(await eventually(() => tg.messagesIn(555).length === 1, 30_000), first.err()).toBe(true);
    // killed once the preview is on record (its message id in the reply's delivery file): a kill between
    // Telegram's answer and that record leaves a send that may have landed, whose id nobody knows, and
    // the answer then comes as a message of its own, by design
    const deliveries = join(p.dir, '.runtrail', 'channels', 'telegram', 'deliveries');
    const previewRecorded = () => {
      try {
        return readdirSync(deliveries).some(
          (f) =>
            f.endsWith('.json') &&
            (JSON.parse(readFileSync(join(deliveries, f), 'utf8')) as { sent: Record<string, string> }).sent.preview ===
              String(tg.messagesIn(555)[0].message_id),
        );
      } catch {
        return false; // not written yet
      }
    };
    expect(await eventually(previewRecorded, 30_000), first.err()).toBe(true);
    first.child.kill('SIGKILL');
    await first.done;
    const again = runtrail(['channels', 'run'], p.dir, { TG: tg.token });
    expect(await eventually(() => /interrupted/i.test(tg.messagesIn(555)[0]?.text ?? ''), 30_000), again.err()).toBe(true);
    expect(tg.calls('sendMessage')).toHaveLength(1);
    expect(tg.messagesIn(555)[0].text).not.toMatch(/^⏳/);
    again.child.kill('SIGTERM');
    expect((await again.done).code).toBe(0);
  });

  it('the process dies mid-run (SIGKILL) in a run that can be resumed: started again, the same message says it resumes, then holds the answer, sent once', async () => {
    const tg = await fake();
    const p = project({ telegram: { token: '${TG}', api_root: tg.url, allow_from: [555], poll_timeout_s: 1 } });
    p.write('.runtrail/plugins/lookup.mjs', LOOKUP_PLUGIN);
    p.write('.runtrail/agents/steps.md', agentFile('name: steps\ndescription: looks things up\nmodel: script:steps.turns.json\ntools: [lookup]'));
    p.write(
      '.runtrail/agents/steps.turns.json',
      JSON.stringify([{ text: 'Looking it up.', toolCalls: [{ name: 'lookup', args: {} }] }, { text: 'The answer is 42.' }]),
    );
    const first = runtrail(['channels', 'run'], p.dir, { TG: tg.token });
    await eventually(() => /channels running/.test(first.out()), 30_000);
    tg.userMessage({ chatId: 555, from: 555, text: '/run steps -- what is the answer?' });
    // killed while the lookup runs, once its call is in the checkpoint and the preview shows it
    const working = () => existsSync(join(p.dir, 'lookup.started')) && checkpointHolds(p.dir, '"lookup"') && /lookup/.test(tg.messagesIn(555)[0]?.text ?? '');
    expect(await eventually(working, 30_000), first.err()).toBe(true);
    const preview = tg.messagesIn(555)[0].message_id;
    first.child.kill('SIGKILL');
    await first.done;

    const again = runtrail(['channels', 'run'], p.dir, { TG: tg.token });
    // the run goes on (the lookup is read-only: run again, and waiting); the chat is told, in the same message
    expect(await eventually(() => /^⏳ resumed after a restart/.test(tg.messagesIn(555)[0]?.text ?? ''), 30_000), again.err()).toBe(true);
    p.write('release', '');
    expect(await eventually(() => (tg.messagesIn(555)[0]?.text ?? '').includes('The answer is 42.'), 30_000), again.err()).toBe(true);
    again.child.kill('SIGTERM');
    expect((await again.done).code).toBe(0);
    expect(tg.calls('sendMessage')).toHaveLength(1);
    expect(tg.messagesIn(555)).toHaveLength(1);
    const answer = tg.messagesIn(555)[0];
    expect(answer.message_id).toBe(preview);
    // the run's answer as it would be had nothing happened: no status line, nothing twice
    expect(answer.text).toBe('The answer is 42.');
    const edits = tg.calls('editMessageText').map((c) => c.params as { message_id: unknown; text: string });
    expect(edits.every((e) => String(e.message_id) === String(preview))).toBe(true);
    expect(edits.filter((e) => e.text.includes('The answer is 42.') && !e.text.startsWith('⏳'))).toHaveLength(1);
  });
});
