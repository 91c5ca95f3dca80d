/** What a channel keeps on disk: inbound deliveries taken once across restarts, replies sent once per key, secrets masked. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RetryOutcome } from '../../../src/channels/send-retry.js';
import { InboundLedger } from '../../../src/server/channel-host/channel-files.js';
import { DeliveryLog } from '../../../src/server/channel-host/delivery-record.js';
import { SecretMask } from '../../../src/server/channel-host/secret-mask.js';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const tmp = () => (dir = mkdtempSync(join(tmpdir(), 'rt-channel-files-')));

const sent = (id: string): RetryOutcome => ({ result: { ok: true, messageId: id }, attempts: 1, retried: [], mayHaveLanded: false });
const maybe: RetryOutcome = {
  result: { ok: false, failure: { kind: 'unavailable', landed: 'maybe', message: '502' } },
  attempts: 1,
  retried: [],
  mayHaveLanded: true,
};

describe('InboundLedger', () => {
  it('takes an id once, also after a restart; keeps the newest ids when it compacts', async () => {
    const file = join(tmp(), 'inbound.log');
    const a = new InboundLedger(file, 3);
    expect(a.take('u1').fresh).toBe(true);
    expect(a.take('u1').fresh).toBe(false);
    for (const id of ['u2', 'u3', 'u4', 'u5', 'u6', 'u7']) await a.take(id).saved;
    const b = new InboundLedger(file, 3);
    expect(b.take('u7').fresh).toBe(false);
    expect(b.take('u5').fresh).toBe(false);
    const again = b.take('u1');
    expect(again.fresh).toBe(true);
    await again.saved;
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean).length).toBeLessThanOrEqual(7);
  });
});

describe('DeliveryLog', () => {
  const init = { run_id: 'run_20260101_000000_000001', to: { chat: '42' }, chat_type: 'direct' as const, mode: 'live' as const };

  it('sends under a key once; a send a crash interrupted is not repeated, unless the service de-duplicates by key', async () => {
    const d = tmp();
    const log = await DeliveryLog.open(d, init);
    let calls = 0;
    expect(await log.once('preview', false, async () => (calls++, sent('m1')))).toMatchObject({ kind: 'sent', messageId: 'm1' });
    expect(await log.once('preview', false, async () => (calls++, sent('m2')))).toEqual({ kind: 'already', messageId: 'm1' });
    expect(calls).toBe(1);
    // a crash between writing "in flight" and the answer: the record says so after a restart
    log.record.in_flight = 'part:2';
    await log.save();
    const again = await DeliveryLog.open(d, init);
    expect(await again.once('part:2', false, async () => (calls++, sent('m3')))).toEqual({ kind: 'already', messageId: null });
    expect(calls).toBe(1);
    again.record.in_flight = 'part:3';
    expect(await again.once('part:3', true, async () => (calls++, sent('m4')))).toMatchObject({ kind: 'sent', messageId: 'm4' });
    // a send that may have landed is recorded as such, never sent again
    expect(await again.once('part:4', false, async () => maybe)).toMatchObject({ kind: 'failed' });
    expect(again.sentUnder('part:4')).toBeNull();
    await again.finish();
    expect(DeliveryLog.unfinished(d)).toEqual([]);
  });
});

describe('SecretMask', () => {
  it('masks a token and its URL-encoded form, longest first', () => {
    const m = new SecretMask();
    m.add(['123456:AA+bb/cc', 'short']);
    expect(m.mask('GET /bot123456:AA+bb/cc/getMe and /bot123456%3AAA%2Bbb%2Fcc/x')).toBe('GET /bot[redacted]/getMe and /bot[redacted]/x');
    expect(m.mask('short words')).toBe('[redacted] words');
  });
});
