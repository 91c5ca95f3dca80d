import { describe, expect, it } from 'vitest';
import { PendingWrites } from '../../../src/runtime/storage/pending-writes.js';

/** `f`'s value (or its throw) after `ms`. */
function later<T>(ms: number, f: () => T): Promise<T> {
  return new Promise((ok, fail) =>
    setTimeout(() => {
      try {
        ok(f());
      } catch (e) {
        fail(e);
      }
    }, ms),
  );
}

describe('PendingWrites', () => {
  it('settles once every write is done', async () => {
    const done: string[] = [];
    const w = new PendingWrites();
    w.add(later(20, () => void done.push('slow')));
    w.add(later(1, () => void done.push('fast')));
    await w.settled();
    expect(done.sort()).toEqual(['fast', 'slow']);
  });

  it('throws the first failure, after the other writes ended, and leaves no rejection unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => void unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      let slowDone = false;
      const w = new PendingWrites();
      const failing = (message: string) => () => {
        throw new Error(message);
      };
      w.add(later(1, failing('ENOSPC: first')));
      w.add(later(5, failing('EIO: second')));
      w.add(later(30, () => void (slowDone = true)));
      // the failures happen while nobody awaits the writes yet
      await new Promise((r) => setTimeout(r, 15));
      await expect(w.settled()).rejects.toThrow('ENOSPC: first');
      expect(slowDone).toBe(true);
      await new Promise((r) => setTimeout(r, 5));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
