/**
 * Runs of an agent with MCP servers, end to end through the RunService (script models): `mcp` steps
 * on the wire (server, the tool's own name, start → ok), progress as process events, `done.used_mcp`,
 * a server shared by the runs of one process, over stdio and Streamable HTTP; a server that cannot
 * start fails the run before its first model turn (`mcp_unavailable`); secrets stay out of
 * resolved_config.json and events.jsonl; cancelling a run cancels its MCP call.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { createEngineBridge } from '../../src/events/engine-bridge.js';
import { ExtensionRegistry } from '../../src/extensions/extension-registry.js';
import { McpServerPool } from '../../src/mcp/mcp-server-pool.js';
import { RunService } from '../../src/runtime/service/run-service.js';
import { agentFile, makeProject, type ProjectFixture } from '../extensions/project-fixture.js';
import { eventually, marker } from '../tools/helpers.js';
import { everythingStdio, fixture, NODE, serverProcesses, startEverythingHttp, type HttpServer } from './helpers.js';

let p: ProjectFixture;
let service: RunService | null = null;
let pool: McpServerPool;
const http: HttpServer[] = [];
afterEach(async () => {
  await service?.close();
  service = null;
  await pool?.shutdown();
  await Promise.all(http.splice(0).map((h) => h.stop()));
  p?.cleanup();
});

const ECHO_AGENT = (servers = '[everything]', tools = '[read_file, "mcp__everything__*"]') =>
  agentFile(`name: echoer\ndescription: calls MCP tools\nmodel: script:echoer.turns.json\ntools: ${tools}\nmcpServers: ${servers}`);

async function serviceOver(files: Record<string, string>, env: Record<string, string> = {}) {
  p = makeProject(files);
  pool = new McpServerPool({ killGraceMs: 300 });
  const registry = await ExtensionRegistry.load({
    projectDir: p.dir,
    builtins: [],
    builtinSkillsDir: join(p.dir, 'none'),
    env: { ...process.env, ...env },
    mcpPool: pool,
  });
  expect(registry.problems.filter((x) => x.level === 'error')).toEqual([]);
  service = new RunService({
    dataDir: join(p.dir, '.runtrail'),
    agentSource: registry,
    skillDirs: registry.skillDirs,
    defaults: () => registry.config,
    inputRoots: 'any',
    env: {},
    cwd: p.dir,
    processRegistry: null,
  });
  return service;
}

async function runToEnd(s: RunService, req: Record<string, unknown>) {
  const created = await s.create(req);
  const events: AgentEvent[] = [];
  for await (const e of s.events(created.run_id)) events.push(e);
  const status = await s.wait(created.run_id);
  const root = join(p.dir, '.runtrail', 'runs', created.run_id);
  return { status, events, root, read: (rel: string) => readFileSync(join(root, rel), 'utf8') };
}

/** The wire frames of a run, as SSE and the page get them. */
function wire(events: AgentEvent[]) {
  const bridge = createEngineBridge({ traceId: 't' });
  return events.map((e) => bridge.translate(e)?.toWire('none')).filter((w): w is NonNullable<typeof w> => !!w) as Array<Record<string, any>>; // any: wire frames of every type
}

const turns = (t: unknown[]) => `${JSON.stringify(t)}\n`;
const ECHO_TURNS = turns([
  { toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'hello' } }] },
  { toolCalls: [{ name: 'mcp__everything__trigger-long-running-operation', args: { duration: 1.2, steps: 4 } }] },
  { toolCalls: [{ name: 'mcp__everything__get-tiny-image', args: {} }] },
  { text: 'Echoed, waited, and got the image.' },
]);

describe('an agent run with an MCP server', () => {
  it('over stdio: mcp steps start → ok, progress events, used_mcp, the image as an artifact, no secret anywhere', async () => {
    const m = marker();
    const token = 'tok_abcdef0123456789';
    const s = await serviceOver(
      {
        '.runtrail/mcp.json': JSON.stringify({ mcpServers: { everything: everythingStdio(m, { env: { EVERYTHING_TOKEN: '${EV_TOKEN}' } }) } }),
        '.runtrail/agents/echoer.md': ECHO_AGENT(),
        '.runtrail/agents/echoer.turns.json': ECHO_TURNS,
      },
      { EV_TOKEN: token },
    );
    const r = await runToEnd(s, { plugin: 'echoer' });
    expect(r.status.status).toBe('completed');
    expect(r.status.final_answer).toBe('Echoed, waited, and got the image.');
    const frames = wire(r.events);
    const steps = frames.filter((f) => f.type === 'step').map((f) => [f.index, f.step.type, f.step.server, f.step.name, f.step.phase]);
    expect(steps).toEqual([
      [0, 'mcp', 'everything', 'echo', 'start'],
      [0, 'mcp', 'everything', 'echo', 'ok'],
      [1, 'mcp', 'everything', 'trigger-long-running-operation', 'start'],
      [1, 'mcp', 'everything', 'trigger-long-running-operation', 'ok'],
      [2, 'mcp', 'everything', 'get-tiny-image', 'start'],
      [2, 'mcp', 'everything', 'get-tiny-image', 'ok'],
    ]);
    expect(frames.find((f) => f.type === 'step' && f.step.phase === 'ok')?.step).toMatchObject({
      type: 'mcp',
      server: 'everything',
      name: 'echo',
      args: { message: 'hello' },
      result: 'Echo: hello',
    });
    // the long tool moved: running process events of its operation (throttled), with counts
    const progress = frames.filter((f) => f.type === 'process' && f.event.targetType === 'tool' && f.event.status === 'running');
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0].event).toMatchObject({ total: 4 });
    const done = frames.find((f) => f.type === 'done')!;
    expect(done.used_mcp).toEqual(['everything']);
    expect(done.process_steps.map((x: { type: string }) => x.type)).toEqual(['mcp', 'mcp', 'mcp']);
    // the image went to artifacts/mcp/everything/ and is a document of the run
    expect(r.status.public_documents.map((d) => d.path)).toEqual([expect.stringMatching(/^artifacts\/mcp\/everything\/get-tiny-image-.+-1\.png$/)]);
    const config = JSON.parse(r.read('runtime/resolved_config.json')) as { capabilities: { allowedTools: string[] }; tool_sources: unknown[] };
    expect(config.capabilities.allowedTools).toEqual(['read_file', 'mcp__everything__*']);
    expect(config.tool_sources).toEqual([
      {
        kind: 'mcp',
        server: 'everything',
        defined_in: '.runtrail/mcp.json',
        type: 'stdio',
        command: NODE,
        args: everythingStdio(m).args,
        env: ['EVERYTHING_TOKEN'],
        tools: ['mcp__everything__*'],
      },
    ]);
    for (const f of ['runtime/resolved_config.json', 'runtime/events.jsonl', 'runtime/system_prompt.md', 'runtime/trace.jsonl'])
      expect(r.read(f)).not.toContain(token);
    expect(r.read('runtime/system_prompt.md')).toContain('mcp__everything__echo');
  });

  it('one server process is shared by the runs that use it, and stops with the pool', async () => {
    const m = marker();
    const s = await serviceOver({
      '.runtrail/mcp.json': JSON.stringify({ mcpServers: { everything: everythingStdio(m) } }),
      '.runtrail/agents/echoer.md': ECHO_AGENT(),
      'one.json': turns([{ toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'a' } }] }, { text: 'one' }]),
      'two.json': turns([{ toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'b' } }] }, { text: 'two' }]),
      '.runtrail/agents/echoer.turns.json': turns([{ text: 'unused' }]),
    });
    const first = await runToEnd(s, { plugin: 'echoer', model: 'script:one.json' });
    const pid = pool.list()[0].pid;
    const second = await runToEnd(s, { plugin: 'echoer', model: 'script:two.json' });
    expect([first.status.status, second.status.status]).toEqual(['completed', 'completed']);
    expect(pool.list()).toEqual([{ server: 'everything', state: 'idle', leases: 0, pid, tools: expect.any(Number) }]);
    expect(serverProcesses(m)).toHaveLength(1);
    await pool.shutdown();
    expect(serverProcesses(m)).toEqual([]);
  });

  it('over Streamable HTTP', async () => {
    const h = await startEverythingHttp('streamableHttp', marker());
    http.push(h);
    const s = await serviceOver({
      '.runtrail/mcp.json': JSON.stringify({ mcpServers: { everything: { type: 'http', url: h.url } } }),
      '.runtrail/agents/echoer.md': ECHO_AGENT(),
      '.runtrail/agents/echoer.turns.json': ECHO_TURNS,
    });
    const r = await runToEnd(s, { plugin: 'echoer' });
    expect(r.status.status).toBe('completed');
    const frames = wire(r.events);
    expect(frames.filter((f) => f.type === 'step' && f.step.phase === 'ok').map((f) => [f.step.server, f.step.name])).toEqual([
      ['everything', 'echo'],
      ['everything', 'trigger-long-running-operation'],
      ['everything', 'get-tiny-image'],
    ]);
    expect(frames.some((f) => f.type === 'process' && f.event.targetType === 'tool' && f.event.status === 'running')).toBe(true);
    expect(frames.find((f) => f.type === 'done')?.used_mcp).toEqual(['everything']);
  });

  it('a server that cannot start fails the run before its first model turn: mcp_unavailable, named, with its stderr', async () => {
    const s = await serviceOver({
      '.runtrail/mcp.json': JSON.stringify({ mcpServers: { broken: { command: NODE, args: [fixture('exits-at-once.mjs')] } } }),
      '.runtrail/agents/echoer.md': ECHO_AGENT('[broken]', '["mcp__broken__*"]'),
      '.runtrail/agents/echoer.turns.json': ECHO_TURNS,
    });
    const r = await runToEnd(s, { plugin: 'echoer' });
    expect(r.status.status).toBe('failed');
    expect(r.status.diagnosis).toMatchObject({
      code: 'mcp_unavailable',
      summary: 'MCP server "broken" is unavailable: it closed the connection before answering "initialize" (it exited with code 3)',
    });
    expect(r.status.diagnosis?.detail).toContain('fatal: cannot open /etc/nowhere/server.toml');
    // no model turn was taken
    expect(r.events.some((e) => e.stream === 'assistant' || e.stream === 'tool')).toBe(false);
    const err = wire(r.events).at(-1)!;
    expect(err).toMatchObject({ type: 'error', diagnosis: { code: 'mcp_unavailable' } });
    expect(existsSync(join(r.root, 'runtime', 'system_prompt.md'))).toBe(false);
  });

  it('cancelling a run cancels its MCP call in flight; the cancel is not reported as a timeout', async () => {
    const s = await serviceOver({
      '.runtrail/mcp.json': JSON.stringify({ mcpServers: { fixture: { command: NODE, args: [fixture('fixture-server.mjs'), marker()] } } }),
      '.runtrail/agents/echoer.md': ECHO_AGENT('[fixture]', '["mcp__fixture__*"]'),
      '.runtrail/agents/echoer.turns.json': turns([{ toolCalls: [{ name: 'mcp__fixture__silent', args: {} }] }, { text: 'never' }]),
    });
    const created = await s.create({ plugin: 'echoer' });
    const events: AgentEvent[] = [];
    for await (const e of s.events(created.run_id)) {
      events.push(e);
      // once the call has reached the server (a cancel before it would just not start the call)
      if (e.stream === 'tool' && e.data.phase === 'start') setTimeout(() => void s.cancel(created.run_id), 300);
    }
    const st = await s.wait(created.run_id);
    expect(st.status).toBe('cancelled');
    const result = events.find((e) => e.stream === 'tool' && e.data.phase === 'result');
    expect(result?.data).toMatchObject({ isError: true, diagnosis: { code: 'cancelled' } });
    const conn = (
      await pool.acquire(
        (await ExtensionRegistry.load({ projectDir: p.dir, builtins: [], builtinSkillsDir: join(p.dir, 'none'), mcpPool: pool })).mcpServers.get('fixture')!,
      )
    ).connection;
    expect(await eventually(() => conn.stderr().includes('silent: cancelled'), 5_000)).toBe(true);
  });
});
