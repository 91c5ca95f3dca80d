/**
 * Runtrail as an MCP server, driven by the official SDK's client — over stdio (the built
 * `runtrail mcp serve`, as Claude Desktop would start it) and over Streamable HTTP on loopback.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startRuntrailMcpHttp, type RuntrailMcpHttp } from '../../src/cli/mcp-serve.js';
import { createRuntrailMcpServer } from '../../src/cli/runtrail-mcp-server.js';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { McpServerPool } from '../../src/mcp/mcp-server-pool.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { NOTES_AGENT } from '../extensions/project-fixture.js';
import { eventually, liveProcesses } from '../tools/helpers.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
let dir = '';
const clients: Client[] = [];
let http: RuntrailMcpHttp | null = null;
let service: RunService | null = null;
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
  await http?.close();
  http = null;
  await service?.close();
  service = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

const GOOD_NOTES = '# Notes\n\n## Highlights\n\n- sync retries\n\n## Fixes\n\n- export order\n';
const NOTES_TURNS = [
  { toolCalls: [{ name: 'read_file', args: { path: 'input/changes.md' } }] },
  {
    toolCalls: [
      { name: 'write_artifact', args: { path: 'notes.json', content: { version: '1.2.0', items: ['sync'] } } },
      { name: 'write_artifact', args: { path: 'NOTES.md', content: GOOD_NOTES } },
    ],
  },
  { text: 'Wrote NOTES.md and notes.json.' },
];

function project(): string {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-mcp-serve-'));
  const files: Record<string, string> = {
    '.runtrail/agents/notes.md': NOTES_AGENT.replace('version: 1.2.0', 'version: 1.2.0\nmodel: script:notes.turns.json'),
    '.runtrail/agents/notes.turns.json': JSON.stringify(NOTES_TURNS),
    '.runtrail/agents/slow.md': '---\nname: slow\ndescription: takes its time\nmodel: script:slow.turns.json\n---\nWait.\n',
    '.runtrail/agents/slow.turns.json': JSON.stringify([{ text: 'finally', delayMs: 30_000 }]),
    'changes.md': '- sync retries\n- export order\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  mkdirSync(join(dir, 'home'));
  return dir;
}

type ToolResult = { content: Array<Record<string, unknown>>; structuredContent?: Record<string, unknown>; isError?: boolean };
const call = (c: Client, name: string, args: Record<string, unknown> = {}, onprogress?: (p: { progress: number; message?: string }) => void) =>
  c.callTool({ name, arguments: args }, undefined, onprogress ? { onprogress } : undefined) as Promise<ToolResult>;

async function exercise(c: Client): Promise<void> {
  const tools = (await c.listTools()).tools.map((t) => t.name).sort();
  expect(tools).toEqual(['cancel_run', 'get_run', 'list_agents', 'list_runs', 'start_run']);

  const agents = (await call(c, 'list_agents')).structuredContent as {
    agents: Array<{ name: string; input_schema: { required?: string[] }; artifacts: Array<{ path: string }> }>;
  };
  const notes = agents.agents.find((a) => a.name === 'notes')!;
  expect(notes.input_schema.required).toEqual(['changes']);
  expect(notes.artifacts.map((a) => a.path)).toEqual(['NOTES.md', 'notes.json']);

  // a local path as input, like the CLI; progress while it runs; the answer and the artifacts at the end
  const progress: string[] = [];
  const r = await call(c, 'start_run', { agent: 'notes', input: { changes: join(dir, 'changes.md') } }, (p) => progress.push(p.message ?? ''));
  expect(r.isError).toBeUndefined();
  expect(r.content[0]).toEqual({ type: 'text', text: 'Wrote NOTES.md and notes.json.' });
  const runId = r.structuredContent!.run_id as string;
  expect(r.structuredContent).toMatchObject({ status: 'completed', agent: 'notes', final_answer: 'Wrote NOTES.md and notes.json.' });
  const links = r.content.filter((x) => x.type === 'resource_link');
  expect(links.map((l) => l.uri).sort()).toEqual([`runtrail://runs/${runId}/artifacts/NOTES.md`, `runtrail://runs/${runId}/artifacts/notes.json`]);
  expect(progress).toEqual(
    expect.arrayContaining([
      'state: model_thinking',
      'tool read_file started',
      'tool read_file ok',
      'tool write_artifact ok',
      'state: validating',
      'state: completed',
    ]),
  );

  // artifacts as resources
  const resources = (await c.listResources()).resources.map((x) => x.uri);
  expect(resources).toContain(`runtrail://runs/${runId}/artifacts/NOTES.md`);
  const md = await c.readResource({ uri: `runtrail://runs/${runId}/artifacts/NOTES.md` });
  expect(md.contents[0]).toEqual({ uri: `runtrail://runs/${runId}/artifacts/NOTES.md`, mimeType: 'text/markdown', text: GOOD_NOTES });
  await expect(c.readResource({ uri: `runtrail://runs/${runId}/artifacts/../input/changes.md` })).rejects.toThrow();

  // wait: false, then get_run; list_runs; cancel_run
  const started = await call(c, 'start_run', { agent: 'slow', wait: false });
  const slowId = started.structuredContent!.run_id as string;
  expect(started.structuredContent).toMatchObject({ status: 'queued', agent: 'slow' });
  const listed = (await call(c, 'list_runs')).structuredContent as { runs: Array<{ run_id: string }> };
  expect(listed.runs.map((x) => x.run_id)).toEqual(expect.arrayContaining([runId, slowId]));
  const cancelled = await call(c, 'cancel_run', { run_id: slowId });
  expect(cancelled.structuredContent).toMatchObject({ run_id: slowId });
  const statusOf = async (id: string) => ((await call(c, 'get_run', { run_id: id })).structuredContent as { status: string }).status;
  const settled = async (id: string) => {
    let st = '';
    for (let i = 0; i < 100 && !['completed', 'failed', 'cancelled'].includes(st); i++) {
      st = await statusOf(id);
      if (!['completed', 'failed', 'cancelled'].includes(st)) await new Promise((res) => setTimeout(res, 50));
    }
    return st;
  };
  expect(await settled(slowId)).toBe('cancelled');

  // a client that cancels its start_run request cancels the run
  const ctl = new AbortController();
  const seen: string[] = [];
  const waiting = c.callTool({ name: 'start_run', arguments: { agent: 'slow' } }, undefined, {
    signal: ctl.signal,
    onprogress: (p) => seen.push(p.message ?? ''),
  });
  expect(await eventually(() => seen.includes('state: model_thinking'), 10_000)).toBe(true);
  ctl.abort(new Error('the user pressed stop'));
  await expect(waiting).rejects.toThrow();
  const { runs } = (await call(c, 'list_runs', { agent: 'slow', limit: 1 })).structuredContent as { runs: Array<{ run_id: string }> };
  expect(await settled(runs[0].run_id)).toBe('cancelled');

  // bad input gets a clear error
  const bad = await call(c, 'start_run', { agent: 'nobody' });
  expect(bad.isError).toBe(true);
  expect(String(bad.content[0].text)).toMatch(/nobody/);
  expect(String(bad.content[0].text)).toContain('valid agents:');
  const missing = await call(c, 'get_run', { run_id: 'run_20200101_000000_000000' });
  expect(missing).toMatchObject({ isError: true, content: [{ type: 'text', text: 'run run_20200101_000000_000000 not found' }] });
}

describe.runIf(existsSync(MAIN))('runtrail mcp serve over stdio (the official SDK client)', () => {
  it('list_agents, start_run with progress, artifacts as resources, wait: false, get_run, list_runs, cancel_run; ends with its client', async () => {
    project();
    const env: Record<string, string> = { HOME: join(dir, 'home'), NO_COLOR: '1' };
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('RUNTRAIL_') && k !== 'HOME') env[k] = v;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp', 'serve', '--data-dir', 'data'],
      cwd: dir,
      env,
      stderr: 'pipe',
    });
    const c = new Client({ name: 'test', version: '1' });
    clients.push(c);
    await c.connect(transport);
    const pid = transport.pid!;
    await exercise(c);
    await c.close();
    expect(await eventually(() => liveProcesses(`${MAIN} mcp serve`).every((l) => !l.trim().startsWith(String(pid))), 10_000)).toBe(true);
  }, 60_000);
});

describe.runIf(existsSync(MAIN))('runtrail mcp serve: a wait: false run when the client goes', () => {
  it('is cancelled with the reason in its status, as the tool description says', async () => {
    project();
    const env: Record<string, string> = { HOME: join(dir, 'home'), NO_COLOR: '1' };
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('RUNTRAIL_') && k !== 'HOME') env[k] = v;
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MAIN, 'mcp', 'serve', '--data-dir', 'data'],
      cwd: dir,
      env,
      stderr: 'pipe',
    });
    const c = new Client({ name: 'test', version: '1' });
    clients.push(c);
    await c.connect(transport);
    const start = (await c.listTools()).tools.find((t) => t.name === 'start_run')!;
    expect(start.description).toContain('when the client disconnects the server stops and cancels its unfinished runs (their status says so)');
    const started = await call(c, 'start_run', { agent: 'slow', wait: false });
    const runId = started.structuredContent!.run_id as string;
    await c.close();
    const file = join(dir, 'data', 'runs', runId, 'runtime', 'run_status.json');
    const status = () => (existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as { status: string; diagnosis?: { summary: string } }) : null);
    expect(await eventually(() => status()?.status === 'cancelled', 15_000)).toBe(true);
    expect(status()!.diagnosis!.summary).toMatch(
      /^run cancelled( while queued)?: runtrail mcp serve stopped \(its MCP client disconnected or it was interrupted\)/,
    );
  }, 60_000);
});

describe('runtrail mcp serve --http (Streamable HTTP on loopback)', () => {
  it('serves the same tools to a Streamable HTTP client, and refuses a foreign Host header', async () => {
    project();
    const registry = await ExtensionRegistry.load({
      projectDir: dir,
      builtins: [],
      builtinSkillsDir: join(dir, 'none'),
      env: {},
      mcpPool: new McpServerPool(),
    });
    service = new RunService({
      dataDir: join(dir, 'data'),
      agentSource: registry,
      skillDirs: registry.skillDirs,
      defaults: () => registry.config,
      inputRoots: 'any',
      env: {},
      cwd: dir,
      processRegistry: null,
    });
    http = await startRuntrailMcpHttp(() => createRuntrailMcpServer({ service: service!, agents: registry, version: 'test' }), 0);
    expect(http.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    const c = new Client({ name: 'test', version: '1' });
    clients.push(c);
    await c.connect(new StreamableHTTPClientTransport(new URL(http.url)));
    await exercise(c);
    // fetch will not send a Host of our choosing: node:http will (a DNS-rebinding page would)
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    });
    const post = (headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const u = new URL(http!.url);
        const req = request(
          {
            host: u.hostname,
            port: u.port,
            path: u.pathname,
            method: 'POST',
            headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    expect(await post({ host: 'evil.example.com' })).toBe(403);
    expect(await post({ origin: 'https://evil.example.com' })).toBe(403);
    expect(await post({ origin: new URL(http.url).origin })).toBe(200);
    const elsewhere = await fetch(http.url.replace('/mcp', '/other'));
    expect(elsewhere.status).toBe(404);
  }, 60_000);
});
