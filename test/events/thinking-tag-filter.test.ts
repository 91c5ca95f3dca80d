import { describe, expect, it } from 'vitest';
import { ThinkingTagFilter } from '../../src/events/thinking-tag-filter.js';

/** Feeds `text` in every split into pieces of `size` chars and returns the visible output. */
function run(text: string, size: number, opts = {}): string {
  const f = new ThinkingTagFilter(opts);
  let out = '';
  for (let i = 0; i < text.length; i += size) out += f.push(text.slice(i, i + size));
  return out + f.flush();
}

describe('ThinkingTagFilter', () => {
  it.each(['think', 'thinking', 'thought', 'antthinking', 'THINK', 'Thinking'])('removes <%s> blocks', (tag) => {
    expect(run(`a<${tag}>secret</${tag}>b`, 100)).toBe('ab');
  });

  it('is stateful across deltas: tags split at every possible point', () => {
    const text = 'Hello <thinking>plan: x < y</thinking>world <think >more</ think>!';
    for (let size = 1; size <= 8; size++) expect(run(text, size)).toBe('Hello world !');
  });

  it('leaves tags inside fenced and inline code alone', () => {
    const text = 'Use `<think>` like:\n```xml\n<think>keep</think>\n```\nand <think>drop</think>done';
    for (const size of [1, 3, 100]) expect(run(text, size)).toBe('Use `<think>` like:\n```xml\n<think>keep</think>\n```\nand done');
  });

  it('keeps ordinary angle brackets and unrelated tags', () => {
    expect(run('a < b and <b>bold</b> <thinkable> x<3', 2)).toBe('a < b and <b>bold</b> <thinkable> x<3');
  });

  it('flush returns a held-back partial tag that never completed', () => {
    const f = new ThinkingTagFilter();
    expect(f.push('value <thi')).toBe('value ');
    expect(f.flush()).toBe('<thi');
  });

  it('drops an unterminated thinking block and exposes the thinking text', () => {
    const f = new ThinkingTagFilter();
    expect(f.push('ok<think>never closed')).toBe('ok');
    expect(f.flush()).toBe('');
    expect(f.takeThinking()).toBe('never closed');
  });

  it('removes <final> tags; with enforceFinalTag only <final> content passes', () => {
    const text = '<think>t</think>draft <final>The answer</final> trailing';
    expect(run(text, 3)).toBe('draft The answer trailing');
    expect(run(text, 3, { enforceFinalTag: true })).toBe('The answer');
    expect(run('no final tag at all', 4, { enforceFinalTag: true })).toBe('');
  });

  it('an unbalanced backtick does not disable stripping on later lines', () => {
    expect(run('a ` b\n<think>x</think>c', 2)).toBe('a ` b\nc');
  });

  it('rejects a non-string delta', () => {
    expect(() => new ThinkingTagFilter().push(undefined as never)).toThrow(/delta must be a string/);
  });
});

describe('ThinkingTagFilter on generated streams (seeded)', () => {
  it('streamed output equals stripping the whole text at once, for any split', () => {
    let seed = 7;
    const r = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const names = ['think', 'thinking', 'thought', 'antthinking'];
    for (let round = 0; round < 200; round++) {
      const parts: string[] = [];
      for (let i = 0; i < 8; i++) {
        const k = r();
        if (k < 0.3) {
          const n = names[Math.floor(r() * names.length)];
          parts.push(`<${n}>hidden ${i} a<b</${n}>`);
        } else if (k < 0.4) parts.push(' x < y > z ');
        else parts.push(`visible ${i}${r() < 0.3 ? '\n' : ' '}`);
      }
      const text = parts.join('');
      const expected = text.replace(/<(think|thinking|thought|antthinking)>[\s\S]*?<\/\1>/gi, '');
      const f = new ThinkingTagFilter();
      let out = '';
      for (let i = 0; i < text.length; ) {
        const n = 1 + Math.floor(r() * 12);
        out += f.push(text.slice(i, i + n));
        i += n;
      }
      out += f.flush();
      expect(out, text).toBe(expected);
    }
  });
});
