/** Edits of one message under the channel's interval: the newest text wins, a 429 moves the next edit, a refusal ends them. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { SendResult } from '../../../src/channels/channel-types.js';
import { EditThrottle } from '../../../src/server/channel-host/edit-throttle.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

function throttle(answers: SendResult[] = []) {
  const edits: Array<{ text: string; at: number }> = [];
  const t = new EditThrottle(
    {
      intervalMs: 1000,
      edit: async (text) => {
        edits.push({ text, at: Date.now() });
        return answers.shift() ?? { ok: true, messageId: 'm' };
      },
      random: () => 0,
    },
    'shown',
  );
  return { t, edits };
}

describe('EditThrottle', () => {
  it('sends the newest text once an interval has passed; texts offered in between are never sent', async () => {
    const { t, edits } = throttle();
    const start = Date.now();
    t.offer('a');
    t.offer('b');
    t.offer('c');
    await vi.advanceTimersByTimeAsync(999);
    expect(edits).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(edits.map((e) => e.text)).toEqual(['c']);
    t.offer('d');
    t.offer('e');
    await vi.advanceTimersByTimeAsync(2000);
    expect(edits.map((e) => [e.text, e.at - start])).toEqual([
      ['c', 1000],
      ['e', 2000],
    ]);
    t.offer('e');
    await vi.advanceTimersByTimeAsync(5000);
    expect(edits).toHaveLength(2);
    await t.close();
  });

  it('a 429 moves the next edit to when the service said, and the newest text goes then', async () => {
    const { t, edits } = throttle([{ ok: false, failure: { kind: 'rate_limited', retryAfterMs: 5000, message: '429' } }]);
    const start = Date.now();
    t.offer('a');
    await vi.advanceTimersByTimeAsync(1000);
    t.offer('b');
    await vi.advanceTimersByTimeAsync(4999);
    expect(edits.map((e) => e.text)).toEqual(['a']);
    await vi.advanceTimersByTimeAsync(1);
    expect(edits.map((e) => [e.text, e.at - start])).toEqual([
      ['a', 1000],
      ['b', 6000],
    ]);
    expect(t.readyAt - start).toBe(7000);
    await t.close();
  });

  it('an edit refused for good (the message is gone) ends the edits', async () => {
    const { t, edits } = throttle([{ ok: false, failure: { kind: 'rejected', message: 'message to edit not found' } }]);
    t.offer('a');
    await vi.advanceTimersByTimeAsync(1000);
    t.offer('b');
    await vi.advanceTimersByTimeAsync(10_000);
    expect(edits.map((e) => e.text)).toEqual(['a']);
  });
});
