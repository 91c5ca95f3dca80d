/** Stream clients (SSE + WebSocket) are bounded: past maxStreamClients a new one gets 503, and a freed slot is reusable. */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FakeRunService } from './fake-run-service.js';
import { postJson, startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('stream client limit', () => {
  it('refuses the third client with 503 (SSE and WebSocket), then accepts one when a slot frees', async () => {
    const service = new FakeRunService();
    service.scriptFor = () => ({ deltas: ['a', 'b', 'c'], pauseAfter: 1 });
    server = await startTestServer(service, { maxStreamClients: 2, wsHelloMs: 10 });
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    const events = `${server.url}/api/runs/${body.run_id}/events`;
    const wsUrl = `${server.url.replace('http', 'ws')}/api/runs/${body.run_id}/ws`;

    const c1 = new AbortController();
    const r1 = await fetch(events, { signal: c1.signal });
    expect(r1.status).toBe(200);
    const ws = new WebSocket(wsUrl);
    await new Promise((resolve, reject) => {
      ws.on('open', resolve);
      ws.on('error', reject);
    });

    const r3 = await fetch(events);
    expect(r3.status).toBe(503);
    expect(r3.headers.get('retry-after')).toBe('5');
    expect(((await r3.json()) as { error: { code: string } }).error.code).toBe('too_many_clients');
    const refused = await new Promise<number | undefined>((resolve) => {
      const w = new WebSocket(wsUrl);
      w.on('unexpected-response', (_req, res) => {
        res.resume();
        resolve(res.statusCode);
      });
      w.on('open', () => {
        w.close();
        resolve(101);
      });
      w.on('error', () => resolve(undefined));
    });
    expect(refused).toBe(503);

    c1.abort();
    ws.close();
    for (let i = 0; i < 100; i++) {
      const m = await (await fetch(`${server.url}/metrics`)).text();
      if ((/^runtrail_sse_clients 0$/m.test(m) && /^runtrail_ws_clients 0$/m.test(m)) || i === 99) break;
      await sleep(20);
    }
    await sleep(50);
    const again = new AbortController();
    const r4 = await fetch(events, { signal: again.signal });
    expect(r4.status).toBe(200);
    again.abort();
    service.release(body.run_id);
    await service.wait(body.run_id);
  });
});
