/** A burst of { "after": N } messages on one socket must not start one history read per message. */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { FakeRunService } from './fake-run-service.js';
import { postJson, readSse, startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

/** Like RunService, every events() call first reads the history from disk (here: a 5 ms wait). */
class CountingService extends FakeRunService {
  started = 0;
  active = 0;
  maxActive = 0;
  override async *events(runId: string, opts: { after?: number; signal?: AbortSignal } = {}): AsyncIterable<AgentEvent> {
    this.started++;
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    try {
      await new Promise((r) => setTimeout(r, 5));
      yield* super.events(runId, opts);
    } finally {
      this.active--;
    }
  }
}

describe('WebSocket resume messages', () => {
  it('a burst of 500 { after } messages re-reads the history a few times, and the stream follows the last one', async () => {
    const service = new CountingService();
    service.scriptFor = () => ({ deltas: Array.from({ length: 20 }, (_, i) => `${i} `), tool: true });
    server = await startTestServer(service, { wsHelloMs: 5000 });
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(body.run_id);
    const all = (await readSse(`${server.url}/api/runs/${body.run_id}/events`)).events.map((e) => Number(e.id));
    service.started = 0;
    service.maxActive = 0;
    const n = all[7];
    const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/runs/${body.run_id}/ws`);
    const ids: Array<number | null> = [];
    const code = await new Promise<number>((resolve, reject) => {
      ws.on('open', () => {
        for (let i = 0; i < 499; i++) ws.send(JSON.stringify({ after: i % 3 }));
        ws.send(JSON.stringify({ after: n }));
      });
      ws.on('message', (d) => ids.push((JSON.parse(String(d)) as { id: number | null }).id));
      ws.on('close', resolve);
      ws.on('error', reject);
    });
    expect(code).toBe(1000);
    expect(service.maxActive).toBeLessThanOrEqual(2);
    expect(service.started).toBeLessThan(20);
    // whatever earlier streams managed to send, the stream that ran to the end is the one after n
    expect(ids.slice(-all.filter((id) => id > n).length)).toEqual(all.filter((id) => id > n));
  });
});
