/**
 * The MCP servers that go wrong: each gets a clear `mcp_unavailable` diagnosis (the server's
 * name, the reason, the tail of its stderr), nothing hangs (bounded by connect_timeout_s at most), and
 * the process table holds none of its processes afterwards.
 */
import { execFileSync } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { McpConnection } from '../../src/mcp/mcp-connection.js';
import { McpUnavailableError } from '../../src/mcp/mcp-unavailable-error.js';
import type { DiagnosisInit } from '../../src/events/diagnosis.js';
import { marker } from '../tools/helpers.js';
import { fixture, freePort, NODE, serverConfig, serverProcesses } from './helpers.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  // no orphan: nothing a failed connect started is still running under this test process
  expect(ownChildren()).toEqual([]);
});

/** Live (non-zombie) children of this test process, from the process table. */
function ownChildren(): string[] {
  const out = execFileSync('ps', ['-o', 'pid=,stat=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^\d+\s+Z/.test(l) && !/\bps -o pid=/.test(l));
}

async function failure(name: string, def: Record<string, unknown>, env?: Record<string, string>): Promise<{ d: DiagnosisInit; ms: number }> {
  const t = performance.now();
  try {
    const c = await McpConnection.open(serverConfig(name, def, env ?? process.env), { killGraceMs: 300 });
    await c.close();
  } catch (e) {
    expect(e).toBeInstanceOf(McpUnavailableError);
    return { d: (e as McpUnavailableError).diagnosis, ms: performance.now() - t };
  }
  throw new Error('expected the connection to fail');
}

describe('MCP servers that cannot be used', () => {
  it('a command that does not exist', async () => {
    const { d } = await failure('ghost', { command: 'runtrail-no-such-mcp-server', args: ['--stdio'] });
    expect(d.code).toBe('mcp_unavailable');
    expect(d.summary).toBe(
      'MCP server "ghost" is unavailable: command "runtrail-no-such-mcp-server" was not found (spawn runtrail-no-such-mcp-server ENOENT); check "command" and PATH',
    );
    expect(d.hint).toContain('.runtrail/mcp.json');
  });

  it('a working folder that does not exist', async () => {
    const { d } = await failure('nowhere', { command: NODE, args: ['-e', '0'], cwd: '/no/such/folder' });
    expect(d.summary).toBe('MCP server "nowhere" is unavailable: its working folder /no/such/folder does not exist');
  });

  it('a server that exits at once: its exit code and the tail of its stderr', async () => {
    const m = marker();
    const { d } = await failure('crashy', { command: NODE, args: [fixture('exits-at-once.mjs'), m] });
    expect(serverProcesses(m)).toEqual([]);
    expect(d.summary).toBe('MCP server "crashy" is unavailable: it closed the connection before answering "initialize" (it exited with code 3)');
    expect(d.detail).toContain('fatal: cannot open /etc/nowhere/server.toml (ENOENT)');
  });

  it('a program that prints garbage on stdout fails at once (not after the connect timeout), and is ended', async () => {
    const m = marker();
    const { d, ms } = await failure('chatty', { command: NODE, args: [fixture('garbage-stdout.mjs'), m], connect_timeout_s: 20 });
    expect(d.summary).toContain(
      'MCP server "chatty" is unavailable: the server wrote a line on stdout that is not a JSON-RPC message: "Welcome to SuperTool v2! Type help for help."',
    );
    expect(d.hint).toContain('only JSON-RPC messages on stdout');
    expect(ms).toBeLessThan(15_000); // far below connect_timeout_s: it did not wait for it
    expect(serverProcesses(m)).toEqual([]);
  });

  it('a server that never answers initialize: connect_timeout_s, stderr tail, and its whole group ended', async () => {
    const m = marker();
    const { d } = await failure('mute', { command: NODE, args: [fixture('never-initializes.mjs'), m], connect_timeout_s: 1 });
    expect(d.summary).toBe('MCP server "mute" is unavailable: it did not answer "initialize" within 1 s');
    expect(d.detail).toContain('warming up the cache…');
    expect(d.hint).toContain('connect_timeout_s');
    // the server and the `sleep` it started are both gone
    expect(serverProcesses(m)).toEqual([]);
  });

  it('an HTTP server that is down', async () => {
    const port = await freePort();
    const { d } = await failure('down', { type: 'http', url: `http://127.0.0.1:${port}/mcp` });
    expect(d.summary).toBe(`MCP server "down" is unavailable: nothing listens at http://127.0.0.1:${port}/mcp (connection refused)`);
    expect(d.retryable).toBe(true);
  });

  it('an HTTP server that answers 401: named, and the token never in the diagnosis', async () => {
    const srv = createServer((req, res) => {
      res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
      res.end(JSON.stringify({ error: 'invalid_token', seen: req.headers.authorization }));
    });
    servers.push(srv);
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as { port: number }).port;
    const token = 'tok_9f8e7d6c5b4a39281706';
    const { d } = await failure(
      'docs',
      { type: 'http', url: `http://127.0.0.1:${port}/mcp`, headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } },
      { DOCS_TOKEN: token },
    );
    expect(d.summary).toBe(`MCP server "docs" is unavailable: the server at http://127.0.0.1:${port}/mcp answered 401 Unauthorized`);
    expect(d.hint).toContain('check the credentials in "headers" of server "docs" (Authorization)');
    expect(JSON.stringify(d)).not.toContain(token);
  });

  it('a definition using an unset ${VAR} fails naming the variable, without starting anything', async () => {
    const { d } = await failure('keyed', { command: NODE, args: ['-e', '0'], env: { API_KEY: '${MY_API_KEY}' } }, {});
    expect(d.summary).toBe('MCP server "keyed" is unavailable: environment variable MY_API_KEY is not set (used in .runtrail/mcp.json mcpServers.keyed)');
  });
});
