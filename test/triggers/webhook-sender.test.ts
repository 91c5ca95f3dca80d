/** One webhook attempt: what it leaves behind on the dispatcher's long-lived stop signal. */
import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { sendWebhook } from '../../src/triggers/webhook-sender.js';
import { Receiver } from './receiver.js';

let receiver: Receiver | null = null;
afterEach(async () => {
  await receiver?.stop();
  receiver = null;
});

describe('sendWebhook', () => {
  it('leaves no listener on the stop signal once an attempt is over, whatever its outcome', async () => {
    receiver = await new Receiver().start();
    receiver.answers = [200, 500, 'hang', 200, 404];
    const stop = new AbortController();
    const results = [];
    for (let i = 0; i < 5; i++) {
      results.push(
        await sendWebhook({ url: receiver.url(), webhookId: `msg_${i}`, body: '{}', timeoutMs: 300, anyAddress: true, now: Date.now(), signal: stop.signal }),
      );
    }
    expect(results.map((r) => r.ok)).toEqual([true, false, false, true, false]);
    expect(results[2].error).toBe('no answer within 300 ms');
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  it('an attempt under way when the signal fires ends as stopped', async () => {
    receiver = await new Receiver().start();
    receiver.answers = ['hang'];
    const stop = new AbortController();
    const attempt = sendWebhook({
      url: receiver.url(),
      webhookId: 'msg_stop',
      body: '{}',
      timeoutMs: 60_000,
      anyAddress: true,
      now: Date.now(),
      signal: stop.signal,
    });
    while (receiver.got.length === 0) await new Promise((r) => setTimeout(r, 10));
    stop.abort();
    expect(await attempt).toMatchObject({ ok: false, error: 'stopped' });
  });
});
