/**
 * One kept-alive socket carrying many requests with a body (a client reusing its connection to create
 * runs): the server must not leave a listener on the socket per request, which Node reports as
 * `MaxListenersExceededWarning: 11 close listeners added to [Socket]` and which grows without bound.
 */
import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeRunService } from './fake-run-service.js';
import { startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

/** POST `body` to `url` through `agent`; resolves with the status and the server's answer. */
function post(url: string, agent: Agent, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('a kept-alive socket', () => {
  it('20 requests with a body on one socket add no listener per request (no MaxListenersExceededWarning)', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      server = await startTestServer(new FakeRunService());
      const serverSockets: Socket[] = [];
      server.app.server.on('connection', (s: Socket) => serverSockets.push(s));
      const body = JSON.stringify({ plugin: 'echo', input: {} });
      for (let i = 0; i < 20; i++) {
        const r = await post(`${server.url}/api/runs`, agent, body);
        expect(r.status, r.text).toBe(201);
      }
      // every request went over the one socket
      expect(serverSockets).toHaveLength(1);
      const [socket] = serverSockets;
      // what a socket holds for itself (the server's own, the connection caps') does not grow with requests
      expect(socket.listenerCount('close')).toBeLessThan(5);
      // a warning is emitted on the next tick
      await new Promise((r) => setImmediate(r));
      expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
    } finally {
      agent.destroy();
      process.off('warning', onWarning);
    }
  });
});
