/** The retry policy of calls to a messaging service: when a failure is tried again, after how long, and when never. */
import { describe, expect, it } from 'vitest';
import type { DeliveryFailure, SendResult } from '../../src/channels/channel-types.js';
import { DEFAULT_RETRY_POLICY, sendWithRetry } from '../../src/channels/send-retry.js';

function scripted(results: SendResult[]) {
  let i = 0;
  const calls = () => i;
  return { call: async () => results[Math.min(i++, results.length - 1)], calls };
}

const fail = (failure: DeliveryFailure): SendResult => ({ ok: false, failure });
const OK: SendResult = { ok: true, messageId: 'm1' };

async function run(results: SendResult[], repeatable: boolean, random = 0.5) {
  const waits: number[] = [];
  const s = scripted(results);
  const out = await sendWithRetry(s.call, { repeatable, random: () => random, wait: async (ms) => (waits.push(ms), true) });
  return { out, waits, calls: s.calls() };
}

describe('sendWithRetry', () => {
  it('a 429 is tried again no sooner than retry_after, plus at most 20 % jitter', async () => {
    const { out, waits, calls } = await run([fail({ kind: 'rate_limited', retryAfterMs: 3000, message: '429' }), OK], false, 0.999);
    expect(out.result).toEqual(OK);
    expect(calls).toBe(2);
    expect(waits[0]).toBeGreaterThanOrEqual(3000);
    expect(waits[0]).toBeLessThanOrEqual(3600);
    expect(out.retried.map((f) => f.kind)).toEqual(['rate_limited']);
  });

  it('a send that may have landed is not repeated unless repeating cannot post twice', async () => {
    const maybe = fail({ kind: 'unavailable', landed: 'maybe', message: '502' });
    const once = await run([maybe, OK], false);
    expect(once.calls).toBe(1);
    expect(once.out.mayHaveLanded).toBe(true);
    const keyed = await run([maybe, OK], true);
    expect(keyed.calls).toBe(2);
    expect(keyed.out.result.ok).toBe(true);
    expect(keyed.waits[0]).toBeGreaterThanOrEqual(500);
  });

  it('a request that never reached the service is tried again with backoff, doubling up to the cap', async () => {
    const refused = fail({ kind: 'unavailable', landed: 'no', message: 'ECONNREFUSED' });
    const { out, waits, calls } = await run([refused, refused, refused, refused, refused, refused], false, 1);
    expect(calls).toBe(DEFAULT_RETRY_POLICY.maxAttempts);
    expect(waits).toEqual([1000, 2000, 4000, 8000]);
    expect(out.result.ok).toBe(false);
    expect(out.mayHaveLanded).toBe(false);
  });

  it('a refusal for good is not tried again; a wait longer than the cap is not waited', async () => {
    expect((await run([fail({ kind: 'rejected', message: 'chat not found' }), OK], true)).calls).toBe(1);
    const long = await run([fail({ kind: 'rate_limited', retryAfterMs: 3_600_000, message: '429' }), OK], true);
    expect(long.calls).toBe(1);
    expect(long.waits).toEqual([]);
  });

  it('stops waiting when its signal aborts', async () => {
    const ac = new AbortController();
    ac.abort();
    const out = await sendWithRetry(async () => fail({ kind: 'rate_limited', retryAfterMs: 10, message: '429' }), { repeatable: true, signal: ac.signal });
    expect(out.attempts).toBe(1);
  });
});
