/**
 * The `webhooks` and `schedules` keys of config.json, checked:
 * ```
 * "webhooks": {
 *   "allow": ["https://hooks.example.com/*"],          // where webhooks may go (default: any public address)
 *   "every_run": [{ "url": "…", "secret": "whsec_…" }], // told of every run
 *   "retry": { "base": "5s", "max_interval": "1h", "for": "24h" },
 *   "timeout": "10s",                                   // one attempt
 *   "public_url": "https://runtrail.example.com"        // links in the body; default the server's own URL
 * },
 * "schedules": { "missed_window": "1h" }               // run_once catches up fire times at most this old
 * ```
 */
import { parseDuration } from './duration.js';
import { checkWebhook } from './webhook-target.js';
import { WebhookAllowList } from './webhook-allow.js';
import type { FieldIssue, RunWebhook } from './types.js';

export interface WebhookRetry {
  /** the first wait; each next one doubles, with jitter */
  baseMs: number;
  /** no wait is longer */
  maxIntervalMs: number;
  /** attempts stop this long after the message was made */
  forMs: number;
}

export interface TriggerConfig {
  allow: WebhookAllowList;
  everyRun: RunWebhook[];
  retry: WebhookRetry;
  timeoutMs: number;
  publicUrl: string | null;
  missedWindowMs: number;
}

export const DEFAULT_RETRY: WebhookRetry = { baseMs: 5_000, maxIntervalMs: 3_600_000, forMs: 86_400_000 };

export const DEFAULT_TRIGGER_CONFIG: TriggerConfig = {
  allow: WebhookAllowList.none,
  everyRun: [],
  retry: DEFAULT_RETRY,
  timeoutMs: 10_000,
  publicUrl: null,
  missedWindowMs: 3_600_000,
};

function durationField(o: Record<string, unknown>, key: string, path: string, range: [number, number], issues: FieldIssue[]): number | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  const ms = typeof v === 'string' ? parseDuration(v) : null;
  if (ms === null) {
    issues.push({ path: `${path}.${key}`, message: `must be a duration such as "5s", "15m", "1h", got ${JSON.stringify(v)}` });
    return undefined;
  }
  if (ms < range[0] || ms > range[1]) {
    issues.push({ path: `${path}.${key}`, message: `must be between ${range[0]} ms and ${range[1] / 1000} s, got ${JSON.stringify(v)}` });
    return undefined;
  }
  return ms;
}

function objectAt(raw: unknown, path: string, issues: FieldIssue[], keys: string[]): Record<string, unknown> | null {
  if (raw === undefined) return null;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    issues.push({ path, message: 'must be an object' });
    return null;
  }
  const o = raw as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !keys.includes(k));
  if (extra.length) issues.push({ path, message: `unknown field(s): ${extra.join(', ')} (known: ${keys.join(', ')})` });
  return o;
}

/** config.json's trigger keys; what is wrong is an issue (and keeps its default), never a silent fallback. */
export function triggerConfig(raw: { webhooks?: unknown; schedules?: unknown }): { config: TriggerConfig; issues: FieldIssue[] } {
  const issues: FieldIssue[] = [];
  const config: TriggerConfig = { ...DEFAULT_TRIGGER_CONFIG, retry: { ...DEFAULT_RETRY } };
  const w = objectAt(raw.webhooks, 'webhooks', issues, ['allow', 'every_run', 'retry', 'timeout', 'public_url']);
  if (w) {
    const allow = WebhookAllowList.parse(w.allow);
    config.allow = allow.list;
    issues.push(...allow.issues);
    if (w.every_run !== undefined) {
      if (!Array.isArray(w.every_run)) issues.push({ path: 'webhooks.every_run', message: 'must be a list of { url, secret? }' });
      else
        w.every_run.forEach((t, i) => {
          const c = checkWebhook(t, config.allow, `webhooks.every_run.${i}`);
          if (c.ok) config.everyRun.push(c.value);
          else issues.push(...c.issues);
        });
    }
    const r = objectAt(w.retry, 'webhooks.retry', issues, ['base', 'max_interval', 'for']);
    if (r) {
      config.retry.baseMs = durationField(r, 'base', 'webhooks.retry', [10, 10_000], issues) ?? config.retry.baseMs;
      config.retry.maxIntervalMs = durationField(r, 'max_interval', 'webhooks.retry', [10, 86_400_000], issues) ?? config.retry.maxIntervalMs;
      config.retry.forMs = durationField(r, 'for', 'webhooks.retry', [0, 30 * 86_400_000], issues) ?? config.retry.forMs;
    }
    config.timeoutMs = durationField(w, 'timeout', 'webhooks', [100, 300_000], issues) ?? config.timeoutMs;
    if (w.public_url !== undefined) {
      if (typeof w.public_url === 'string' && /^https?:\/\/[^\s/]+/.test(w.public_url)) config.publicUrl = w.public_url.replace(/\/+$/, '');
      else issues.push({ path: 'webhooks.public_url', message: `must be the http(s) URL people reach this server at, got ${JSON.stringify(w.public_url)}` });
    }
  }
  const s = objectAt(raw.schedules, 'schedules', issues, ['missed_window']);
  if (s) config.missedWindowMs = durationField(s, 'missed_window', 'schedules', [0, 30 * 86_400_000], issues) ?? config.missedWindowMs;
  return { config, issues };
}
