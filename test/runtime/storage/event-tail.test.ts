import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentEventBus } from '../../../src/events/agent-event-bus.js';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import { EventStore, readEvents } from '../../../src/runtime/storage/event-store.js';
import { tailRunEvents } from '../../../src/runtime/storage/event-tail.js';

let dir: string;
let file: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-tail-'));
  file = join(dir, 'events.jsonl');
  writeFileSync(file, '');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const done = { type: 'run.completed' as const, status: 'completed' as const, messageId: 'r', conversationId: 'r', content: 'ok', usedSkills: [], usedMcp: [] };

describe('tailRunEvents', () => {
  it('history then live from a bus: no gap, no duplicate, ends at the terminal event', async () => {
    const bus = new AgentEventBus({ runId: 'r' });
    const store = new EventStore(file);
    bus.subscribe((e) => store.append(e));
    for (let i = 0; i < 5; i++) bus.publish('run', { type: 'notice', text: `n${i}` });
    const seen: number[] = [];
    // as RunService tails a live run: what the store has not written yet comes from the store
    const it = tailRunEvents({ file, after: 2, bus, unwritten: (n) => store.unwritten(n) });
    for await (const e of it) {
      seen.push(e.seq);
      // publish more while the reader is between history and live
      if (e.seq === 3) for (let i = 0; i < 3; i++) bus.publish('run', { type: 'notice', text: `m${i}` });
      if (e.seq === 8) bus.publish('run', done);
      if (e.seq === 9) bus.publish('run', { type: 'notice', text: 'after the end' });
    }
    expect(seen).toEqual([3, 4, 5, 6, 7, 8, 9]);
    store.close();
  });

  it('follows the file of a run live in another process until its terminal event', async () => {
    const bus = new AgentEventBus({ runId: 'r' });
    const lines = (e: AgentEvent) => `${JSON.stringify(e)}\n`;
    appendFileSync(file, lines(bus.publish('run', { type: 'notice', text: 'a' })));
    let polls = 0;
    const seen: number[] = [];
    for await (const e of tailRunEvents({
      file,
      after: 0,
      pollMs: 0,
      follow: async () => {
        polls++;
        if (polls === 2) appendFileSync(file, lines(bus.publish('run', done)));
        return true;
      },
    }))
      seen.push(e.seq);
    expect(seen).toEqual([1, 2]);
  });

  it('stops following when the owner is gone, and on abort', async () => {
    const seen: AgentEvent[] = [];
    for await (const e of tailRunEvents({ file, after: 0, follow: async () => false })) seen.push(e);
    expect(seen).toEqual([]);
    const ctl = new AbortController();
    const p = (async () => {
      for await (const e of tailRunEvents({ file, after: 0, pollMs: 60_000, signal: ctl.signal, follow: async () => true })) seen.push(e);
    })();
    ctl.abort();
    await p;
    expect(seen).toEqual([]);
  });

  it('does not lose the last events when the other process finishes between a read and the follow check', async () => {
    const bus = new AgentEventBus({ runId: 'r' });
    const lines = (e: AgentEvent) => `${JSON.stringify(e)}\n`;
    appendFileSync(file, lines(bus.publish('run', { type: 'notice', text: 'a' })));
    const seen: number[] = [];
    for await (const e of tailRunEvents({
      file,
      after: 0,
      pollMs: 0,
      // the owner appends its last events and the terminal one, then its status says "finished"
      follow: async () => {
        appendFileSync(file, lines(bus.publish('run', { type: 'notice', text: 'b' })) + lines(bus.publish('run', done)));
        return false;
      },
    }))
      seen.push(e.seq);
    expect(seen).toEqual([1, 2, 3]);
  });
});

describe('EventStore', () => {
  it('keeps an event whose data JSON cannot hold (BigInt, a cycle) instead of leaving a seq gap in events.jsonl', async () => {
    const bus = new AgentEventBus({ runId: 'r' });
    const store = new EventStore(file);
    bus.subscribe((e) => store.append(e));
    const cyclic: Record<string, unknown> = { name: 'job' };
    cyclic.self = cyclic;
    bus.publish('run', { type: 'notice', text: 'before' });
    bus.publish('tool', { phase: 'result', name: 't', toolCallId: 'c1', isError: false, result: 'ok', details: { size: 10n, job: cyclic }, durationMs: 1 });
    bus.publish('run', done);
    store.close();
    const evs = await readEvents(file);
    expect(evs.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(evs[1].data).toMatchObject({ phase: 'result', toolCallId: 'c1', details: { size: '10', job: { name: 'job', self: '[Circular]' } } });
    expect(bus.subscriberErrors).toBe(0);
  });
});
