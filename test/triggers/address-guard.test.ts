/** The webhook's address guard attacked with spellings of the receiver's own loopback address. */
import type { LookupAddress } from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { AddressRefused, safeLookup } from '../../src/triggers/address-guard.js';
import { WebhookAllowList } from '../../src/triggers/webhook-allow.js';
import { sendWebhook } from '../../src/triggers/webhook-sender.js';
import { urlProblem } from '../../src/triggers/webhook-target.js';
import { Receiver } from './receiver.js';

let receiver: Receiver | null = null;
afterEach(async () => {
  await receiver?.stop();
  receiver = null;
});

/** Hosts (as a URL writes them) naming 127.0.0.1, ::1 or an IPv6 block carrying a private IPv4 address. */
const LOOPBACK_HOSTS = [
  '127.0.0.1',
  '127.1',
  '127.0.1',
  '0x7f.1',
  '0x7f.0.0.1',
  '0177.0.0.1',
  '0177.0.0.01',
  '2130706433',
  '0x7f000001',
  '017700000001',
  '127.0.0.1.',
  '[::1]',
  '[0:0:0:0:0:0:0:1]',
  '[::127.0.0.1]',
  '[::7f00:1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:ffff:7f00:1]',
  '[64:ff9b::127.0.0.1]',
  '[64:ff9b::a9fe:a9fe]',
  '[64:ff9b:1:a00:0:100::]',
  '[2002:7f00:1::]',
  '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
  '[::ffff:0:127.0.0.1]',
  '[fd00::1]',
  '[fe80::1]',
];

describe('the webhook address guard', () => {
  it('refuses every spelling when the request is checked (400 territory: urlProblem)', () => {
    for (const host of LOOPBACK_HOSTS) expect(urlProblem(`http://${host}:8080/hook`, WebhookAllowList.none), host).toMatch(/ is (a|an|the) .*address/);
  });

  it('refuses every spelling at the attempt, the receiver on 127.0.0.1 never reached', async () => {
    receiver = await new Receiver().start();
    const port = new URL(receiver.url()).port;
    for (const host of [...LOOPBACK_HOSTS, 'localhost', 'localhost.']) {
      const r = await sendWebhook({ url: `http://${host}:${port}/hook`, webhookId: 'msg_x', body: '{}', timeoutMs: 2000, anyAddress: false, now: Date.now() });
      expect(r.ok, host).toBe(false);
      expect(r.error, host).toMatch(/address|ENOTFOUND|EAI_AGAIN/);
    }
    expect(receiver.got).toHaveLength(0);
  });

  it('refuses what DNS answers in any of those forms, and connects only to a public answer among them', async () => {
    const lookupWith = (answers: string[]) =>
      new Promise<{ err: Error | null; address: unknown }>((resolve) => {
        const resolveName = ((_h: string, _o: unknown, cb: (e: null, a: LookupAddress[]) => void) =>
          cb(
            null,
            answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
          )) as unknown as typeof import('node:dns').lookup;
        safeLookup({ anyAddress: false, resolve: resolveName })('hooks.example.', {}, (err, address) => resolve({ err, address }));
      });
    for (const a of ['::7f00:1', '::ffff:7f00:1', '64:ff9b::a00:1', '2002:c0a8:101::', 'fe80::1%eth0', 'fd12::1', '100.64.0.1']) {
      const r = await lookupWith([a]);
      expect(r.err, a).toBeInstanceOf(AddressRefused);
      expect(r.err?.message, a).toMatch(/hooks\.example\. resolves to no public address/);
    }
    expect(await lookupWith(['::7f00:1', '93.184.216.34'])).toEqual({ err: null, address: '93.184.216.34' });
  });
});
