/** The values expanded into an MCP server's env, headers and args are secrets: masked everywhere, never in the data dir's ledger. */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { maskSecrets } from '../../src/events/secret-masker.js';
import { McpServerPool } from '../../src/mcp/mcp-server-pool.js';
import { marker } from '../tools/helpers.js';
import { everythingStdio, serverConfig } from './helpers.js';

let pool: McpServerPool | null = null;
let dir = '';
afterEach(async () => {
  await pool?.shutdown();
  pool = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const env = {
  MY_TOKEN: 'mcp-env-token-7c1e9a2b4d6f8091',
  MY_KEY: 'mcp-arg-key-3b5d7f9a1c2e4068',
  MY_HEADER: 'mcp-header-value-5a7c9e1b3d4f6082',
  HOME: '/root',
  PORT: '8080',
};

describe('MCP server secrets', () => {
  it('expanded env, header and arg values, and credential headers written literally, are masked from then on; paths and numbers are not', () => {
    serverConfig(
      'local',
      { command: 'node', args: ['server.js', '--key=${MY_KEY}', '--home=${HOME}', '--port=${PORT}'], env: { API_TOKEN: '${MY_TOKEN}', HOME_DIR: '${HOME}' } },
      env,
    );
    serverConfig(
      'remote',
      { url: 'https://mcp.example.com/mcp', headers: { 'X-Trace': '${MY_HEADER}', Authorization: 'Bearer literal-bearer-0a1b2c3d4e5f' } },
      env,
    );
    const text = `env ${env.MY_TOKEN} arg ${env.MY_KEY} header ${env.MY_HEADER} bearer literal-bearer-0a1b2c3d4e5f home /root/x port 8080`;
    expect(maskSecrets(text)).toBe('env [redacted] arg [redacted] header [redacted] bearer [redacted] home /root/x port 8080');
    expect(maskSecrets(Buffer.from(env.MY_KEY).toString('base64'))).toBe('[redacted]');
  });

  it('the ledger of running servers in the data dir names the command as written, without the expanded values', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-mcp-ledger-'));
    pool = new McpServerPool({ killGraceMs: 300, ledgerDir: join(dir, 'mcp') });
    const m = marker();
    const def = everythingStdio(m, { env: { API_TOKEN: '${MY_TOKEN}' } });
    def.args = [...(def.args as string[]), '--key=${MY_KEY}'];
    const lease = await pool.acquire(serverConfig('local', def, env));
    try {
      const files = readdirSync(join(dir, 'mcp')).filter((f) => /^servers-.*\.json$/.test(f));
      expect(files).toHaveLength(1);
      const ledger = readFileSync(join(dir, 'mcp', files[0]), 'utf8');
      expect(ledger).toContain('--key=${MY_KEY}');
      expect(ledger).not.toContain(env.MY_KEY);
      expect(ledger).not.toContain(env.MY_TOKEN);
    } finally {
      lease.release();
    }
  });
});
