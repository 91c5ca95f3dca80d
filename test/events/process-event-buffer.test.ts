import { afterEach, describe, expect, it, vi } from 'vitest';
import { ProcessEventBuffer } from '../../src/events/process-event-buffer.js';
import { makeProcessEvent } from '../../src/events/process-event-factory.js';
import type { ProcessStatus, RuntimeProcessEvent } from '../../src/events/process-event.js';

const ev = (op: string, status: ProcessStatus, current?: number) =>
  makeProcessEvent({ operationId: op, targetType: 'tool', source: 'tool', status, current, total: 100 }, () => 0);

describe('ProcessEventBuffer', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('emits the first update at once and coalesces the rest of the interval to the newest', () => {
    vi.useFakeTimers();
    const out: RuntimeProcessEvent[] = [];
    const buf = new ProcessEventBuffer({ emit: (e) => out.push(e), now: () => Date.now() });
    buf.push(ev('a', 'running', 1));
    buf.push(ev('a', 'running', 2));
    buf.push(ev('a', 'running', 3));
    expect(out.map((e) => e.current)).toEqual([1]);
    vi.advanceTimersByTime(399);
    expect(out).toHaveLength(1);
    vi.advanceTimersByTime(1);
    expect(out.map((e) => e.current)).toEqual([1, 3]);
    buf.dispose();
  });

  it('throttles each operation independently', () => {
    vi.useFakeTimers();
    const out: RuntimeProcessEvent[] = [];
    const buf = new ProcessEventBuffer({ emit: (e) => out.push(e), now: () => Date.now() });
    buf.push(ev('a', 'running', 1));
    buf.push(ev('b', 'running', 1));
    buf.push(ev('a', 'running', 2));
    expect(out.map((e) => e.operationId)).toEqual(['a', 'b']);
    expect(buf.pendingCount).toBe(1);
    buf.dispose();
  });

  it('a terminal event flushes its operation first, then goes out synchronously', () => {
    vi.useFakeTimers();
    const out: RuntimeProcessEvent[] = [];
    const buf = new ProcessEventBuffer({ emit: (e) => out.push(e), now: () => Date.now() });
    buf.push(ev('a', 'running', 1));
    buf.push(ev('b', 'running', 1));
    buf.push(ev('a', 'running', 50));
    buf.push(ev('b', 'running', 60));
    buf.push(ev('a', 'completed', 100));
    expect(out.map((e) => `${e.operationId}:${e.status}:${e.current}`)).toEqual(['a:running:1', 'b:running:1', 'a:running:50', 'a:completed:100']);
    buf.dispose();
    expect(out.at(-1)?.current).toBe(60);
  });

  it('loses nothing at dispose and passes later pushes straight through', () => {
    const out: RuntimeProcessEvent[] = [];
    const buf = new ProcessEventBuffer({ emit: (e) => out.push(e), now: () => 0 });
    buf.push(ev('a', 'running', 1));
    buf.push(ev('a', 'running', 2));
    buf.dispose();
    expect(out.map((e) => e.current)).toEqual([1, 2]);
    buf.push(ev('a', 'running', 3));
    expect(out.map((e) => e.current)).toEqual([1, 2, 3]);
  });

  it('an emit that throws is counted and does not reach the pusher', () => {
    const buf = new ProcessEventBuffer({
      emit: () => {
        throw new Error('sink down');
      },
    });
    expect(() => buf.push(ev('a', 'failed'))).not.toThrow();
    expect(buf.emitErrors).toBe(1);
  });

  it('rejects a bad interval', () => {
    expect(() => new ProcessEventBuffer({ emit: () => {}, intervalMs: -1 })).toThrow(/intervalMs/);
  });

  it('loses nothing pushed from inside emit while dispose flushes, and keeps the terminal-after-pending order', () => {
    vi.useFakeTimers();
    const out: string[] = [];
    let buf!: ProcessEventBuffer;
    buf = new ProcessEventBuffer({
      now: () => Date.now(),
      emit: (e) => {
        out.push(`${e.operationId}:${e.status}:${e.current ?? ''}`);
        // a subscriber reacting to the flushed update of "a" with more progress, and ending "b"
        if (e.operationId === 'a' && e.current === 2) {
          buf.push(ev('a', 'running', 3));
          buf.push(ev('b', 'completed'));
        }
      },
    });
    buf.push(ev('a', 'running', 1));
    buf.push(ev('b', 'running', 1));
    buf.push(ev('a', 'running', 2));
    buf.push(ev('b', 'running', 2));
    buf.dispose();
    expect(out).toContain('a:running:3');
    // b's pending update goes out before b's terminal event
    expect(out.indexOf('b:running:2')).toBeGreaterThanOrEqual(0);
    expect(out.indexOf('b:running:2')).toBeLessThan(out.indexOf('b:completed:'));
    const n = out.length;
    vi.advanceTimersByTime(10_000);
    expect(out).toHaveLength(n); // no timer left to emit anything after dispose
  });
});
