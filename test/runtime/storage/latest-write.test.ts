import { describe, expect, it } from 'vitest';
import { LatestWrite } from '../../../src/runtime/storage/latest-write.js';

function deferredSaves() {
  const saved: string[] = [];
  const pending: Array<{ v: string; done: (err?: Error) => void }> = [];
  const save = (v: string) =>
    new Promise<void>((resolve, reject) => {
      pending.push({ v, done: (err) => (err ? reject(err) : (saved.push(v), resolve())) });
    });
  return { saved, pending, save };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('LatestWrite', () => {
  it('writes in order and folds the snapshots that arrive during a write into one write of the newest', async () => {
    const { saved, pending, save } = deferredSaves();
    const w = new LatestWrite(save);
    const a = w.write('running');
    await tick();
    expect(pending.map((p) => p.v)).toEqual(['running']);
    const b = w.write('tool_executing');
    const c = w.write('model_thinking');
    expect(b).toBe(c); // one write for both
    pending[0].done();
    await a;
    await tick();
    expect(pending.map((p) => p.v)).toEqual(['running', 'model_thinking']);
    pending[1].done();
    await c;
    expect(saved).toEqual(['running', 'model_thinking']);
  });

  it('a failed write rejects its callers and the next write still happens', async () => {
    const { saved, pending, save } = deferredSaves();
    const w = new LatestWrite(save);
    const a = w.write('one');
    await tick();
    pending[0].done(new Error('disk full'));
    await expect(a).rejects.toThrow('disk full');
    const b = w.write('two');
    await tick();
    pending[1].done();
    await b;
    expect(saved).toEqual(['two']);
  });
});
