import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FilteringProxy } from '../../src/sandbox/network-proxy.js';
import { launchSandboxed } from '../../src/sandbox/sandbox-launch.js';
import { resolveSandboxPolicy, type AgentSandboxSettings } from '../../src/sandbox/sandbox-policy.js';
import { createExecTool } from '../../src/tools/exec-tool.js';
import { ProcessRegistry } from '../../src/tools/process-registry.js';

// A local HTTP server stands for a service on the host's loopback (the Runtrail server, a database).
let server: Server;
let port = 0;
let hits = 0;
let ws: string;
let registry: ProcessRegistry | null = null;

beforeAll(async () => {
  ws = mkdtempSync(join(tmpdir(), 'rt-proxy-'));
  server = createServer((_req, res) => {
    hits++;
    res.end('local secret\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(ws, { recursive: true, force: true });
});
afterEach(async () => {
  await registry?.shutdown();
  registry = null;
});

async function run(command: string, agent: AgentSandboxSettings) {
  registry = new ProcessRegistry({ sandbox: resolveSandboxPolicy(undefined, agent) });
  const exec = createExecTool({ registry, scopeKey: 'run_net', cwd: ws });
  return exec.execute({ command, timeout: 30 });
}

describe('the filtering proxy', () => {
  it('tunnels to an allowed host and refuses one off the list, each refusal reported', async () => {
    const denied: string[] = [];
    // the test widens the address rule to reach its own loopback server; the default refuses it (below)
    const proxy = await FilteringProxy.start({ allow: [`localhost:${port}`], addressAllowed: () => true, onDenied: (d) => denied.push(`${d.host}:${d.port}`) });
    try {
      const get = (url: string) =>
        new Promise<{ status: number; body: string }>((resolve, reject) => {
          const req = request({ socketPath: proxy.socketPath, path: url, headers: { host: new URL(url).host } }, (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          });
          req.on('error', reject);
          req.end();
        });
      const ok = await get(`http://localhost:${port}/`);
      expect(ok).toEqual({ status: 200, body: 'local secret\n' });
      const refused = await get(`http://example.invalid:${port}/`);
      expect(refused.status).toBe(403);
      expect(refused.body).toMatch(/runtrail sandbox refused a connection to example\.invalid:\d+: .*not on the allowlist/);
      expect(denied).toEqual([`example.invalid:${port}`]);
    } finally {
      await proxy.close();
    }
  });

  it('refuses every spelling of a loopback address on its allowlist (CONNECT and plain HTTP), the local server never reached', async () => {
    const spellings = [
      '127.0.0.1',
      '127.1',
      '0x7f.1',
      '0177.0.0.1',
      '2130706433',
      '0x7f000001',
      '127.0.0.1.',
      '[::1]',
      '[::127.0.0.1]',
      '[::ffff:127.0.0.1]',
      '[::ffff:7f00:1]',
      '[64:ff9b::127.0.0.1]',
      '[2002:7f00:1::]',
      'localhost',
      'localhost.',
    ];
    const proxy = await FilteringProxy.start({ allow: spellings.map((h) => `${h}:${port}`) });
    const before = hits;
    try {
      for (const host of spellings) {
        const connect = await new Promise<string>((resolve, reject) => {
          const req = request({ socketPath: proxy.socketPath, method: 'CONNECT', path: `${host}:${port}` });
          // node answers a CONNECT with 'connect' whatever the status; the refusal's text follows on the socket
          req.on('connect', (res, socket, head) => {
            let body = head.toString();
            socket.on('data', (c) => (body += c));
            socket.on('end', () => resolve(`${res.statusCode} ${body}`));
            socket.on('error', () => resolve(`${res.statusCode} ${body}`));
          });
          req.on('response', (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve(`${res.statusCode} ${body}`));
          });
          req.on('error', reject);
          req.end();
        });
        // a resolver may not answer `localhost.` at all: refused either way
        const refused = host === 'localhost.' ? /^403 .*(loopback|does not resolve)/ : /^403 .*(loopback|carrying 127\.0\.0\.1)/;
        expect(connect, host).toMatch(refused);
        const plain = await new Promise<string>((resolve, reject) => {
          const req = request({ socketPath: proxy.socketPath, path: `http://${host}:${port}/`, headers: { host: `${host}:${port}` } }, (res) => {
            let body = '';
            res.on('data', (c) => (body += c));
            res.on('end', () => resolve(`${res.statusCode} ${body}`));
          });
          req.on('error', reject);
          req.end();
        });
        expect(plain, host).toMatch(refused);
      }
      expect(hits).toBe(before);
    } finally {
      await proxy.close();
    }
  });
});

describe('network inside the sandbox', () => {
  it('refuses an allowlisted name that resolves to 127.0.0.1, and says which host in a sandbox_denied diagnosis', async () => {
    const before = hits;
    const r = await run(
      `curl -sS --max-time 10 http://localhost:${port}/; echo; curl -sS --max-time 10 -o /dev/null -w '%{http_code}' http://localhost:${port}/`,
      {
        network: { allow: [`localhost:${port}`] },
      },
    );
    expect(hits).toBe(before);
    expect(r.content).toMatch(/runtrail sandbox refused a connection to localhost:\d+: localhost resolves to 127\.0\.0\.1/);
    expect(r.content).toContain('403');
    expect(r.details).toMatchObject({ sandbox: { mode: 'on', network: `allow localhost:${port}` } });
  });

  it('refuses a host that is not on the allowlist (CONNECT for https), as sandbox_denied naming it', async () => {
    const r = await run('curl -sS --max-time 10 https://example.com/ ; exit 7', { network: { allow: ['registry.npmjs.org'] } });
    expect(r.ok).toBe(false);
    expect(r.diagnosis).toMatchObject({ code: 'sandbox_denied' });
    expect(r.diagnosis?.summary).toContain('example.com:443');
  });

  it('has no network at all without an allowlist (no proxy, no route)', async () => {
    const r = await run('curl -sS --max-time 5 https://registry.npmjs.org/-/ping; echo "exit=$?"; env | grep -ci _proxy', {});
    expect(r.content).toMatch(/exit=(6|7)/);
    expect(r.content).toMatch(/\n0\n/);
  });

  it('reaches an allowed host through the bridge inside and the proxy outside (curl with HTTP_PROXY, a widened address rule)', async () => {
    const policy = resolveSandboxPolicy(undefined, { network: { allow: [`localhost:${port}`] } });
    if (policy.mode !== 'on') throw new Error('expected the sandbox on');
    const launch = await launchSandboxed(
      policy,
      { file: '/bin/sh', args: ['-c', `curl -sS --max-time 10 http://localhost:${port}/`], cwd: ws, writable: [ws] },
      { addressAllowed: () => true },
    );
    try {
      const r = await new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(launch.file, launch.args, { env: { PATH: '/usr/bin:/bin', ...launch.env } });
        let out = '';
        child.stdout.on('data', (c) => (out += c));
        child.stderr.on('data', (c) => (out += c));
        child.on('close', (code) => resolve({ code, out }));
      });
      expect(r).toEqual({ code: 0, out: 'local secret\n' });
    } finally {
      await launch.cleanup();
    }
  });
});
