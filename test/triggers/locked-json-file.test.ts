/** The locked JSON file: changes asked for together all land, in order, each answered with its own result. */
import { mkdirSync, mkdtempSync, readFileSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LockedJsonFile } from '../../src/triggers/locked-json-file.js';
import { removeDir } from './helpers.js';

interface Counter {
  n: number;
  seen: number[];
}

let dir = '';
afterEach(() => removeDir(dir));

function counter(): LockedJsonFile<Counter> {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-locked-'));
  return new LockedJsonFile<Counter>(join(dir, 'sub', 'counter.json'), () => ({ n: 0, seen: [] }));
}

const increment = (f: LockedJsonFile<Counter>, tag: number) =>
  f.update((v) => {
    v.n += 1;
    v.seen.push(tag);
    return { result: v.n, changed: true };
  });

describe('LockedJsonFile', () => {
  it('applies 100 changes asked for at once, in the order asked, each with its own result', async () => {
    const f = counter();
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => increment(f, i)));
    expect(results).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const onDisk = JSON.parse(readFileSync(f.path, 'utf8')) as Counter;
    expect(onDisk.n).toBe(100);
    expect(onDisk.seen).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it('refuses only the change that throws; the others of its turn are written', async () => {
    const f = counter();
    const refused = f.update(() => {
      throw new Error('not a valid value');
    });
    const [a, b] = await Promise.all([increment(f, 1), increment(f, 2), refused.catch((e: Error) => e.message)]);
    await expect(refused).rejects.toThrow('not a valid value');
    expect([a, b]).toEqual([1, 2]);
    expect((JSON.parse(readFileSync(f.path, 'utf8')) as Counter).seen).toEqual([1, 2]);
  });

  it('waits while another process holds the lock, then applies every change that came meanwhile', async () => {
    const f = counter();
    await increment(f, 0);
    // another process holding the lock: its lock folder, fresh
    mkdirSync(`${f.path}.lock`);
    let settled = 0;
    const asked = Array.from({ length: 10 }, (_, i) => increment(f, i + 1).then((r) => (settled++, r)));
    await new Promise((r) => setTimeout(r, 150));
    expect(settled).toBe(0);
    expect((JSON.parse(readFileSync(f.path, 'utf8')) as Counter).n).toBe(1);
    rmdirSync(`${f.path}.lock`);
    expect(await Promise.all(asked)).toEqual(Array.from({ length: 10 }, (_, i) => i + 2));
    expect((JSON.parse(readFileSync(f.path, 'utf8')) as Counter).seen).toEqual(Array.from({ length: 11 }, (_, i) => i));
  });

  it('says which file is locked when the lock is never let go', async () => {
    const f = counter();
    const short = new LockedJsonFile<Counter>(f.path, () => ({ n: 0, seen: [] }), { waitMs: 100 });
    mkdirSync(join(dir, 'sub'), { recursive: true });
    mkdirSync(`${f.path}.lock`);
    await expect(increment(short, 1)).rejects.toThrow(`${f.path} is locked by another process`);
    rmdirSync(`${f.path}.lock`);
    // the file is usable again once the lock is gone
    expect(await increment(short, 2)).toBe(1);
  });
});
