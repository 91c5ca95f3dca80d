import { describe, expect, it } from 'vitest';
import { AgentEventBus } from '../../src/events/agent-event-bus.js';
import { makeAgentEvent } from '../../src/events/agent-event-factory.js';
import type { AgentEvent } from '../../src/events/agent-event.js';

describe('AgentEventBus', () => {
  it('numbers events gap-free from 1 and stamps runId and ts', () => {
    let t = 1000;
    const bus = new AgentEventBus({ runId: 'run_1', now: () => t++ });
    const seen: AgentEvent[] = [];
    bus.subscribe((e) => seen.push(e));
    bus.publish('lifecycle', { phase: 'start', startedAt: 1 });
    bus.publish('assistant', { text: 'hi', delta: 'hi' });
    bus.publish('compaction', { phase: 'start' });
    expect(seen.map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(seen.map((e) => e.ts)).toEqual([1000, 1001, 1002]);
    expect(seen.every((e) => e.runId === 'run_1')).toBe(true);
    expect(seen[1]).toEqual({ runId: 'run_1', seq: 2, ts: 1001, stream: 'assistant', data: { text: 'hi', delta: 'hi' } });
    expect(bus.lastSeq).toBe(3);
  });

  it('resumes numbering after startSeq', () => {
    const bus = new AgentEventBus({ runId: 'r', startSeq: 41 });
    expect(bus.publish('run', { type: 'notice', text: 'x' }).seq).toBe(42);
  });

  it('isolates a throwing subscriber, counts it, and still calls the others', () => {
    const errs: unknown[] = [];
    const bus = new AgentEventBus({ runId: 'r', onSubscriberError: (e) => errs.push(e) });
    const got: number[] = [];
    bus.subscribe(() => {
      throw new Error('boom');
    });
    bus.subscribe((e) => got.push(e.seq));
    expect(() => bus.publish('assistant', { text: 'a', delta: 'a' })).not.toThrow();
    bus.publish('assistant', { text: 'ab', delta: 'b' });
    expect(got).toEqual([1, 2]);
    expect(bus.subscriberErrors).toBe(2);
    expect(errs).toHaveLength(2);
  });

  it('unsubscribe stops delivery, is idempotent, and is safe during publish', () => {
    const bus = new AgentEventBus({ runId: 'r' });
    const a: number[] = [];
    const b: number[] = [];
    const offA = bus.subscribe((e) => {
      a.push(e.seq);
      offA();
    });
    bus.subscribe((e) => b.push(e.seq));
    bus.publish('compaction', { phase: 'start' });
    bus.publish('compaction', { phase: 'end', willRetry: false });
    offA();
    expect(a).toEqual([1]);
    expect(b).toEqual([1, 2]);
    expect(bus.subscriberCount).toBe(1);
  });

  it('rejects bad construction and unknown streams with a message naming the field', () => {
    expect(() => new AgentEventBus({ runId: '' })).toThrow(/runId/);
    expect(() => new AgentEventBus({ runId: 'r', startSeq: -1 })).toThrow(/startSeq/);
    const bus = new AgentEventBus({ runId: 'r' });
    // @ts-expect-error: deliberately wrong stream
    expect(() => bus.publish('nope', {})).toThrow(/stream must be one of lifecycle\|assistant/);
    expect(bus.lastSeq).toBe(0);
    expect(() => makeAgentEvent('r', 1, 1, 'tool', { phase: 'start', name: 'x', toolCallId: 'c', args: {} })).not.toThrow();
  });
});
