/**
 * mcp.json in the `.mcp.json` format: defaults, `${VAR}` expansion, per-server options, and every bad
 * definition named by file, field and value. What may be shown never holds an env or header value.
 */
import { describe, expect, it } from 'vitest';
import { MCP_DEFAULTS, parseMcpConfig, parseServerDefinition, shownUrl, type McpConfigProblem } from '../../src/mcp/mcp-config.js';

const ctx = { file: '.runtrail/mcp.json', env: { HOME: '/home/u', PATH: '/usr/bin', DOCS_TOKEN: 's3cr3t-token-value', PORT_X: '3001' }, baseDir: '/proj' };
const line = (p: McpConfigProblem) => `${p.level}: ${p.file}: ${p.field ? `${p.field}: ` : ''}${p.message}`;

describe('mcp.json', () => {
  it('the issue example: a stdio server with env and cwd, an http server with a ${VAR} header', () => {
    const r = parseMcpConfig(
      {
        mcpServers: {
          everything: { command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { K: 'v' }, cwd: '.' },
          docs: { type: 'http', url: 'http://127.0.0.1:${PORT_X}/mcp', headers: { Authorization: 'Bearer ${DOCS_TOKEN}' } },
        },
      },
      ctx,
    );
    expect(r.problems).toEqual([]);
    const [everything, docs] = r.servers;
    expect(everything.transport).toMatchObject({ type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], cwd: '/proj' });
    // a small safe base environment, then the definition's own
    expect(everything.transport.type === 'stdio' && everything.transport.env).toMatchObject({ K: 'v', HOME: '/home/u', PATH: '/usr/bin' });
    expect(everything.transport.type === 'stdio' && everything.transport.env.DOCS_TOKEN).toBeUndefined();
    expect(everything.options).toEqual({
      timeoutMs: 600_000,
      connectTimeoutMs: 30_000,
      idleTimeoutMs: 120_000,
      include: [],
      exclude: [],
      maxResultChars: 50_000,
    });
    expect(docs.transport).toEqual({ type: 'http', url: 'http://127.0.0.1:3001/mcp', headers: { Authorization: 'Bearer s3cr3t-token-value' } });
    expect(docs.shown).toEqual({ type: 'http', url: 'http://127.0.0.1:${PORT_X}/mcp', headers: ['Authorization'] });
    expect(everything.shown).toEqual({ type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], cwd: '.', env: ['K'] });
    expect(JSON.stringify(r.servers.map((s) => s.shown))).not.toContain('s3cr3t');
    expect(MCP_DEFAULTS).toEqual({ timeout_s: 600, connect_timeout_s: 30, idle_timeout_s: 120, max_result_chars: 50_000 });
  });

  it('per-server options, ${VAR:-default}, and "url" alone meaning http', () => {
    const r = parseMcpConfig(
      {
        mcpServers: {
          s: {
            url: 'https://mcp.example.com/mcp?key=${NOPE:-abc}',
            timeout_s: 30,
            connect_timeout_s: 5,
            idle_timeout_s: 10,
            include: ['read_*'],
            exclude: ['read_secret'],
            max_result_chars: 2000,
          },
        },
      },
      ctx,
    );
    expect(r.problems).toEqual([]);
    expect(r.servers[0].transport).toEqual({ type: 'http', url: 'https://mcp.example.com/mcp?key=abc', headers: {} });
    expect(r.servers[0].options).toEqual({
      timeoutMs: 30_000,
      connectTimeoutMs: 5_000,
      idleTimeoutMs: 10_000,
      include: ['read_*'],
      exclude: ['read_secret'],
      maxResultChars: 2000,
    });
    // a query string may carry a token: it is not shown
    expect(r.servers[0].shown.url).toBe('https://mcp.example.com/mcp?…');
    expect(shownUrl('http://user:pw@h:1/p?t=1')).toBe('http://h:1/p?…');
  });

  it('every bad definition is named by file, field and value', () => {
    const r = parseMcpConfig(
      {
        servers: {},
        mcpServers: {
          nocmd: { args: ['x'] },
          bad_type: { type: 'websocket', url: 'ws://x' },
          badurl: { type: 'http', url: 'ftp://files.example.com' },
          slow: { command: 'x', timeout_s: -1 },
          'bad name!': { command: 'x' },
          nourl: { type: 'http' },
          extra: { command: 'x', disabled: true },
          'my.docs': { command: 'x' },
          my_docs: { command: 'y' },
          unset: { command: 'x', env: { KEY: '${NOT_SET_ANYWHERE}' } },
          list: ['x'],
        },
      },
      ctx,
    );
    expect(r.problems.map(line)).toEqual([
      'warning: .runtrail/mcp.json: servers: is not a known field (servers go under "mcpServers"); it is ignored',
      'error: .runtrail/mcp.json: mcpServers.nocmd: needs "command" (a stdio server) or "url" (an http server)',
      'error: .runtrail/mcp.json: mcpServers.bad_type.type: must be one of stdio, http, sse, streamable-http, streamableHttp',
      'error: .runtrail/mcp.json: mcpServers.badurl.url: must be an http:// or https:// URL, got "ftp://files.example.com"',
      'error: .runtrail/mcp.json: mcpServers.slow.timeout_s: must be > 0',
      'error: .runtrail/mcp.json: mcpServers.bad name!: server name "bad name!" must be 1-64 characters of letters, digits, "_", "-" or "."',
      'error: .runtrail/mcp.json: mcpServers.nourl: an http server needs "url"',
      'warning: .runtrail/mcp.json: mcpServers.extra.disabled: is not a known field; it is ignored',
      'error: .runtrail/mcp.json: mcpServers.unset: uses ${NOT_SET_ANYWHERE}, which is not set in the environment (write ${NAME:-default} for a default)',
      'error: .runtrail/mcp.json: mcpServers.list: must be an object with "command" (stdio) or "url" (http), got ["x"]',
      'error: .runtrail/mcp.json: mcpServers.my_docs: its tools would be named mcp__my_docs__… like those of server "my.docs"; rename one of them',
    ]);
    // kept, so a run that needs it fails naming the variable
    expect(r.servers.find((s) => s.name === 'unset')?.unusable).toBe(
      'environment variable NOT_SET_ANYWHERE is not set (used in .runtrail/mcp.json mcpServers.unset)',
    );
  });

  it('a file that is not an object, or has no mcpServers', () => {
    expect(parseMcpConfig([], ctx).problems.map(line)).toEqual([
      'error: .runtrail/mcp.json: must be a JSON object like { "mcpServers": { "name": { "command": "…" } } }',
    ]);
    expect(parseMcpConfig({}, ctx).problems.map(line)).toEqual(['error: .runtrail/mcp.json: mcpServers: is missing: the servers go under "mcpServers"']);
  });

  it('an inline definition in an agent file is checked the same way, at its own field path', () => {
    const problems: McpConfigProblem[] = [];
    expect(
      parseServerDefinition('docs', { type: 'http' }, { file: '.runtrail/agents/a.md', at: 'mcpServers[1]', env: {}, baseDir: '/p' }, problems),
    ).toBeNull();
    expect(problems.map(line)).toEqual(['error: .runtrail/agents/a.md: mcpServers[1].docs: an http server needs "url"']);
  });
});
