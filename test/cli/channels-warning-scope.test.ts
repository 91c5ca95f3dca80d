/**
 * channels.json's problems (a token variable not set) are said by the commands that start or list
 * channels, not by every command; `channels --project DIR list` reads its options before the subcommand.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { createChatPlugin } from '../../src/plugins/chat/chat-plugin.js';
import { Sink } from './sink.js';

let dir = '';
let elsewhere = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'channels-scope-'));
  elsewhere = mkdtempSync(join(tmpdir(), 'channels-cwd-'));
  mkdirSync(join(dir, '.runtrail'));
  writeFileSync(join(dir, '.runtrail', 'channels.json'), JSON.stringify({ telegram: { token: '${TELEGRAM_BOT_TOKEN}' } }));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

async function cli(args: string[], cwd = dir) {
  const stdout = new Sink();
  const stderr = new Sink();
  const deps: CliDeps = { agents: [createChatPlugin()], stdout, stderr, env: { HOME: elsewhere, PATH: '/usr/bin:/bin' }, cwd };
  const code = await runCli(args, deps);
  return { code, out: stdout.text, err: stderr.text };
}

const WARNING = 'channels.json: telegram.token: uses ${TELEGRAM_BOT_TOKEN}, which is not set';

describe('the channels.json token warning', () => {
  it('is not printed by commands that start no channel', async () => {
    for (const args of [['agents'], ['runs'], ['skills']]) {
      const r = await cli(args);
      expect(r.code, `${args.join(' ')}: ${r.err}`).toBe(0);
      expect(r.err, args.join(' ')).not.toContain('channels.json');
    }
  });

  it('is printed by channels, whose --project may come before the subcommand', async () => {
    const r = await cli(['channels', '--project', dir, 'list'], elsewhere);
    expect(r.err).not.toContain('unknown channels command');
    // 1: a channel that cannot start (its token is not set)
    expect(r.code, r.err).toBe(1);
    expect(r.err).toContain(WARNING);
    expect(r.out).toContain('✗ telegram (telegram, .runtrail/channels.json)');
    const after = await cli(['channels', 'list', '--project', dir], elsewhere);
    expect(after.out).toBe(r.out);
  });
});
