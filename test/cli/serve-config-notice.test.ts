/**
 * A schedule added while a server runs on the same data dir with an older config.json: the CLI says
 * the server has not seen the change (it fires with the settings it started with); nothing is said
 * when config.json is unchanged or the server is gone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { configStamp, writeServeStamp } from '../../src/cli/serve-stamp.js';
import { createChatPlugin } from '../../src/plugins/chat/chat-plugin.js';
import { Sink } from './sink.js';

let dir = '';
let home = '';
let server: ChildProcess | null = null;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'serve-notice-'));
  home = mkdtempSync(join(tmpdir(), 'serve-notice-home-'));
  mkdirSync(join(dir, '.runtrail'));
});
afterEach(() => {
  server?.kill('SIGKILL');
  server = null;
  rmSync(dir, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true });
});

const config = (allow: string) => writeFileSync(join(dir, '.runtrail', 'config.json'), JSON.stringify({ webhooks: { allow: [allow] } }));

async function addSchedule(): Promise<{ code: number; err: string }> {
  const stderr = new Sink();
  const deps: CliDeps = { agents: [createChatPlugin()], stdout: new Sink(), stderr, env: { HOME: home, PATH: '/usr/bin:/bin' }, cwd: dir };
  const code = await runCli(['schedules', 'add', 'chat', '--every', '1h', '--goal', 'hello'], deps);
  return { code, err: stderr.text };
}

describe('a schedule added beside a running server', () => {
  it('is told when config.json changed since the server loaded it, and only then', async () => {
    config('http://127.0.0.1:9000/*');
    // a real second process stands for the server that wrote the stamp
    server = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    const dataDir = join(dir, '.runtrail');
    writeServeStamp(dataDir, { pid: server.pid!, url: 'http://127.0.0.1:7777', config: configStamp(dir, home) });

    const same = await addSchedule();
    expect(same.code, same.err).toBe(0);
    expect(same.err).not.toContain('has not seen');

    config('http://127.0.0.1:9001/*');
    const changed = await addSchedule();
    expect(changed.code, changed.err).toBe(0);
    expect(changed.err).toContain(
      `runtrail: warning: the server running on this data dir (pid ${server.pid}, http://127.0.0.1:7777) has not seen the change to config.json`,
    );
    expect(changed.err).toContain('restart it, or run serve --watch');

    server.kill('SIGKILL');
    await new Promise((r) => server!.once('exit', r));
    const gone = await addSchedule();
    expect(gone.err).not.toContain('has not seen');
  }, 30_000);
});
