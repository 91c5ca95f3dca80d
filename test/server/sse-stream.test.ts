import { afterEach, describe, expect, it } from 'vitest';
import { createEngineBridge } from '../../src/events/engine-bridge.js';
import { formatSseFrame } from '../../src/channels/sse-adapter.js';
import { FakeRunService } from './fake-run-service.js';
import { getJson, postJson, readSse, startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

/** What `runtrail replay --format sse` writes for a run: the bridge over events.jsonl, formatSseFrame each. */
function replayFrames(service: FakeRunService, runId: string): Array<{ seq: number; text: string }> {
  const bridge = createEngineBridge({ traceId: runId });
  const out: Array<{ seq: number; text: string }> = [];
  for (const ev of service.runs.get(runId)!.history) {
    const e = bridge.translate(ev);
    if (e) out.push({ seq: ev.seq, text: formatSseFrame(e, { wireMeta: false }) });
  }
  return out;
}

describe('SSE run stream', () => {
  it('sends retry first, then id/data frames byte-identical to a replay, with the no-cache/no-buffering headers, and closes a finished run', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service);
    const created = await postJson(`${server.url}/api/runs`, { plugin: 'echo', goal: 'say hi', input: {} });
    expect(created.status).toBe(201);
    const runId = created.body.run_id as string;
    await service.wait(runId);

    const r = await readSse(`${server.url}/api/runs/${runId}/events`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(r.headers.get('cache-control')).toBe('no-cache');
    expect(r.headers.get('x-accel-buffering')).toBe('no');
    expect(r.raw.startsWith('retry: 2000\n\n')).toBe(true);
    expect(r.retry).toBe(2000);

    const expected = replayFrames(service, runId);
    expect(r.raw).toBe('retry: 2000\n\n' + expected.map((f) => f.text).join(''));
    const ids = r.events.map((e) => Number(e.id));
    expect(ids).toEqual(expected.map((f) => f.seq));
    expect(ids.every((id, i) => i === 0 || id > ids[i - 1])).toBe(true);
    const types = r.events.map((e) => JSON.parse(e.data).type);
    expect(types).toContain('delta');
    expect(types).toContain('step');
    expect(types).toContain('process');
    expect(types.at(-1)).toBe('done');
    // seq/claw are stripped from frames; the terminal frame keeps trace_id
    expect(JSON.parse(r.events[0].data).seq).toBeUndefined();
    expect(JSON.parse(r.events.at(-1)!.data).trace_id).toBe(runId);
  });

  it('resumes with exactly the frames after N, from ?after=N and from Last-Event-ID', async () => {
    const service = new FakeRunService();
    service.scriptFor = () => ({ deltas: Array.from({ length: 30 }, (_, i) => `w${i} `), tool: true });
    server = await startTestServer(service);
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(body.run_id);
    const all = replayFrames(service, body.run_id);
    const n = all[7].seq;
    const byQuery = await readSse(`${server.url}/api/runs/${body.run_id}/events?after=${n}`);
    const byHeader = await readSse(`${server.url}/api/runs/${body.run_id}/events`, { headers: { 'last-event-id': String(n) } });
    const want = all.filter((f) => f.seq > n);
    for (const r of [byQuery, byHeader]) {
      expect(r.events.map((e) => Number(e.id))).toEqual(want.map((f) => f.seq));
      expect(r.raw).toBe('retry: 2000\n\n' + want.map((f) => f.text).join(''));
    }
  });

  it('a client that drops mid-run and reconnects with Last-Event-ID gets no gap and no duplicate; leaving never cancels the run', async () => {
    const service = new FakeRunService();
    service.scriptFor = () => ({ deltas: Array.from({ length: 40 }, (_, i) => `t${i} `), pauseAfter: 10, tool: true });
    server = await startTestServer(service);
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    const runId = body.run_id as string;

    const first = await readSse(`${server.url}/api/runs/${runId}/events`, {
      stopWhen: (r) => r.events.filter((e) => JSON.parse(e.data).type === 'delta').length >= 10,
    });
    const lastId = first.events.at(-1)!.id!;
    expect((await service.get(runId))!.status).not.toBe('cancelled');

    const second = readSse(`${server.url}/api/runs/${runId}/events`, { headers: { 'last-event-id': lastId } });
    service.release(runId);
    const rest = await second;
    const finalStatus = await service.wait(runId);
    expect(finalStatus.status).toBe('completed');

    const got = [...first.events, ...rest.events].map((e) => Number(e.id));
    expect(got).toEqual(replayFrames(service, runId).map((f) => f.seq));
    const text = [...first.events, ...rest.events]
      .map((e) => JSON.parse(e.data))
      .filter((f) => f.type === 'delta')
      .map((f) => f.content)
      .join('');
    expect(text).toBe(Array.from({ length: 40 }, (_, i) => `t${i} `).join(''));
  });

  it('pings idle streams with a comment', async () => {
    const service = new FakeRunService();
    service.scriptFor = () => ({ deltas: ['a', 'b'], pauseAfter: 1 });
    server = await startTestServer(service, { pingMs: 20 });
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    const r = await readSse(`${server.url}/api/runs/${body.run_id}/events`, { stopWhen: (x) => x.comments.length >= 2 });
    expect(r.comments[0].trim()).toBe('ping');
    expect(r.raw).toContain(': ping\n\n');
    service.release(body.run_id);
  });

  it('answers 404 for an unknown run and 400 for a bad Last-Event-ID, as JSON', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service);
    const missing = await getJson(`${server.url}/api/runs/run_nope/events`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    for (const bad of ['-1', 'abc', '1.5']) {
      const r = await getJson(`${server.url}/api/runs/${body.run_id}/events`, { 'last-event-id': bad });
      expect(r.status).toBe(400);
      expect(r.body.error.details.issues[0].path).toBe('after');
    }
    const q = await getJson(`${server.url}/api/runs/${body.run_id}/events?after=x`);
    expect(q.status).toBe(400);
  });

  it('drops a client too slow for its queue with a final error frame; the run and other clients go on', async () => {
    const service = new FakeRunService();
    const big = 'x'.repeat(2000);
    service.scriptFor = () => ({ deltas: Array.from({ length: 6000 }, () => big) }); // 12 MB: more than loopback socket buffers hold
    // slowClientMs is a window with nothing read at all: the stalled reader below is dropped after one; the
    // good reader, in this same process on a loaded machine, reads in the kernel's steps (its send buffer
    // frees about a third of itself at a time), so its window is not shorter than a busy CI's stalls
    server = await startTestServer(service, { maxClientQueueBytes: 64 * 1024, slowClientMs: 2000 });
    const { body } = await postJson(`${server.url}/api/runs`, { plugin: 'echo', input: {} });
    await service.wait(body.run_id);

    // A reader that stalls: open the stream, read nothing until the server gave up on it.
    const http = await import('node:http');
    const raw = await new Promise<string>((resolve, reject) => {
      const req = http.get(`${server!.url}/api/runs/${body.run_id}/events`, (res) => {
        res.pause();
        const chunks: Buffer[] = [];
        // read nothing until the server says it dropped this client (the test's own timeout bounds the wait)
        const waitDrop = async (): Promise<void> => {
          while (!/runtrail_stream_clients_dropped_total 1/.test((await getJson(`${server!.url}/metrics`)).body)) {
            await new Promise((r) => setTimeout(r, 10));
          }
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
          res.resume();
        };
        void waitDrop();
      });
      req.on('error', reject);
    });
    const frames = raw.split('\n\n').filter(Boolean);
    const last = frames.at(-1)!;
    expect(last.startsWith('data: ')).toBe(true); // no id: the error frame is not a run event
    const wire = JSON.parse(last.slice(6));
    expect(wire.type).toBe('error');
    expect(wire.diagnosis.code).toBe('client_too_slow');
    expect(frames.length).toBeLessThan(6000);
    // a well-behaved client still gets everything
    const ok = await readSse(`${server.url}/api/runs/${body.run_id}/events`);
    expect(JSON.parse(ok.events.at(-1)!.data).type).toBe('done');
    expect((await service.get(body.run_id))!.status).toBe('completed');
  });
});
