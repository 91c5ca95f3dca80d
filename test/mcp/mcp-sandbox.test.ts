/**
 * A stdio MCP server with `sandbox: true` in mcp.json runs inside the sandbox: it cannot read the
 * server's environment or /etc/shadow, write outside, or reach the host's loopback, and it receives
 * only the variables its definition names.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMcpConfig } from '../../src/mcp/mcp-config.js';
import { GroupStdioTransport } from '../../src/mcp/stdio-group-transport.js';

const SECRET = `sk-mcp-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
let dir: string;

// prints one JSON-RPC notification with what it could reach, then waits to be closed
const PROBE = `
const fs = require('fs');
const tryRead = (p) => { try { return fs.readFileSync(p, 'utf8').replace(/\\0/g, '\\n'); } catch (e) { return 'ERR ' + e.code; } };
const tryWrite = (p) => { try { fs.writeFileSync(p, 'x'); return 'WROTE'; } catch (e) { return 'ERR ' + e.code; } };
const params = {
  parentEnv: tryRead('/proc/' + process.ppid + '/environ') + tryRead('/proc/1/environ'),
  shadow: tryRead('/etc/shadow'),
  writeEtc: tryWrite('/etc/mcp-escape'),
  env: process.env,
};
process.stdout.write(JSON.stringify({ jsonrpc: '2.0', method: 'probe', params }) + '\\n');
setInterval(() => {}, 1000);
`;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rt-mcp-sbx-'));
  writeFileSync(join(dir, 'probe.cjs'), PROBE, { mode: 0o644 });
  // an MCP server's folder as a package leaves it: on a root server the sandbox's user reads it as others do
  chmodSync(dir, 0o755);
  chmodSync(join(dir, 'probe.cjs'), 0o644);
  process.env.RT_MCP_TEST_SECRET_TOKEN = SECRET;
});
afterAll(() => {
  delete process.env.RT_MCP_TEST_SECRET_TOKEN;
  rmSync(dir, { recursive: true, force: true });
});

describe('a stdio MCP server with sandbox: true', () => {
  it('runs inside the sandbox and gets only the env its definition names', async () => {
    const parsed = parseMcpConfig(
      { mcpServers: { probe: { command: process.execPath, args: ['probe.cjs'], cwd: dir, env: { GREETING: 'hello' }, sandbox: true } } },
      { file: 'mcp.json', baseDir: dir, env: process.env },
    );
    const server = parsed.servers[0];
    expect(server.transport).toMatchObject({ type: 'stdio', sandbox: { mode: 'on', network: { mode: 'none' } } });
    if (server.transport.type !== 'stdio') throw new Error('stdio expected');
    const t = new GroupStdioTransport(server.transport, { killGraceMs: 500 });
    const got = new Promise<Record<string, unknown>>((resolve) => {
      t.onmessage = (m) => resolve((m as unknown as { params: Record<string, unknown> }).params);
    });
    await t.start();
    try {
      const p = await got;
      expect(String(p.parentEnv)).not.toContain(SECRET);
      expect(String(p.shadow)).toMatch(/^ERR/);
      // read-only mount (EROFS), or on a root server refused first by root's ownership of /etc (EACCES)
      expect(p.writeEtc).toMatch(/^ERR (EROFS|EACCES)$/);
      expect(p.env).toMatchObject({ GREETING: 'hello', HOME: '/tmp/home' });
      expect(JSON.stringify(p.env)).not.toContain(SECRET);
    } finally {
      await t.close();
    }
  });

  it('refuses a bad sandbox value naming the field', () => {
    const parsed = parseMcpConfig({ mcpServers: { probe: { command: 'x', sandbox: { network: 'everywhere' } } } }, { file: 'mcp.json', baseDir: dir, env: {} });
    expect(parsed.problems.map((q) => `${q.field} ${q.message}`).join('\n')).toMatch(/mcpServers\.probe\.sandbox/);
  });
});
