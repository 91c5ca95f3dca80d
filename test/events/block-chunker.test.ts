import { describe, expect, it } from 'vitest';
import { BlockChunker } from '../../src/events/block-chunker.js';

function feed(c: BlockChunker, text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(...c.push(text.slice(i, i + size)));
  out.push(...c.drain({ force: true }));
  return out;
}

/** Fence lines of a chunk must pair up: every chunk is valid markdown on its own. */
function balanced(chunk: string): boolean {
  return chunk.split('\n').filter((l) => /^\s{0,3}```/.test(l)).length % 2 === 0;
}

const para = (n: number, ch: string) => `${ch.repeat(n - 1)}.`;

describe('BlockChunker', () => {
  it('waits until minChars, then breaks at a paragraph boundary', () => {
    const c = new BlockChunker({ minChars: 50, maxChars: 100 });
    expect(c.push('short')).toEqual([]);
    const text = `${para(60, 'a')}\n\n${para(30, 'b')}\n\n${para(30, 'c')}`;
    const chunks = feed(new BlockChunker({ minChars: 50, maxChars: 100 }), text, 7);
    expect(chunks).toEqual([para(60, 'a'), `${para(30, 'b')}\n\n${para(30, 'c')}`]);
  });

  it('prefers paragraph over newline over sentence over whitespace', () => {
    const opts = { minChars: 20, maxChars: 60 };
    expect(feed(new BlockChunker(opts), `${'a'.repeat(25)}\n${'b'.repeat(10)}\n\n${'c'.repeat(40)}`, 200)[0]).toBe(`${'a'.repeat(25)}\n${'b'.repeat(10)}`);
    expect(feed(new BlockChunker(opts), `${'a'.repeat(25)}. ${'b'.repeat(10)}\n${'c'.repeat(40)}`, 200)[0]).toBe(`${'a'.repeat(25)}. ${'b'.repeat(10)}`);
    expect(feed(new BlockChunker(opts), `${'a'.repeat(25)}. ${'b'.repeat(10)} ${'c'.repeat(40)}`, 200)[0]).toBe(`${'a'.repeat(25)}.`);
    expect(feed(new BlockChunker(opts), `${'a'.repeat(25)} ${'b'.repeat(50)}`, 200)[0]).toBe('a'.repeat(25));
  });

  it('hard-cuts at maxChars when there is no break at all', () => {
    const chunks = feed(new BlockChunker({ minChars: 20, maxChars: 40 }), 'x'.repeat(100), 9);
    expect(chunks).toEqual(['x'.repeat(40), 'x'.repeat(40), 'x'.repeat(20)]);
  });

  it('never breaks inside a fenced code block that fits', () => {
    const code = '```ts\n' + Array.from({ length: 6 }, (_, i) => `const v${i} = ${i};`).join('\n') + '\n```\n';
    const text = `${'Intro text. '.repeat(3)}\n\n${code}\nAfter the code. ${'More words here. '.repeat(4)}`;
    for (const size of [1, 5, 1000]) {
      const chunks = feed(new BlockChunker({ minChars: 40, maxChars: 120 }), text, size);
      expect(chunks.every(balanced)).toBe(true);
      expect(chunks.some((ch) => ch.includes(code.trimEnd()))).toBe(true);
    }
  });

  it('closes a fence longer than maxChars at the cut and reopens it with its opening line', () => {
    const body = Array.from({ length: 30 }, (_, i) => `line ${i}`).join('\n');
    const text = '```python\n' + body + '\n```';
    const chunks = feed(new BlockChunker({ minChars: 40, maxChars: 80 }), text, 13);
    expect(chunks.length).toBeGreaterThan(2);
    for (const ch of chunks) {
      expect(ch.length).toBeLessThanOrEqual(80);
      expect(ch.startsWith('```python\n')).toBe(true);
      expect(ch.endsWith('```')).toBe(true);
      expect(balanced(ch)).toBe(true);
    }
    const lines = chunks.flatMap((ch) => ch.split('\n').filter((l) => l.startsWith('line ')));
    expect(lines).toEqual(body.split('\n'));
  });

  it('drain without force keeps a short tail; with force returns it', () => {
    const c = new BlockChunker({ minChars: 50, maxChars: 100 });
    c.push('tail');
    expect(c.drain()).toEqual([]);
    expect(c.drain({ force: true })).toEqual(['tail']);
    expect(c.hasBuffered()).toBe(false);
  });

  it('rejects bad options and input with a message naming them', () => {
    expect(() => new BlockChunker({ minChars: 0 })).toThrow(/minChars/);
    expect(() => new BlockChunker({ minChars: 100, maxChars: 50 })).toThrow(/maxChars/);
    expect(() => new BlockChunker({ breakPreference: 'word' as never })).toThrow(/breakPreference/);
    expect(() => new BlockChunker().push(3 as never)).toThrow(/text must be a string/);
  });
});

describe('BlockChunker on generated text (seeded)', () => {
  function rng(seed: number) {
    let s = seed >>> 0;
    return () => {
      s = (s * 1664525 + 1013904223) >>> 0;
      return s / 2 ** 32;
    };
  }
  function generate(r: () => number): string {
    const parts: string[] = [];
    const n = 5 + Math.floor(r() * 25);
    for (let i = 0; i < n; i++) {
      const k = r();
      if (k < 0.2) {
        const lines = Array.from({ length: 1 + Math.floor(r() * 40) }, (_, j) => `  code_${i}_${j}();`);
        parts.push(`\`\`\`js\n${lines.join('\n')}\n\`\`\``);
      } else {
        const words = Array.from({ length: 5 + Math.floor(r() * 80) }, (_, j) => `w${i}x${j}${r() < 0.1 ? '.' : ''}`);
        parts.push(words.join(r() < 0.1 ? '\n' : ' '));
      }
    }
    return parts.join(r() < 0.5 ? '\n\n' : '\n');
  }

  it('keeps every word and code line, in order, within maxChars, fences balanced', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const r = rng(seed);
      const text = generate(r);
      const minChars = 40 + Math.floor(r() * 200);
      const maxChars = minChars + 20 + Math.floor(r() * 300);
      const chunks = feed(new BlockChunker({ minChars, maxChars }), text, 1 + Math.floor(r() * 50));
      const tokens = (s: string) => s.split(/\s+/).filter((t) => t && !t.startsWith('```'));
      expect(chunks.flatMap(tokens), `seed ${seed}`).toEqual(tokens(text));
      for (const ch of chunks) {
        expect(ch.length, `seed ${seed}`).toBeLessThanOrEqual(maxChars);
        expect(balanced(ch), `seed ${seed}: ${ch}`).toBe(true);
      }
    }
  });
});
