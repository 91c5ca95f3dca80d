/**
 * MCP through the built `runtrail` binary, as a user runs it: `validate` checks the agents' MCP
 * entries, `mcp list` and `mcp probe` connect and report, `run` drives an agent with MCP tools and
 * leaves no server behind, a SIGKILLed Runtrail's servers are ended by the next command on the data
 * dir, and `serve` streams `mcp` steps (start → ok) and progress frames over SSE.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { readSse } from '../server/helpers.js';
import { eventually, marker } from '../tools/helpers.js';
import { everythingStdio, fixture, NODE, serverProcesses } from './helpers.js';

const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
const children = new Set<ChildProcess>();
let dir = '';

afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  children.clear();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = '';
});

function project(files: Record<string, string>): string {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-mcp-cli-'));
  mkdirSync(join(dir, 'home'));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

function runtrail(args: string[]) {
  const env: NodeJS.ProcessEnv = { NO_COLOR: '1', HOME: join(dir, 'home') };
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_') && k !== 'HOME') env[k] = v;
  const child = spawn(NODE, [MAIN, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, out: () => out, err: () => err, exited };
}

async function run(args: string[]) {
  const p = runtrail(args);
  const code = await p.exited;
  return { code, out: p.out(), err: p.err() };
}

const mcpJson = (servers: Record<string, unknown>) => JSON.stringify({ mcpServers: servers });
const agent = (name: string, servers: string, tools: string, model = `script:${name}.turns.json`) =>
  `---\nname: ${name}\ndescription: calls MCP tools\nmodel: ${model}\ntools: ${tools}\nmcpServers: ${servers}\n---\nUse the tools.\n`;
const turns = (t: unknown[]) => `${JSON.stringify(t)}\n`;

describe.runIf(existsSync(MAIN))('runtrail and MCP servers (built binary)', () => {
  it('validate names bad MCP entries by file and field, and passes a good project without connecting', async () => {
    project({
      '.runtrail/mcp.json': mcpJson({ everything: { command: 'runtrail-never-started' } }),
      '.runtrail/agents/good.md': agent('good', '[everything]', '["mcp__everything__*"]'),
      '.runtrail/agents/bad.md': agent('bad', '[everything, docs]', '[mcp__wiki__search]'),
    });
    const r = await run(['validate']);
    expect(r.code).toBe(2);
    expect(r.out.trim().split('\n')).toEqual([
      '.runtrail/agents/bad.md: mcpServers[1]: unknown MCP server "docs" (configured: everything; define it in .runtrail/mcp.json or inline)',
      '.runtrail/agents/bad.md: tools: "mcp__wiki__search" names MCP server "wiki", which is not in mcpServers (everything); add it there',
    ]);
    rmSync(join(dir, '.runtrail', 'agents', 'bad.md'));
    const ok = await run(['validate']);
    expect(ok.code).toBe(0);
    expect(ok.err).toMatch(/^ok: \d+ agents/m);
  });

  it('mcp list and mcp probe connect, show tools and timings, and leave no server running', async () => {
    const m = marker();
    project({
      '.runtrail/mcp.json': mcpJson({ everything: everythingStdio(m), broken: { command: NODE, args: [fixture('exits-at-once.mjs')] } }),
      '.runtrail/agents/echoer.md': agent('echoer', '[everything]', '[mcp__everything__echo, "mcp__everything__get-*"]'),
    });
    const agents = await run(['agents']);
    expect(agents.out).toContain('  mcp: everything (mcp__everything__echo, mcp__everything__get-*)');
    expect(serverProcesses(m)).toEqual([]); // listing agents connects to nothing
    const list = await run(['mcp', 'list']);
    // "broken" cannot be used: the exit code says so
    expect(list.code).toBe(1);
    expect(list.out).toMatch(/^everything {2}stdio {2}\.runtrail\/mcp\.json {2}.*index\.js stdio --marker=/m);
    expect(list.out).toMatch(/ok over stdio · mcp-servers\/everything [\d.]+ · \d+ tools \(\d+(\.\d)? ms\)/);
    expect(list.out).toContain('tools: echo, get-annotated-message');
    expect(list.out).toContain('agent echoer: mcp__everything__echo, mcp__everything__get-annotated-message');
    expect(list.out).toContain('broken  stdio  .runtrail/mcp.json');
    expect(list.out).toContain(
      'unavailable: MCP server "broken" is unavailable: it closed the connection before answering "initialize" (it exited with code 3)',
    );
    expect(list.out).toContain('fatal: cannot open /etc/nowhere/server.toml');
    expect(serverProcesses(m)).toEqual([]);

    const probe = await run(['mcp', 'probe', 'everything']);
    expect(probe.code).toBe(0);
    expect(probe.out).toMatch(/timings: start [\d.]+ ms · initialize [\d.]+ ms · tools\/list [\d.]+ ms · total [\d.]+ ms/);
    expect(probe.out).toContain('    mcp__everything__echo  Echoes back the input string');
    const json = JSON.parse((await run(['mcp', 'probe', 'everything', '--json'])).out) as {
      ok: boolean;
      tools: Array<{ name: string; runtrail_name: string }>;
      timings_ms: Record<string, number>;
    };
    expect(json.ok).toBe(true);
    expect(json.tools.find((t) => t.name === 'get-sum')?.runtrail_name).toBe('mcp__everything__get-sum');
    expect(Object.keys(json.timings_ms)).toEqual(['start', 'initialize', 'list_tools', 'total']);
    const bad = await run(['mcp', 'probe', 'broken']);
    expect(bad.code).toBe(1);
    const unknown = await run(['mcp', 'probe', 'nope']);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain('unknown MCP server "nope" (configured: broken, everything)');
    expect(serverProcesses(m)).toEqual([]);
  }, 60_000);

  it('run: an agent calls MCP tools; the steps print as server/tool; no server is left after the command', async () => {
    const m = marker();
    project({
      '.runtrail/mcp.json': mcpJson({ everything: everythingStdio(m) }),
      '.runtrail/agents/echoer.md': agent('echoer', '[everything]', '["mcp__everything__*"]'),
      '.runtrail/agents/echoer.turns.json': turns([
        { toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'from the cli' } }] },
        { toolCalls: [{ name: 'mcp__everything__get-sum', args: { a: 2, b: 40 } }] },
        { text: 'The sum is 42.' },
      ]),
    });
    const r = await run(['run', 'echoer']);
    expect(r.code).toBe(0);
    expect(r.out).toContain('everything/echo');
    expect(r.out).toContain('everything/get-sum');
    expect(r.out).toContain('The sum is 42.');
    expect(serverProcesses(m)).toEqual([]);
    const nd = await run(['run', 'echoer', '--json']);
    const frames = nd.out
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>); // any: wire frames
    expect(frames.filter((f) => f.type === 'step').map((f) => `${f.step.type}:${f.step.server}/${f.step.name}:${f.step.phase}`)).toEqual([
      'mcp:everything/echo:start',
      'mcp:everything/echo:ok',
      'mcp:everything/get-sum:start',
      'mcp:everything/get-sum:ok',
    ]);
    expect(frames.at(-1)).toMatchObject({ type: 'done', used_mcp: ['everything'] });
  }, 60_000);

  it('the MCP servers of a Runtrail killed with SIGKILL are ended by the next command on the data dir', async () => {
    const m = marker();
    project({
      '.runtrail/mcp.json': mcpJson({ fixture: { command: NODE, args: [fixture('fixture-server.mjs'), m, '--helper'] } }),
      '.runtrail/agents/waiter.md': agent('waiter', '[fixture]', '["mcp__fixture__*"]'),
      '.runtrail/agents/waiter.turns.json': turns([{ toolCalls: [{ name: 'mcp__fixture__silent', args: {} }] }, { text: 'never' }]),
    });
    const p = runtrail(['run', 'waiter', '--data-dir', 'data']);
    // the server and the helper it started (its process group)
    expect(await eventually(() => serverProcesses(m).filter((l) => !l.includes(MAIN)).length === 2, 20_000)).toBe(true);
    p.child.kill('SIGKILL');
    await p.exited;
    const left = () => serverProcesses(m).filter((l) => !l.includes(MAIN));
    // nothing ran to end them: the helper at least outlives Runtrail (the server itself may exit when its stdin closes)
    expect(left().length).toBeGreaterThanOrEqual(1);
    expect(left().some((l) => l.includes(`sleep ${m}`))).toBe(true);
    const next = await run(['runs', '--data-dir', 'data']);
    expect(next.code).toBe(0);
    expect(next.err).toMatch(/ended [12] MCP server process(es)? a stopped Runtrail left running \(.*fixture-server\.mjs/);
    expect(left()).toEqual([]);
  }, 60_000);

  it("serve: SSE shows mcp steps start → ok and the long tool's progress frames; stopping the server stops its MCP servers", async () => {
    const m = marker();
    project({
      '.runtrail/mcp.json': mcpJson({ everything: everythingStdio(m) }),
      '.runtrail/agents/echoer.md': agent('echoer', '[everything]', '["mcp__everything__*"]'),
      '.runtrail/agents/echoer.turns.json': turns([
        { toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'over sse' } }] },
        { toolCalls: [{ name: 'mcp__everything__trigger-long-running-operation', args: { duration: 1.6, steps: 4 } }] },
        { text: 'done' },
      ]),
    });
    const srv = runtrail(['serve', '--port', '0', '--data-dir', 'data']);
    expect(await eventually(() => /serving on (http:\S+)/.test(srv.out()), 20_000)).toBe(true);
    const url = /serving on (http:\S+)/.exec(srv.out())![1];
    const res = await fetch(`${url}/api/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ plugin: 'echoer' }) });
    expect(res.status).toBe(201);
    const { run_id } = (await res.json()) as { run_id: string };
    const sse = await readSse(`${url}/api/runs/${run_id}/events`);
    const frames = sse.events.map((e) => JSON.parse(e.data) as Record<string, any>); // any: wire frames
    expect(frames.filter((f) => f.type === 'step').map((f) => `${f.index}:${f.step.type}:${f.step.server}/${f.step.name}:${f.step.phase}`)).toEqual([
      '0:mcp:everything/echo:start',
      '0:mcp:everything/echo:ok',
      '1:mcp:everything/trigger-long-running-operation:start',
      '1:mcp:everything/trigger-long-running-operation:ok',
    ]);
    const progress = frames.filter((f) => f.type === 'process' && f.event.targetType === 'tool' && f.event.status === 'running');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0].event).toMatchObject({ total: 4 });
    expect(frames.at(-1)).toMatchObject({ type: 'done', used_mcp: ['everything'] });
    expect(serverProcesses(m)).toHaveLength(1); // kept for the next run
    srv.child.kill('SIGINT');
    expect(await srv.exited).toBe(0);
    expect(serverProcesses(m)).toEqual([]);
  }, 60_000);
});
