import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { FakeRunService } from './fake-run-service.js';
import { postJson, readSse, startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

interface WsMsg {
  id: number | null;
  data?: Record<string, unknown>;
  error?: { code: string };
}

function collect(url: string, opts: { send?: unknown; stopAfter?: number } = {}): Promise<{ msgs: WsMsg[]; raw: string[]; code: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    const raw: string[] = [];
    ws.on('open', () => {
      if (opts.send !== undefined) ws.send(JSON.stringify(opts.send));
    });
    ws.on('message', (d) => {
      raw.push(String(d));
      if (opts.stopAfter && raw.length >= opts.stopAfter) ws.close();
    });
    ws.on('close', (code) => resolve({ raw, msgs: raw.map((r) => JSON.parse(r) as WsMsg), code }));
    ws.on('error', reject);
  });
}

describe('WebSocket run stream', () => {
  it('sends the same frames as SSE as {id, data} messages and closes a finished run', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service, { wsHelloMs: 10 });
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(body.run_id);
    const sse = await readSse(`${server.url}/api/runs/${body.run_id}/events`);
    const ws = await collect(`${server.url.replace('http', 'ws')}/api/runs/${body.run_id}/ws`);
    expect(ws.code).toBe(1000);
    expect(ws.msgs.map((m) => m.id)).toEqual(sse.events.map((e) => Number(e.id)));
    // data is the very JSON text of the SSE data line
    expect(ws.raw.map((r) => r.slice(r.indexOf('"data":') + 7, -1))).toEqual(sse.events.map((e) => e.data));
  });

  it('resumes after N from ?after=N and from a first { "after": N } message', async () => {
    const service = new FakeRunService();
    service.scriptFor = () => ({ deltas: Array.from({ length: 20 }, (_, i) => `${i} `), tool: true });
    server = await startTestServer(service, { wsHelloMs: 5000 });
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(body.run_id);
    const all = (await readSse(`${server.url}/api/runs/${body.run_id}/events`)).events.map((e) => Number(e.id));
    const n = all[5];
    const base = `${server.url.replace('http', 'ws')}/api/runs/${body.run_id}/ws`;
    const q = await collect(`${base}?after=${n}`);
    const m = await collect(base, { send: { after: n } });
    expect(q.msgs.map((x) => x.id)).toEqual(all.filter((id) => id > n));
    expect(m.msgs.map((x) => x.id)).toEqual(all.filter((id) => id > n));
  });

  it('answers a bad resume message and an unknown run with an error message', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service, { wsHelloMs: 5000 });
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(body.run_id);
    const bad = await collect(`${server.url.replace('http', 'ws')}/api/runs/${body.run_id}/ws`, { send: { after: 'x' }, stopAfter: 1 });
    expect(bad.msgs[0].error?.code).toBe('invalid_request');
    const missing = await collect(`${server.url.replace('http', 'ws')}/api/runs/run_nope/ws?after=0`);
    expect(missing.msgs[0].error?.code).toBe('not_found');
    expect(missing.code).toBe(4404);
    const plain = await fetch(`${server.url}/api/runs/${body.run_id}/ws`);
    expect(plain.status).toBe(426);
    expect(((await plain.json()) as { error: { code: string } }).error.code).toBe('upgrade_required');
  });

  it('drops a client that stops reading with a final error message; the run goes on', async () => {
    const service = new FakeRunService();
    const big = 'y'.repeat(4000);
    service.scriptFor = () => ({ deltas: Array.from({ length: 3000 }, () => big) }); // 12 MB: more than loopback socket buffers hold
    server = await startTestServer(service, { maxClientQueueBytes: 64 * 1024, slowClientMs: 200 });
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(body.run_id);
    const got = await new Promise<{ last: WsMsg; count: number; code: number }>((resolve, reject) => {
      const ws = new WebSocket(`${server!.url.replace('http', 'ws')}/api/runs/${body.run_id}/ws?after=0`);
      const msgs: string[] = [];
      ws.on('open', () => {
        // stop reading from the socket: the server's send buffer fills up
        const sock = (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
        sock.pause();
        const wait = async (): Promise<void> => {
          for (let i = 0; i < 500; i++) {
            const m = await fetch(`${server!.url}/metrics`).then((r) => r.text());
            if (/runtrail_stream_clients_dropped_total 1/.test(m)) break;
            await new Promise((r) => setTimeout(r, 10));
          }
          sock.resume();
        };
        void wait();
      });
      ws.on('message', (d) => msgs.push(String(d)));
      ws.on('close', (code) => resolve({ last: JSON.parse(msgs.at(-1)!) as WsMsg, count: msgs.length, code }));
      ws.on('error', reject);
    });
    expect(got.code).toBe(1013);
    expect(got.last.id).toBeNull();
    expect(got.last.data?.type).toBe('error');
    expect((got.last.data?.diagnosis as { code: string }).code).toBe('client_too_slow');
    expect(got.count).toBeLessThan(3000);
    expect((await service.get(body.run_id))!.status).toBe('completed');
  });
});
