/** The token guard: a refused WebSocket upgrade must not keep its socket (nor the server) open. */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeRunService } from './fake-run-service.js';
import { startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

/** Sends a raw upgrade request and reports the status line and whether the server closed the socket. */
function rawUpgrade(url: string, path: string, waitMs: number): Promise<{ statusLine: string; closedByServer: boolean }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname);
    let data = '';
    let closed = false;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (data += d));
    sock.on('end', () => (closed = true));
    sock.on('close', () => (closed = true));
    sock.on('error', reject);
    sock.on('connect', () => {
      sock.write(
        `GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      );
    });
    setTimeout(() => {
      sock.destroy();
      resolve({ statusLine: data.split('\r\n')[0] ?? '', closedByServer: closed });
    }, waitMs);
  });
}

describe('token guard and WebSocket upgrades', () => {
  it('answers 401 to an upgrade without the token and closes the socket', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service, { token: 's3cret-0123456789abcdefghij' });
    const run = await service.create({ plugin: 'echo', goal: 'g', input: {} });
    const r = await rawUpgrade(server.url, `/api/runs/${run.run_id}/ws`, 500);
    expect(r.statusLine).toContain('401');
    expect(r.closedByServer).toBe(true);
    const t0 = Date.now();
    await server.stop();
    server = null;
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
