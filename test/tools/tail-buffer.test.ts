import { describe, expect, it } from 'vitest';
import { TailBuffer } from '../../src/tools/tail-buffer.js';

describe('TailBuffer', () => {
  it('keeps everything under the cap', () => {
    const b = new TailBuffer(10);
    b.append('abc');
    b.append('def');
    expect(b.toString()).toBe('abcdef');
    expect(b.truncated).toBe(false);
  });

  it('keeps the tail and counts what it cut', () => {
    const b = new TailBuffer(5);
    for (const c of 'abcdefghijklmnop') b.append(c);
    expect(b.toString()).toBe('lmnop');
    expect(b.dropped).toBe(11);
    expect(b.truncated).toBe(true);
  });

  it('handles a single chunk larger than the cap', () => {
    const b = new TailBuffer(4);
    b.append('xy');
    b.append('0123456789');
    expect(b.toString()).toBe('6789');
    expect(b.dropped).toBe(8);
  });

  it('take() empties it and reports cuts since the last take', () => {
    const b = new TailBuffer(3);
    b.append('abcdef');
    expect(b.take()).toEqual({ text: 'def', dropped: 3 });
    expect(b.take()).toEqual({ text: '', dropped: 0 });
  });

  it('rejects a bad cap', () => {
    expect(() => new TailBuffer(0)).toThrow(/cap/);
  });
});
