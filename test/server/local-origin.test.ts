/**
 * Without a token the server is loopback-only. A browser page elsewhere must not reach it anyway:
 * DNS rebinding (a foreign Host header) and cross-site requests (a foreign Origin: CSRF uploads and
 * cancels, cross-site WebSocket hijacking) are refused with 403.
 */
import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FakeRunService } from './fake-run-service.js';
import { startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

/** fetch() will not set Host; node:http will. */
function raw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

function wsOpen(url: string, headers: Record<string, string>): Promise<{ opened: boolean; status?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('open', () => {
      ws.close();
      resolve({ opened: true });
    });
    ws.on('unexpected-response', (_req, res) => {
      resolve({ opened: false, status: res.statusCode });
      res.resume();
    });
    ws.on('error', () => resolve({ opened: false }));
  });
}

describe('loopback server without a token', () => {
  it('refuses a foreign Host header (DNS rebinding) but serves loopback names', async () => {
    server = await startTestServer(new FakeRunService());
    const port = new URL(server.url).port;
    const evil = await raw(`${server.url}/api/runs`, { headers: { host: `attacker.example:${port}` } });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body).error.code).toBe('forbidden');
    const create = await raw(`${server.url}/api/runs`, {
      method: 'POST',
      headers: { host: `attacker.example:${port}`, 'content-type': 'application/json' },
      body: JSON.stringify({ plugin: 'echo', goal: 'g', input: {} }),
    });
    expect(create.status).toBe(403);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost']) {
      expect((await raw(`${server.url}/api/runs`, { headers: { host } })).status, host).toBe(200);
    }
    expect((await raw(`${server.url}/healthz`, { headers: { host: 'probe.internal' } })).status).toBe(200);
  });

  it('refuses cross-site requests (foreign Origin): uploads, cancels, run creation, WebSocket', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service);
    const run = await service.create({ plugin: 'echo', goal: 'g', input: {} });
    const origin = 'http://evil.example';
    const cancel = await raw(`${server.url}/api/runs/${run.run_id}/cancel`, { method: 'POST', headers: { origin } });
    expect(cancel.status).toBe(403);
    const boundary = 'xBOUNDARYx';
    const upload = await raw(`${server.url}/api/uploads`, {
      method: 'POST',
      headers: { origin, 'content-type': `multipart/form-data; boundary=${boundary}` },
      body: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.csv"\r\nContent-Type: text/csv\r\n\r\na,b\r\n--${boundary}--\r\n`,
    });
    expect(upload.status).toBe(403);
    expect((await raw(`${server.url}/api/runs`, { headers: { origin: 'null' } })).status).toBe(403);
    const wsUrl = `${server.url.replace('http', 'ws')}/api/runs/${run.run_id}/ws`;
    expect(await wsOpen(wsUrl, { origin })).toEqual({ opened: false, status: 403 });

    // the page itself (same origin) and local tools (no Origin, or a loopback dev server) still work
    expect((await raw(`${server.url}/api/runs`, { headers: { origin: server.url } })).status).toBe(200);
    expect((await raw(`${server.url}/api/runs`, { headers: { origin: 'http://localhost:5173' } })).status).toBe(200);
    expect((await wsOpen(wsUrl, { origin: server.url })).opened).toBe(true);
    expect((await wsOpen(wsUrl, {})).opened).toBe(true);
  });

  it('leaves Host and Origin alone when a token guards the server', async () => {
    server = await startTestServer(new FakeRunService(), { token: 's3cret-0123456789abcdefghij' });
    const r = await raw(`${server.url}/api/runs`, {
      headers: { host: 'api.example.com', origin: 'https://app.example.com', authorization: 'Bearer s3cret-0123456789abcdefghij' },
    });
    expect(r.status).toBe(200);
  });
});
