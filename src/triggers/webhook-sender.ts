/**
 * One delivery attempt of a webhook message: signed the Standard Webhooks way (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature` from the `standardwebhooks` package), POSTed on a fresh
 * connection to an address checked after DNS resolution, within a deadline for the whole exchange.
 * A 2xx answer delivers it; anything else (an error, a timeout, a redirect, another status) fails it.
 */
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { isPublicAddress, literalAddress, refusalOf } from '../events/address-class.js';
import { AddressRefused, safeLookup } from './address-guard.js';

export interface SendRequest {
  url: string;
  secret?: string;
  webhookId: string;
  body: string;
  /** the whole attempt: connect, send, headers and the first KiB of the answer */
  timeoutMs: number;
  /** the URL's allow entry names its host: its loopback/private addresses are allowed too */
  anyAddress: boolean;
  /** when the attempt is signed (ms) */
  now: number;
  /** cuts the attempt (the dispatcher stopping) */
  signal?: AbortSignal;
}

export interface SendResult {
  ok: boolean;
  httpStatus?: number;
  error?: string;
  /** the address connected to */
  address?: string;
  durationMs: number;
}

/** The three headers of a Standard Webhooks message (the signature only with a secret). */
export function signedHeaders(webhookId: string, body: string, at: number, secret?: string): Record<string, string> {
  const timestamp = new Date(Math.floor(at / 1000) * 1000);
  const headers: Record<string, string> = { 'webhook-id': webhookId, 'webhook-timestamp': String(timestamp.getTime() / 1000) };
  if (secret) headers['webhook-signature'] = new Webhook(secret).sign(webhookId, timestamp, body);
  return headers;
}

const ANSWER_BYTES = 1024;

export function sendWebhook(r: SendRequest): Promise<SendResult> {
  const started = performance.now();
  const done = (x: Omit<SendResult, 'durationMs'>): SendResult => ({ ...x, durationMs: Math.round(performance.now() - started) });
  let url: URL;
  try {
    url = new URL(r.url);
  } catch {
    return Promise.resolve(done({ ok: false, error: 'not a URL' }));
  }
  const literal = literalAddress(url.hostname);
  if (literal && !r.anyAddress && !isPublicAddress(literal))
    return Promise.resolve(done({ ok: false, error: `${refusalOf(literal)}; not sent`, address: literal }));
  let address: string | undefined = literal ?? undefined;
  const client = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (x: Omit<SendResult, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      // the signal is the dispatcher's, alive as long as it is: a listener left on it would keep every
      // finished attempt (its request, its answer) in memory
      r.signal?.removeEventListener('abort', onAbort);
      resolve(done({ ...(address ? { address } : {}), ...x }));
    };
    const req = client.request(url, {
      method: 'POST',
      // a fresh connection each attempt: the address is checked again, never a socket kept from before
      agent: false,
      lookup: safeLookup({ anyAddress: r.anyAddress, chosen: (a) => (address = a) }),
      headers: {
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(r.body)),
        'user-agent': 'Runtrail-Webhooks/1',
        ...signedHeaders(r.webhookId, r.body, r.now, r.secret),
      },
    });
    const deadline = setTimeout(() => {
      finish({ ok: false, error: `no answer within ${r.timeoutMs} ms` });
      req.destroy();
    }, r.timeoutMs);
    deadline.unref();
    function onAbort(): void {
      finish({ ok: false, error: 'stopped' });
      req.destroy();
    }
    r.signal?.addEventListener('abort', onAbort, { once: true });
    req.on('error', (e: NodeJS.ErrnoException) => {
      finish({ ok: false, error: e instanceof AddressRefused ? e.message : `${e.code ? `${e.code}: ` : ''}${e.message}` });
    });
    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let seen = 0;
      // the answer's body is not kept: its first KiB is read so the receiver sees a clean close
      res.on('data', (c: Buffer) => {
        seen += c.length;
        if (seen >= ANSWER_BYTES) res.destroy();
      });
      const end = () => finish(status >= 200 && status < 300 ? { ok: true, httpStatus: status } : { ok: false, httpStatus: status, error: `HTTP ${status}` });
      res.on('end', end);
      res.on('close', end);
      res.on('error', end);
    });
    req.end(r.body);
  });
}
