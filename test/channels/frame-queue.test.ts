import { describe, expect, it } from 'vitest';
import { FrameQueue } from '../../src/channels/frame-queue.js';

describe('FrameQueue', () => {
  it('answers every next() asked before the frames came, in order, and ends them all at close()', async () => {
    const q = new FrameQueue();
    const a = q.next();
    const b = q.next();
    const c = q.next();
    q.push('f1');
    q.push('f2');
    q.close();
    const r = await Promise.race([Promise.all([a, b, c]), new Promise<'hung'>((res) => setTimeout(() => res('hung'), 200))]);
    expect(r).toEqual([
      { value: 'f1', done: false },
      { value: 'f2', done: false },
      { value: undefined, done: true },
    ]);
  });
});
