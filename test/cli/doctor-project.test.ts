/**
 * `runtrail doctor` checks what a run of this project needs: its definitions, each MCP server
 * (a real server that answers, one that exits, one that never answers within the timeout), the
 * API keys of the configured models (present or not, the value never printed), and the sandbox.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/run-cli.js';
import type { CliDeps } from '../../src/cli/cli-io.js';
import { everythingStdio, fixture, NODE, serverProcesses } from '../mcp/helpers.js';
import { marker } from '../tools/helpers.js';
import { Sink } from './sink.js';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function project(files: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), 'doctor-project-'));
  mkdirSync(join(dir, 'home'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

async function doctor(args: string[], env: Record<string, string>) {
  const stdout = new Sink();
  const stderr = new Sink();
  const deps: CliDeps = { agents: [], stdout, stderr, env: { HOME: join(dir, 'home'), ...env }, cwd: dir };
  const code = await runCli(['doctor', ...args], deps);
  return { code, out: stdout.text, err: stderr.text };
}

const agent = (name: string, model: string, tools = '[read_file]') => `---\nname: ${name}\ndescription: d\nmodel: ${model}\ntools: ${tools}\n---\nWork.\n`;
const SECRET = 'sk-ant-doctor-must-never-print-this-0123456789';

describe('runtrail doctor', () => {
  it('checks definitions, each MCP server within the timeout, the API keys (never printed) and the sandbox', async () => {
    const m = marker();
    project({
      '.runtrail/mcp.json': JSON.stringify({
        mcpServers: {
          everything: everythingStdio(m),
          broken: { command: NODE, args: [fixture('exits-at-once.mjs')] },
          silent: { command: NODE, args: [fixture('never-initializes.mjs')] },
        },
      }),
      '.runtrail/agents/writer.md': agent('writer', 'openai:gpt-4o-mini'),
      '.runtrail/agents/critic.md': agent('critic', 'anthropic:claude-haiku-4-5'),
      '.runtrail/agents/broken-agent.md': agent('broken-agent', 'offline', '[web_serch]'),
    });
    const started = Date.now();
    const r = await doctor(['--timeout-s', '2'], { ANTHROPIC_API_KEY: SECRET });
    expect(r.code).toBe(1);
    const line = (name: string) => r.out.split('\n').find((l) => l.includes(` ${name}: `)) ?? '';
    expect(line('definitions')).toMatch(/^✗ definitions: 1 error\(s\)/);
    expect(r.out).toContain('.runtrail/agents/broken-agent.md: tools: unknown tool "web_serch"');
    expect(line('mcp everything')).toMatch(/^✓ mcp everything: \d+ tools over stdio in [\d.]+ ms/);
    expect(line('mcp broken')).toMatch(/^✗ mcp broken: unavailable: /);
    expect(line('mcp silent')).toBe('✗ mcp silent: unavailable: no answer within 2 s');
    expect(line('api key OPENAI_API_KEY')).toBe('✗ api key OPENAI_API_KEY: not set; openai:gpt-4o-mini (agent writer) cannot run without it');
    expect(line('api key ANTHROPIC_API_KEY')).toBe('✓ api key ANTHROPIC_API_KEY: set, for anthropic:claude-haiku-4-5 (agent critic)');
    expect(r.out + r.err).not.toContain(SECRET);
    expect(line('sandbox')).toMatch(/^[✓!] sandbox: /);
    // the silent server is given up on after its timeout, not waited for
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(serverProcesses(m)).toEqual([]);
  }, 60_000);

  it('a project with nothing wrong passes (offline models need no key)', async () => {
    project({ '.runtrail/agents/notes.md': agent('notes', 'offline') });
    const r = await doctor([], {});
    expect(r.code, r.out).toBe(0);
    expect(r.out).toContain('✓ definitions: ');
    expect(r.out).toContain('✓ api keys: no configured model needs a key');
  });
});
