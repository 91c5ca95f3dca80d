/** `sandbox check` says whose settings it printed: config.json's "sandbox", or the defaults when no config.json sets one. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { runCli } from '../../src/cli/run-cli.js';
import { createChatPlugin } from '../../src/plugins/chat/chat-plugin.js';
import { Sink } from './sink.js';

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sandbox-label-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function firstLine(args: string[]): Promise<string> {
  const stdout = new Sink();
  const deps: CliDeps = { agents: [createChatPlugin()], stdout, stderr: new Sink(), env: { HOME: dir, PATH: '/usr/bin:/bin' }, cwd: dir };
  await runCli(args, deps);
  return stdout.text.split('\n')[0];
}

describe('sandbox check labels its policy', () => {
  it('as the defaults without a config.json, as config.json\'s once it sets "sandbox"', async () => {
    expect(await firstLine(['sandbox', 'check'])).toBe('sandbox of the default settings (no config.json sets "sandbox"):');
    expect(await firstLine(['sandbox', 'check', 'chat'])).toBe('sandbox of agent chat, within the default settings (no config.json sets "sandbox"):');
    mkdirSync(join(dir, '.runtrail'));
    writeFileSync(join(dir, '.runtrail', 'config.json'), JSON.stringify({ sandbox: { limits: { processes: 512 } } }));
    expect(await firstLine(['sandbox', 'check'])).toBe(`sandbox of config.json's "sandbox" settings:`);
  }, 60_000);
});
