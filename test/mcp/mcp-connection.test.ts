/**
 * One connection to a real MCP server: the reference server-everything over stdio and over
 * Streamable HTTP (and the legacy SSE fallback), the filesystem server, and our fixture server for
 * what the reference servers do not do. After each, the process table holds none of its processes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { McpConnection } from '../../src/mcp/mcp-connection.js';
import { eventually, marker } from '../tools/helpers.js';
import { everythingStdio, fixture, FILESYSTEM, NODE, serverConfig, serverProcesses, startEverythingHttp, type HttpServer } from './helpers.js';

const open: McpConnection[] = [];
const http: HttpServer[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
  await Promise.all(http.splice(0).map((h) => h.stop()));
});

async function connect(name: string, def: Record<string, unknown>): Promise<McpConnection> {
  const c = await McpConnection.open(serverConfig(name, def), { killGraceMs: 500 });
  open.push(c);
  return c;
}

describe('McpConnection over stdio (server-everything)', () => {
  it('connects, lists the tools, calls echo and get-sum, and leaves no process behind on close', async () => {
    const m = marker();
    const c = await connect('everything', everythingStdio(m));
    const names = c.tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'get-structured-content', 'trigger-long-running-operation']));
    expect(c.timings.totalMs).toBeGreaterThan(0);
    expect(c.pid).toBeGreaterThan(0);
    expect(serverProcesses(m)).toHaveLength(1);
    const echo = await c.callTool('echo', { message: 'hello' });
    expect(echo.content).toEqual([{ type: 'text', text: 'Echo: hello' }]);
    const sum = await c.callTool('get-sum', { a: 2, b: 3 });
    expect(JSON.stringify(sum.content)).toContain('5');
    await c.close();
    expect(serverProcesses(m)).toEqual([]);
  });

  it('hands progress notifications of a long tool to the call', async () => {
    const c = await connect('everything', everythingStdio(marker()));
    const seen: Array<{ progress: number; total?: number }> = [];
    const r = await c.callTool('trigger-long-running-operation', { duration: 0.6, steps: 3 }, { onProgress: (p) => seen.push(p) });
    expect(JSON.stringify(r.content)).toContain('Long running operation completed');
    // the SDK can drop the last notification: at least one, increasing, with the total
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]).toMatchObject({ progress: 1, total: 3 });
  });

  it('a cancelled call sends notifications/cancelled: the server sees the abort', async () => {
    const c = await connect('fixture', { command: NODE, args: [fixture('fixture-server.mjs'), marker()] });
    const ctl = new AbortController();
    const call = c.callTool('silent', {}, { signal: ctl.signal });
    setTimeout(() => ctl.abort(new Error('run cancelled')), 100);
    await expect(call).rejects.toThrow();
    expect(await eventually(() => c.stderr().includes('silent: cancelled'), 5_000)).toBe(true);
  });

  it('an idle call ends after idle_timeout_s without progress, and progress keeps a call alive past it', async () => {
    const c = await connect('fixture', { command: NODE, args: [fixture('fixture-server.mjs'), marker()], idle_timeout_s: 0.3 });
    await expect(c.callTool('silent', {})).rejects.toMatchObject({ code: -32001 });
    // 6 steps of 100 ms = 600 ms, twice the idle timeout, but each step resets it
    const r = await c.callTool('steps', { n: 6 }, { onProgress: () => undefined });
    expect(r.content).toEqual([{ type: 'text', text: 'done in 6 steps' }]);
  });

  it('log notifications during a call go to that call; list_changed refreshes the tools', async () => {
    const c = await connect('fixture', { command: NODE, args: [fixture('fixture-server.mjs'), marker()] });
    const logs: string[] = [];
    await c.callTool('logs', {}, { onLog: (l) => logs.push(`${l.level}:${String(l.data)}`) });
    expect(logs).toEqual(['info:step 1 of 3', 'warning:step 2 of 3', 'error:step 3 of 3']);
    const changed: string[][] = [];
    c.onToolsChanged((tools) => changed.push(tools.map((t) => t.name)));
    await c.callTool('add-tool', {});
    expect(await eventually(() => changed.length > 0, 5_000)).toBe(true);
    expect(changed.at(-1)).toContain('extra-1');
    expect(c.tools.map((t) => t.name)).toContain('extra-1');
  });

  it('the filesystem reference server lists a folder', async () => {
    const c = await connect('fs', { command: NODE, args: [FILESYSTEM, fixture('.')] });
    expect(c.tools.map((t) => t.name)).toEqual(expect.arrayContaining(['read_text_file', 'list_directory']));
    const r = await c.callTool('list_directory', { path: fixture('.') });
    expect(JSON.stringify(r.content)).toContain('fixture-server.mjs');
  });
});

describe('McpConnection over HTTP (server-everything)', () => {
  it('Streamable HTTP: connects, calls echo and gets progress', async () => {
    const h = await startEverythingHttp('streamableHttp', marker());
    http.push(h);
    const c = await connect('everything', { type: 'http', url: h.url });
    expect(c.transportUsed).toBe('streamable-http');
    expect(c.tools.map((t) => t.name)).toContain('echo');
    expect((await c.callTool('echo', { message: 'over http' })).content).toEqual([{ type: 'text', text: 'Echo: over http' }]);
    const seen: number[] = [];
    await c.callTool('trigger-long-running-operation', { duration: 0.4, steps: 2 }, { onProgress: (p) => seen.push(p.progress) });
    expect(seen[0]).toBe(1);
  });

  it('falls back to the legacy SSE transport when the server only speaks that', async () => {
    const h = await startEverythingHttp('sse', marker());
    http.push(h);
    const c = await connect('legacy', { type: 'http', url: h.url });
    expect(c.transportUsed).toBe('sse');
    expect((await c.callTool('echo', { message: 'over sse' })).content).toEqual([{ type: 'text', text: 'Echo: over sse' }]);
  });
});
