/** events.jsonl lines are exactly JSON.stringify of the event, whichever way they are built. */
import { describe, expect, it } from 'vitest';
import { makeAgentEvent } from '../../../src/events/agent-event-factory.js';
import { eventLine } from '../../../src/runtime/storage/event-line.js';

const ev = (data: unknown, stream = 'assistant') => makeAgentEvent('run_20261201_000000_000001', 42, 1796120416154, stream as never, data as never);

describe('eventLine', () => {
  const cases: Record<string, unknown> = {
    delta: { text: '', delta: ' tok' },
    escapes: { text: 'a "quoted" \\ back\nslash\t\u0000\u001f', delta: '世界 😀 \u2028\u2029' },
    lone_surrogate: { delta: '\ud800x\udfff' },
    numbers: { a: 0, b: -0, c: 1.5e-7, d: 1e21, e: NaN, f: Infinity, g: -Infinity, h: Number.MAX_SAFE_INTEGER },
    others: { t: true, f: false, n: null, u: undefined, fn: () => 1, sym: Symbol('s') },
    integer_keys: { b: 1, 2: 'two', a: 3, 1: 'one' },
    odd_keys: { 'with "quote"': 1, 'new\nline': 2, '': 3 },
    nested: { phase: 'result', result: { rows: [1, 2, { x: 'y' }] }, args: { path: 'a.csv' } },
    array_value: { items: ['a', 'b'] },
    date_value: { at: new Date(0) },
    empty: {},
  };
  for (const [name, data] of Object.entries(cases)) {
    it(`${name}: the same bytes as JSON.stringify`, () => {
      const e = ev(data);
      expect(eventLine(e)).toBe(JSON.stringify(e));
    });
  }

  it('an object with a toJSON or a class instance as data goes through JSON.stringify', () => {
    class Data {
      delta = 'x';
      toJSON() {
        return { delta: 'from toJSON' };
      }
    }
    const e = ev(new Data());
    expect(eventLine(e)).toBe(JSON.stringify(e));
    expect(eventLine(e)).toContain('from toJSON');
  });
});
