/** One run's frames made once for all its clients: the same frames as a client alone, one read of the run. */
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { RunFrameHubs } from '../../src/server/run-frame-hub.js';
import { runFrames, type RunFrame } from '../../src/server/run-frames.js';
import { FakeRunService } from './fake-run-service.js';

/** Counts the reads of a run's events (each is a history read from disk in the real service). */
class CountingService extends FakeRunService {
  reads = 0;
  open = 0;
  override async *events(runId: string, opts: { after?: number; signal?: AbortSignal } = {}): AsyncIterable<AgentEvent> {
    this.reads++;
    this.open++;
    try {
      yield* super.events(runId, opts);
    } finally {
      this.open--;
    }
  }
}

async function collect(frames: AsyncIterable<RunFrame>, onFrame?: (f: RunFrame, n: number) => void): Promise<RunFrame[]> {
  const out: RunFrame[] = [];
  for await (const f of frames) {
    out.push(f);
    onFrame?.(f, out.length);
  }
  return out;
}

const deltas = (n: number) => Array.from({ length: n }, (_, i) => `d${i} `);

/** A live run of `n` deltas that pauses after `pauseAfter` of them (until release), and hubs over its service. */
async function liveRun(n: number, pauseAfter: number, opts: { tool?: boolean; maxFrames?: number } = {}) {
  const service = new CountingService();
  service.scriptFor = () => ({ deltas: deltas(n), pauseAfter, ...(opts.tool ? { tool: true } : {}) });
  const { run_id } = await service.create({ plugin: 'echo' });
  return { service, run_id, hubs: new RunFrameHubs(service, opts.maxFrames) };
}

/** A client of `hubs` that leaves (its signal aborts) once it has `n` frames. */
function leavingAfter(hubs: RunFrameHubs, runId: string, n: number): Promise<RunFrame[]> {
  const leaving = new AbortController();
  return collect(hubs.frames(runId, { signal: leaving.signal }), (_f, got) => got === n && leaving.abort());
}

describe('RunFrameHubs', () => {
  it('gives every client of a live run the frames runFrames gives one client, reading the run once', async () => {
    const { service, run_id, hubs } = await liveRun(30, 10, { tool: true });
    const clients = [collect(hubs.frames(run_id)), collect(hubs.frames(run_id)), collect(hubs.frames(run_id, { after: 5 }))];
    await new Promise((r) => setTimeout(r, 20));
    service.release(run_id);
    const [a, b, after5] = await Promise.all(clients);
    expect(service.reads).toBe(1);
    const alone = await collect(runFrames(service, run_id));
    expect(a).toEqual(alone);
    expect(b).toEqual(alone);
    expect(after5).toEqual(alone.filter((f) => f.seq > 5));
    expect(a.length).toBeGreaterThan(30);
    expect(hubs.size).toBe(0); // let go at the run's end
  });

  it('stops reading the run when its last client leaves; a client after that starts again and misses nothing', async () => {
    const { service, run_id, hubs } = await liveRun(20, 5);
    const first = await leavingAfter(hubs, run_id, 3);
    expect(first).toHaveLength(3);
    await new Promise((r) => setTimeout(r, 20));
    expect(service.open).toBe(0); // the hub's read ended with its last client
    expect(hubs.size).toBe(0);
    const later = collect(hubs.frames(run_id, { after: first[2].seq }));
    service.release(run_id);
    const rest = await later;
    expect(service.reads).toBe(2);
    const alone = await collect(runFrames(service, run_id));
    expect([...first, ...rest]).toEqual(alone);
  });

  it('a client that comes as the last one leaves (a WebSocket resuming from another seq) keeps the hub: no second read', async () => {
    const { service, run_id, hubs } = await liveRun(12, 4);
    const first = await leavingAfter(hubs, run_id, 2);
    const resumed = collect(hubs.frames(run_id, { after: 1 }));
    service.release(run_id);
    const alone = await collect(runFrames(service, run_id));
    expect(await resumed).toEqual(alone.filter((f) => f.seq > 1));
    expect(first).toEqual(alone.slice(0, 2));
    expect(service.reads).toBe(2); // the hub's one read, and `alone` above
  });

  it('past its frame limit a hub lets go of what its clients passed, and a new client reads the run on its own', async () => {
    const { service, run_id, hubs } = await liveRun(40, 30, { maxFrames: 10 });
    const early = collect(hubs.frames(run_id));
    await new Promise((r) => setTimeout(r, 20));
    const late = collect(hubs.frames(run_id));
    service.release(run_id);
    const [a, b] = await Promise.all([early, late]);
    const alone = await collect(runFrames(service, run_id));
    expect(a).toEqual(alone);
    expect(b).toEqual(alone);
    expect(service.reads).toBe(3); // the hub's, the late client's own, and `alone`
  });
});
