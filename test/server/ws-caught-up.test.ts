/** Past a WebSocket client's queue bound: a client that keeps reading is waited for, however large the frame; a stalled one is given up on. */
import { describe, expect, it } from 'vitest';
import { caughtUp } from '../../src/server/ws-caught-up.js';

/** A socket whose client takes `step` bytes of its send buffer every `everyMs` (or never, when null). */
function socket(buffered: number, step: number, everyMs: number | null) {
  const s = { bufferedAmount: buffered, readyState: 1, OPEN: 1 };
  const timer = everyMs === null ? null : setInterval(() => (s.bufferedAmount = Math.max(0, s.bufferedAmount - step)), everyMs);
  return { s, stop: () => timer && clearInterval(timer) };
}

describe('caughtUp (WebSocket send buffer)', () => {
  it('waits for a frame far larger than one window can carry while the client keeps reading', async () => {
    // 20 reads 30 ms apart: about 600 ms in all, against a 150 ms window
    const c = socket(20 * 64 * 1024 + 1000, 64 * 1024, 30);
    try {
      expect(await caughtUp(c.s, 16 * 1024, 150)).toBe(true);
      expect(c.s.bufferedAmount).toBeLessThanOrEqual(16 * 1024);
    } finally {
      c.stop();
    }
  });

  it('gives up on a client that reads nothing for a whole window', async () => {
    const c = socket(4 * 1024 * 1024, 0, null);
    const started = Date.now();
    expect(await caughtUp(c.s, 16 * 1024, 100)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
  });

  it('gives up on a client that read for a while, then stopped', async () => {
    const c = socket(4 * 1024 * 1024, 64 * 1024, 20);
    setTimeout(c.stop, 200);
    expect(await caughtUp(c.s, 16 * 1024, 150)).toBe(false);
    expect(c.s.bufferedAmount).toBeGreaterThan(16 * 1024);
  });

  it('gives up when the socket closes while it waits', async () => {
    const c = socket(4 * 1024 * 1024, 0, null);
    const waiting = caughtUp(c.s, 16 * 1024, 60_000);
    setTimeout(() => (c.s.readyState = 3), 20);
    expect(await waiting).toBe(false);
  });
});
