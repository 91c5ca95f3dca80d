/**
 * MCP tools as Runtrail tools, through the ToolExecutor like any tool: `mcp__<server>__<tool>` names,
 * the server's schema for the model and for argument checks, `mcp` start/result events with server
 * and the tool's own name, results (text, structuredContent, images saved, isError, a 10 MB result
 * saved whole), progress on the call's operation, timeouts apart from cancels, list_changed.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEventMap, AgentStream } from '../../src/events/agent-event.js';
import { McpServerPool } from '../../src/mcp/mcp-server-pool.js';
import { McpToolSource, selectTools } from '../../src/mcp/mcp-tool-source.js';
import { mcpToolName } from '../../src/mcp/mcp-tool-name.js';
import { ToolExecutor } from '../../src/runtime/loop/tool-executor.js';
import { eventually, marker, recordingReporter, type ReporterCall } from '../tools/helpers.js';
import { everythingStdio, fixture, NODE, serverConfig, serverProcesses } from './helpers.js';

let pool: McpServerPool;
let dir = '';
const pools: McpServerPool[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.shutdown()));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function newPool(): McpServerPool {
  pool = new McpServerPool({ killGraceMs: 300 });
  pools.push(pool);
  return pool;
}

/** A run's artifacts folder, as the workspace writes it. */
function artifactsIn(root: string) {
  return {
    async writeArtifact(rel: string, content: string | Uint8Array) {
      const abs = join(root, 'artifacts', rel);
      await mkdir(dirname(abs), { recursive: true });
      await writeFile(abs, content);
      return { path: relative(join(root, 'artifacts'), abs), bytes: typeof content === 'string' ? Buffer.byteLength(content) : content.byteLength };
    },
  };
}

async function executorFor(name: string, def: Record<string, unknown>, grants: string[], calls: ReporterCall[] = []) {
  newPool();
  dir = mkdtempSync(join(tmpdir(), 'runtrail-mcp-'));
  dirs.push(dir);
  const cfg = serverConfig(name, def);
  const source = new McpToolSource({ server: cfg, grants, pool, artifacts: artifactsIn(dir) });
  const published: Array<{ stream: AgentStream; data: Record<string, unknown> }> = [];
  const ex = new ToolExecutor({
    tools: [],
    allowedTools: source.grants,
    sources: [source],
    publish: <S extends AgentStream>(stream: S, data: AgentEventMap[S]) => void published.push({ stream, data: data as unknown as Record<string, unknown> }),
    reporterFor: (call) => recordingReporter(calls, call.toolCallId),
  });
  const failed = await ex.openSources();
  return { ex, source, cfg, published, failed, calls };
}

describe('MCP tools through the ToolExecutor (server-everything over stdio)', () => {
  it('are named mcp__<server>__<tool>, keep the server schema, and are `mcp` steps with server and the tool name', async () => {
    const m = marker();
    const { ex, published, failed } = await executorFor('everything', everythingStdio(m), ['mcp__everything__*']);
    expect(failed).toBeNull();
    const specs = ex.specs();
    expect(specs.map((s) => s.name)).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum', 'mcp__everything__get-tiny-image']));
    const echo = specs.find((s) => s.name === 'mcp__everything__echo')!;
    expect(echo.description).toBe('Echoes back the input string');
    expect(echo.inputSchema).toEqual({ type: 'object', properties: { message: { type: 'string', description: 'Message to echo' } }, required: ['message'] });
    const r = await ex.execute({ id: 'call_1', name: 'mcp__everything__echo', args: { message: 'hi' } });
    expect(r.result).toMatchObject({ ok: true, content: 'Echo: hi', details: { server: 'everything', tool: 'echo' } });
    expect(published[0].data).toEqual({
      phase: 'start',
      name: 'mcp__everything__echo',
      toolCallId: 'call_1',
      args: { message: 'hi' },
      kind: 'mcp',
      server: 'everything',
      serverTool: 'echo',
    });
    expect(published[1].data).toMatchObject({ phase: 'result', isError: false, result: 'Echo: hi' });
  });

  it('grants only what the agent names; include/exclude of the definition apply to the server tool names', async () => {
    const { ex } = await executorFor('everything', everythingStdio(marker(), { exclude: ['get-env', 'toggle-*'] }), [
      'mcp__everything__echo',
      'mcp__everything__get-*',
    ]);
    const names = ex
      .specs()
      .map((s) => s.name)
      .sort();
    expect(names).toContain('mcp__everything__echo');
    expect(names).toContain('mcp__everything__get-sum');
    expect(names).not.toContain('mcp__everything__get-env');
    expect(names).not.toContain('mcp__everything__trigger-long-running-operation');
    const denied = await ex.execute({ id: 'c', name: 'mcp__everything__trigger-long-running-operation', args: {} });
    expect(denied.result.diagnosis?.code).toBe('tool_not_found');
  });

  it('arguments the server schema rejects are refused before the call, naming the field', async () => {
    const { ex, published } = await executorFor('everything', everythingStdio(marker()), ['mcp__everything__*']);
    const r = await ex.execute({ id: 'c', name: 'mcp__everything__get-sum', args: { a: 'two', b: 3 } });
    expect(r.result).toMatchObject({ ok: false, diagnosis: { code: 'invalid_args', summary: 'invalid arguments for mcp__everything__get-sum' } });
    expect(r.result.content).toContain('a: must be number');
    expect(published.at(-1)?.data).toMatchObject({ phase: 'result', isError: true });
  });

  it('structuredContent goes to details and to the model as JSON; images are saved and handed to vision models', async () => {
    const { ex } = await executorFor('everything', everythingStdio(marker()), ['mcp__everything__*']);
    const s = await ex.execute({ id: 'c1', name: 'mcp__everything__get-structured-content', args: { location: 'Chicago' } });
    const structured = s.result.details?.structuredContent as Record<string, unknown>;
    expect(Object.keys(structured).sort()).toEqual(['conditions', 'humidity', 'temperature']);
    expect(JSON.parse(s.result.content)).toEqual(structured);
    const img = await ex.execute({ id: 'c2', name: 'mcp__everything__get-tiny-image', args: {} });
    expect(img.result.ok).toBe(true);
    expect(img.result.content).toContain("Here's the image you requested:");
    expect(img.result.content).toMatch(/\[image saved: artifacts\/mcp\/everything\/get-tiny-image-c2-1\.png \(image\/png, \d+ bytes\)\]/);
    const png = readFileSync(join(dir, 'artifacts', 'mcp', 'everything', 'get-tiny-image-c2-1.png'));
    expect([...png.subarray(1, 4)].map((c) => String.fromCharCode(c)).join('')).toBe('PNG');
    expect(img.result.images).toEqual([{ mediaType: 'image/png', data: png.toString('base64'), label: 'artifacts/mcp/everything/get-tiny-image-c2-1.png' }]);
  });

  it('progress notifications become progress of the call operation', async () => {
    const calls: ReporterCall[] = [];
    const { ex } = await executorFor('everything', everythingStdio(marker()), ['mcp__everything__*'], calls);
    const r = await ex.execute({ id: 'long', name: 'mcp__everything__trigger-long-running-operation', args: { duration: 0.6, steps: 3 } });
    expect(r.result.ok).toBe(true);
    const progress = calls.filter((c) => c.op === 'long' && c.method === 'progress').map((c) => c.arg as { current: number; total: number });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress[0]).toEqual({ current: 1, total: 3 });
    expect(calls.find((c) => c.method === 'start')?.arg).toBe('everything/trigger-long-running-operation');
    expect(calls.at(-1)).toMatchObject({ op: 'long', method: 'complete' });
  });
});

describe('MCP tools: results, failures, timeouts (fixture server)', () => {
  const FIX = (extra: Record<string, unknown> = {}) => ({ command: NODE, args: [fixture('fixture-server.mjs'), marker()], ...extra });

  it('a 10 MB result is saved whole as an artifact; the model reads its head and the path', async () => {
    const { ex } = await executorFor('fixture', FIX(), ['mcp__fixture__*']);
    const r = await ex.execute({ id: 'big1', name: 'mcp__fixture__big', args: { mb: 10 } });
    expect(r.result.ok).toBe(true);
    expect(r.result.content.length).toBeLessThan(51_000);
    expect(r.result.content.startsWith('BEGIN\nThe quick brown fox')).toBe(true);
    expect(r.result.content).toContain('[result cut at 50,000 of 10,485,770 characters; the whole result is in artifacts/mcp/fixture/big-big1.txt');
    const saved = join(dir, 'artifacts', 'mcp', 'fixture', 'big-big1.txt');
    expect(statSync(saved).size).toBe(10_485_770);
    expect(readFileSync(saved, 'utf8').endsWith('\nEND')).toBe(true);
    expect(r.result.details?.full_result).toEqual({ path: 'artifacts/mcp/fixture/big-big1.txt', chars: 10_485_770, bytes: 10_485_770 });
  }, 30_000);

  it('isError is a failed call with a diagnosis', async () => {
    const { ex, published } = await executorFor('fixture', FIX(), ['mcp__fixture__fail']);
    const r = await ex.execute({ id: 'f', name: 'mcp__fixture__fail', args: { why: 'the disk is full' } });
    expect(r.result).toMatchObject({
      ok: false,
      diagnosis: { code: 'mcp_tool_error', summary: 'fixture/fail returned an error', detail: 'cannot: the disk is full' },
    });
    expect(published.at(-1)?.data).toMatchObject({ phase: 'result', isError: true, diagnosis: { code: 'mcp_tool_error' } });
  });

  it('configured env values never reach the model, even when the server echoes them', async () => {
    const { ex } = await executorFor('fixture', FIX({ env: { SERVICE_TOKEN: 'tok_live_5e6f7a8b9c0d' } }), ['mcp__fixture__env']);
    const r = await ex.execute({ id: 'e', name: 'mcp__fixture__env', args: { name: 'SERVICE_TOKEN' } });
    expect(r.result.content).toBe('SERVICE_TOKEN=[redacted]');
  });

  it('idle_timeout_s ends a silent call (mcp_idle_timeout), progress resets it; timeout_s is a tool_timeout', async () => {
    const { ex } = await executorFor('fixture', FIX({ idle_timeout_s: 0.3 }), ['mcp__fixture__*']);
    const idle = await ex.execute({ id: 'i', name: 'mcp__fixture__silent', args: {} });
    expect(idle.result.diagnosis).toMatchObject({ code: 'mcp_idle_timeout', summary: 'fixture/silent sent no answer and no progress for 0.3 s' });
    // progress keeps a call alive past the idle timeout
    const steps = await ex.execute({ id: 's', name: 'mcp__fixture__steps', args: { n: 5 } });
    expect(steps.result).toMatchObject({ ok: true, content: 'done in 5 steps' });

    const hard = await executorFor('fixture', FIX({ timeout_s: 0.4, idle_timeout_s: 30 }), ['mcp__fixture__*']);
    const t = await hard.ex.execute({ id: 't', name: 'mcp__fixture__silent', args: {} });
    expect(t.result.diagnosis).toMatchObject({ code: 'tool_timeout', summary: 'mcp__fixture__silent timed out after 400 ms' });
  });

  it('cancelling the run cancels the call in flight (notifications/cancelled reaches the server)', async () => {
    newPool();
    const cfg = serverConfig('fixture', FIX());
    const source = new McpToolSource({ server: cfg, grants: ['mcp__fixture__*'], pool });
    const run = new AbortController();
    const ex = new ToolExecutor({ tools: [], allowedTools: source.grants, sources: [source], signal: run.signal });
    expect(await ex.openSources()).toBeNull();
    const call = ex.execute({ id: 'x', name: 'mcp__fixture__silent', args: {} });
    setTimeout(() => run.abort(new Error('cancelled by the user')), 150);
    const r = await call;
    expect(r.result.diagnosis?.code).toBe('cancelled');
    const lease = await pool.acquire(cfg);
    expect(await eventually(() => lease.connection.stderr().includes('silent: cancelled'), 5_000)).toBe(true);
    lease.release();
  });

  it('list_changed: the new tool is offered from the next turn on', async () => {
    const { ex } = await executorFor('fixture', FIX(), ['mcp__fixture__*']);
    expect(ex.specs().map((s) => s.name)).not.toContain('mcp__fixture__extra-1');
    await ex.execute({ id: 'a', name: 'mcp__fixture__add-tool', args: {} });
    expect(await eventually(() => ex.specs().some((s) => s.name === 'mcp__fixture__extra-1'), 5_000)).toBe(true);
    const r = await ex.execute({ id: 'b', name: 'mcp__fixture__extra-1', args: {} });
    expect(r.result).toMatchObject({ ok: true, content: 'extra 1' });
  });

  it('list_changed with a tools/list that now fails: the last good list stays, and the failure is logged', async () => {
    const { ex, cfg } = await executorFor('fixture', FIX(), ['mcp__fixture__*']);
    const before = ex.specs().map((s) => s.name);
    await ex.execute({ id: 'b', name: 'mcp__fixture__break-list', args: {} });
    const lease = await pool.acquire(cfg); // the run's own (shared) connection
    const conn = lease.connection;
    expect(
      await eventually(() => conn.logs.some((l) => String(l.data).includes('tools/list after list_changed failed (the last good list stays)')), 5_000),
    ).toBe(true);
    expect(String(conn.logs.at(-1)?.data)).toContain('the tool registry is down');
    expect(ex.specs().map((s) => s.name)).toEqual(before);
    const r = await ex.execute({ id: 'c', name: 'mcp__fixture__fail', args: { why: 'still callable' } });
    expect(r.result.diagnosis?.code).toBe('mcp_tool_error');
    lease.release();
  });

  it('log notifications during a call go to its operation', async () => {
    const calls: ReporterCall[] = [];
    const { ex } = await executorFor('fixture', FIX(), ['mcp__fixture__logs'], calls);
    await ex.execute({ id: 'l', name: 'mcp__fixture__logs', args: {} });
    const msgs = calls.filter((c) => c.method === 'progress').map((c) => (c.arg as { message: string }).message);
    expect(msgs).toEqual(['fixture info: step 1 of 3', 'fixture warning: step 2 of 3', 'fixture error: step 3 of 3']);
  });

  it('a server that stops between calls is started again for the next call', async () => {
    const m = marker();
    const { ex, source } = await executorFor('fixture', { command: NODE, args: [fixture('fixture-server.mjs'), m] }, ['mcp__fixture__*']);
    expect(serverProcesses(m)).toHaveLength(1);
    await pool.shutdown(); // as after 10 idle minutes
    expect(serverProcesses(m)).toEqual([]);
    const r = await ex.execute({ id: 'again', name: 'mcp__fixture__fail', args: { why: 'x' } });
    expect(r.result.diagnosis?.code).toBe('mcp_tool_error');
    expect(serverProcesses(m)).toHaveLength(1);
    await source.close();
  });
});

describe('tool names', () => {
  it('characters outside [A-Za-z0-9_-] become _, long names are cut with a hash, and a clash is refused naming both', () => {
    expect(mcpToolName('my.docs', 'search/v2')).toBe('mcp__my_docs__search_v2');
    const long = mcpToolName('everything', 'a'.repeat(80));
    expect(long).toHaveLength(64);
    expect(long).not.toBe(mcpToolName('everything', `${'a'.repeat(79)}b`));
    const cfg = serverConfig('x', { command: NODE });
    const r = selectTools(
      cfg,
      [
        { name: 'get.file', inputSchema: { type: 'object' } },
        { name: 'get_file', inputSchema: { type: 'object' } },
      ],
      ['mcp__x__*'],
    );
    expect(r.clash).toBe('MCP server "x" has tools "get.file" and "get_file", which both become mcp__x__get_file');
  });
});
