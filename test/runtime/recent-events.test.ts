import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { makeAgentEvent } from '../../src/events/agent-event-factory.js';
import { RecentEvents } from '../../src/runtime/recent-events.js';

const ev = (seq: number): AgentEvent => makeAgentEvent('run_x', seq, 1_700_000_000_000 + seq, 'assistant', { phase: 'update', delta: `d${seq}` } as never);

describe('RecentEvents', () => {
  it('gives the events after a seq it still holds, and null for history it no longer holds', () => {
    const r = new RecentEvents(100, 1_000_000);
    expect(r.after(0)).toBeNull(); // nothing kept yet: the file decides
    for (let s = 1; s <= 250; s++) r.add(ev(s), 50);
    // 151..250 are kept: after(150) is served, after(149) would need 150
    expect(r.after(150)?.map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => 151 + i));
    expect(r.after(149)).toBeNull();
    expect(r.after(249)?.map((e) => e.seq)).toEqual([250]);
    expect(r.after(250)).toEqual([]);
    expect(r.after(10)).toBeNull();
  });

  it('keeps at most its character budget (and always the newest event)', () => {
    const r = new RecentEvents(10_000, 1_000);
    for (let s = 1; s <= 5_000; s++) r.add(ev(s), 100);
    expect(r.after(4_990)?.length).toBe(10);
    expect(r.after(4_989)).toBeNull(); // 4,991..5,000 kept
    r.add(ev(5_001), 5_000);
    expect(r.after(5_000)?.map((e) => e.seq)).toEqual([5_001]);
  });
});
