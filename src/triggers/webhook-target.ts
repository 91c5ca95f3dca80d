/**
 * The check of a completion webhook as a request, a schedule or config.json gives it: `{ url, secret? }`,
 * the URL http(s) and allowed by `webhooks.allow`, an IP literal only public unless its entry names
 * it, and the secret a Standard Webhooks secret (`whsec_` + base64 of 24 to 64 bytes).
 */
import { isPublicAddress, literalAddress, refusalOf } from '../events/address-class.js';
import type { WebhookAllowList } from './webhook-allow.js';
import type { Checked, FieldIssue, RunWebhook } from './types.js';

const MAX_URL = 2000;

/** Why a Standard Webhooks secret is malformed, or null when it is fine. */
export function secretProblem(secret: string): string | null {
  if (!secret.startsWith('whsec_')) return 'must be a Standard Webhooks secret: whsec_ followed by base64 of 24 to 64 random bytes';
  const b64 = secret.slice('whsec_'.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) return 'must be whsec_ followed by base64 (A–Z, a–z, 0–9, +, /, = padding)';
  const bytes = Buffer.from(b64, 'base64').length;
  if (bytes < 24 || bytes > 64) return `holds ${bytes} bytes after whsec_; a Standard Webhooks secret holds 24 to 64`;
  return null;
}

/** Why the URL may not be a destination (not http(s), not allowed, a non-public IP literal), or null. */
export function urlProblem(raw: string, allow: WebhookAllowList): string | null {
  if (raw.length > MAX_URL) return `is ${raw.length} characters; at most ${MAX_URL}`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `${JSON.stringify(raw.slice(0, 100))} is not a URL`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return `must be an http or https URL, got ${url.protocol.replace(/:$/, '')}:`;
  const m = allow.match(url);
  if (!m.allowed) return `${url.origin}${url.pathname} is not allowed by webhooks.allow in config.json (allowed: ${allow.describe()})`;
  // a name is checked where it matters, after DNS resolution at each attempt; an address now
  const literal = literalAddress(url.hostname);
  if (literal && !isPublicAddress(literal) && !m.exactHost)
    return `${refusalOf(literal)}; webhooks go to public addresses unless config.json webhooks.allow names this host`;
  return null;
}

/** `{ url, secret? }` checked; issues are named under `path` (webhook, webhooks.every_run.0, …). */
export function checkWebhook(raw: unknown, allow: WebhookAllowList, path = 'webhook'): Checked<RunWebhook> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, issues: [{ path, message: 'must be an object { url, secret? }' }] };
  const o = raw as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  const extra = Object.keys(o).filter((k) => k !== 'url' && k !== 'secret');
  if (extra.length) issues.push({ path, message: `unknown field(s): ${extra.join(', ')}` });
  if (typeof o.url !== 'string' || !o.url.trim()) issues.push({ path: `${path}.url`, message: 'required: the http(s) URL to POST to' });
  else {
    const p = urlProblem(o.url.trim(), allow);
    if (p) issues.push({ path: `${path}.url`, message: p });
  }
  if (o.secret !== undefined) {
    const p = typeof o.secret === 'string' ? secretProblem(o.secret) : 'must be a string';
    if (p) issues.push({ path: `${path}.secret`, message: p });
  }
  if (issues.length) return { ok: false, issues };
  return { ok: true, value: { url: (o.url as string).trim(), ...(typeof o.secret === 'string' ? { secret: o.secret } : {}) } };
}
