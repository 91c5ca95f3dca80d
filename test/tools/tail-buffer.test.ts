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

describe('TailBuffer under many small and large chunks', () => {
  it('matches a naive tail for any chunking', () => {
    const cap = 777;
    const b = new TailBuffer(cap);
    let all = '';
    for (let i = 0; i < 5000; i++) {
      const s = String(i).repeat((i * 7919) % 13) + (i % 97 === 0 ? 'x'.repeat(3000) : '');
      b.append(s);
      all += s;
      if (i % 501 === 0) expect(b.tail(50)).toBe(all.slice(-50));
    }
    expect(b.toString()).toBe(all.slice(-cap));
    expect(b.dropped).toBe(all.length - cap);
    expect(b.tail(10)).toBe(all.slice(-10));
  });
});
