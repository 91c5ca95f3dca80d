import { describe, expect, it } from 'vitest';
import { ByteTailBuffer, completeLength } from '../../src/tools/byte-tail-buffer.js';

const b = (s: string) => Buffer.from(s, 'utf8');

describe('ByteTailBuffer', () => {
  it('keeps the last cap bytes and counts the cut', () => {
    const t = new ByteTailBuffer(5);
    for (const c of 'abcdefghij') t.append(b(c));
    expect(t.toString()).toBe('fghij');
    expect(t.dropped).toBe(5);
    expect(t.truncated).toBe(true);
  });

  it('never shows half a character after a cut at the front', () => {
    const t = new ByteTailBuffer(4);
    t.append(b('aé€')); // 1 + 2 + 3 bytes
    expect(t.toString()).toBe('€'); // the cut lands inside é: its tail byte is skipped
    expect(t.tail(3)).toBe('€');
  });

  it('take() holds back a character split across chunks until it is complete', () => {
    const t = new ByteTailBuffer(100);
    const euro = b('€');
    t.append(Buffer.concat([b('x'), euro.subarray(0, 2)]));
    expect(t.take()).toEqual({ text: 'x', dropped: 0 });
    t.append(euro.subarray(2));
    expect(t.take()).toEqual({ text: '€', dropped: 0 });
  });

  it('matches a naive byte tail under any chunking', () => {
    const t = new ByteTailBuffer(1000);
    const parts: Buffer[] = [];
    for (let i = 0; i < 3000; i++) {
      const p = b(`line ${i} ${'z'.repeat(i % 37)}\n`);
      parts.push(p);
      t.append(p);
    }
    const all = Buffer.concat(parts);
    expect(t.toString()).toBe(all.subarray(all.length - 1000).toString());
    expect(t.dropped).toBe(all.length - 1000);
  });

  it('completeLength finds the last character boundary', () => {
    expect(completeLength(b('ab'))).toBe(2);
    expect(completeLength(b('a€').subarray(0, 3))).toBe(1);
    expect(completeLength(b('a€'))).toBe(4);
  });
});
