import { describe, expect, it } from 'vitest';
import { afterCheck } from '../../../src/runtime/loop/after-check.js';

async function* numbers(log: string[]): AsyncGenerator<number> {
  try {
    for (let i = 1; i <= 3; i++) yield i;
  } finally {
    log.push('inner ended');
  }
}

describe('afterCheck', () => {
  it("checks when the first item is asked for, then gives the inner iterator's items", async () => {
    const log: string[] = [];
    const it = afterCheck(
      async () => void log.push('checked'),
      () => numbers(log),
    );
    expect(log).toEqual([]);
    const got: number[] = [];
    for await (const n of it) got.push(n);
    expect(got).toEqual([1, 2, 3]);
    expect(log).toEqual(['checked', 'inner ended']);
  });

  it("a failed check is the first next()'s rejection, and the inner iterator is never made", async () => {
    let made = false;
    const it = afterCheck(
      async () => {
        throw new Error('run r not found');
      },
      () => {
        made = true;
        return numbers([]);
      },
    )[Symbol.asyncIterator]();
    await expect(it.next()).rejects.toThrow('run r not found');
    expect(await it.next()).toEqual({ done: true, value: undefined });
    expect(made).toBe(false);
  });

  it('breaking out of a loop ends the inner iterator', async () => {
    const log: string[] = [];
    for await (const n of afterCheck(
      async () => undefined,
      () => numbers(log),
    ))
      if (n === 2) break;
    expect(log).toEqual(['inner ended']);
  });
});
