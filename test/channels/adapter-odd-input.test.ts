/** Adapters never throw into the engine, whatever they are handed. */
import { describe, expect, it } from 'vitest';
import { BufferAdapter } from '../../src/channels/buffer-adapter.js';
import { SseAdapter } from '../../src/channels/sse-adapter.js';

const odd: unknown[] = [
  null,
  undefined,
  1,
  'x',
  [],
  {},
  Object.create(null),
  { type: 5 },
  { type: 'delta', content: 5 },
  { type: 'delta', content: { a: 1 } },
  { type: 'delta' },
  { type: 'step', step: null },
  { type: 'step', step: 'x' },
  { type: 'step', step: { type: 'tool', diagnosis: { severity: 'error' } } },
  { type: 'step', step: { type: 'tool', diagnosis: 'bad' }, index: 'x' },
  { type: 'step', step: { type: 'zzz', args: 'x', result: { r: 1 } }, index: -1 },
  { type: 'done', content: { x: 1 }, process_steps: 'x', used_skills: 'y' },
  { type: 'done', content: null, process_steps: [null, 1, { type: 'tool' }] },
  { type: 'error', message: { x: 1 }, diagnosis: 7 },
  { type: 'error', diagnosis: { code: 1, summary: null } },
  { type: 'process', event: null },
  { type: 'process', event: { operationId: 5 } },
  { type: 'reasoning', content: null },
  { type: 'delta', content: 'x', seq: 'nine', trace_id: 5 },
  { type: 'delta', content: 'x', seq: 1e300 },
  { type: 'delta', content: 'x', seq: -3 },
  {
    type: 'delta',
    get content() {
      throw new Error('getter');
    },
  },
  { type: 'delta', content: 'x', big: 10n },
];

describe('adapters on odd input', () => {
  it('BufferAdapter and SseAdapter (also with a throwing onFrame) drop or carry, never throw', () => {
    const adapters = [
      new BufferAdapter({ log: () => {} }),
      new SseAdapter(null, { log: () => {} }),
      new SseAdapter(null, {
        log: () => {},
        wireMeta: true,
        onFrame: () => {
          throw new Error('client gone');
        },
      }),
    ];
    for (const a of adapters) {
      for (const o of odd) expect(() => a.emit(o)).not.toThrow();
      expect(a.stats.received).toBe(odd.length);
    }
    expect(() => (adapters[0] as BufferAdapter).assemble()).not.toThrow();
  });
});
