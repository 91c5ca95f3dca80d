/** The process's MCP servers: one connect shared by concurrent runs, stopped when idle, restarted on demand. */
import { afterEach, describe, expect, it } from 'vitest';
import { McpServerPool } from '../../src/mcp/mcp-server-pool.js';
import { eventually, marker } from '../tools/helpers.js';
import { everythingStdio, serverConfig, serverProcesses } from './helpers.js';

let pool: McpServerPool;
afterEach(async () => {
  await pool?.shutdown();
});

describe('McpServerPool', () => {
  it('runs that start together share one connect and one process', async () => {
    pool = new McpServerPool({ killGraceMs: 300 });
    const m = marker();
    const cfg = serverConfig('everything', everythingStdio(m));
    const leases = await Promise.all([pool.acquire(cfg), pool.acquire(cfg), pool.acquire(serverConfig('everything', everythingStdio(m)))]);
    expect(new Set(leases.map((l) => l.connection)).size).toBe(1);
    expect(serverProcesses(m)).toHaveLength(1);
    expect(pool.list()).toEqual([{ server: 'everything', state: 'ready', leases: 3, pid: leases[0].connection.pid, tools: expect.any(Number) }]);
    for (const l of leases) l.release();
    expect(pool.list()[0]).toMatchObject({ state: 'idle', leases: 0 });
  });

  it('a server no run has used for the idle time stops; the next run starts it again', async () => {
    pool = new McpServerPool({ killGraceMs: 300, idleMs: 300 });
    const m = marker();
    const cfg = serverConfig('everything', everythingStdio(m));
    const a = await pool.acquire(cfg);
    const pid = a.connection.pid;
    a.release();
    expect(await eventually(() => serverProcesses(m).length === 0, 5_000)).toBe(true);
    expect(pool.list()).toEqual([]);
    const b = await pool.acquire(cfg);
    expect(b.connection.pid).not.toBe(pid);
    b.release();
  });

  it('a held server does not idle out', async () => {
    pool = new McpServerPool({ killGraceMs: 300, idleMs: 200 });
    const m = marker();
    const lease = await pool.acquire(serverConfig('everything', everythingStdio(m)));
    await new Promise((r) => setTimeout(r, 600));
    expect(serverProcesses(m)).toHaveLength(1);
    expect((await lease.connection.callTool('echo', { message: 'still here' })).content).toEqual([{ type: 'text', text: 'Echo: still here' }]);
    lease.release();
  });

  it('a server that crashes is dropped; the next acquire starts a new one', async () => {
    pool = new McpServerPool({ killGraceMs: 300 });
    const m = marker();
    const cfg = serverConfig('everything', everythingStdio(m));
    const a = await pool.acquire(cfg);
    process.kill(a.connection.pid!, 'SIGKILL');
    expect(await eventually(() => a.connection.closed, 5_000)).toBe(true);
    a.release();
    const b = await pool.acquire(cfg);
    expect(b.connection).not.toBe(a.connection);
    expect((await b.connection.callTool('echo', { message: 'back' })).content).toEqual([{ type: 'text', text: 'Echo: back' }]);
    b.release();
  });
});
