/**
 * A completion webhook's message: its Standard Webhooks id (the same for every retry and
 * redelivery of it), its type, and its body — `{ type, timestamp, data: <the run's status document>,
 * links }` — with every string masked as the event log masks text, so no credential a run wrote
 * leaves in a webhook.
 */
import { createHash } from 'node:crypto';
import type { RunStatusFile } from '../runtime/run-service-types.js';
import type { StoredTarget, WebhookEventType, WebhookMessage } from './types.js';

/** The run event a message reports: a wait for approval (by the seq of its state change) or the end. */
export type ReportKey = 'end' | `approval:${number}`;

export function webhookId(runId: string, key: ReportKey, target: StoredTarget, index: number): string {
  const h = createHash('sha256').update(`${runId}\n${key}\n${index}\n${target.url}`).digest('base64url');
  return `msg_${h.slice(0, 27)}`;
}

/** What a status document reports: its end (an `interrupted` failure named so), or a wait for approval. */
export function messageType(status: RunStatusFile): WebhookEventType {
  switch (status.status) {
    case 'completed':
      return 'run.completed';
    case 'cancelled':
      return 'run.cancelled';
    case 'failed':
      return status.diagnosis?.code === 'interrupted' ? 'run.interrupted' : 'run.failed';
    default:
      return 'run.awaiting_approval';
  }
}

/** Every string of a JSON value passed through `mask`. */
export function maskStrings(v: unknown, mask: (s: string) => string): unknown {
  if (typeof v === 'string') return mask(v);
  if (Array.isArray(v)) return v.map((x) => maskStrings(x, mask));
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, maskStrings(x, mask)]));
  return v;
}

/** The links a receiver follows, absolute when the server's public URL is known. */
export function runLinksFor(runId: string, base: string | null): Record<string, string> {
  const b = base ?? '';
  const api = `${b}/api/runs/${encodeURIComponent(runId)}`;
  return { run: api, events: `${api}/events`, webhooks: `${api}/webhooks`, page: `${b}/#/runs/${encodeURIComponent(runId)}` };
}

export function webhookBody(type: WebhookEventType, status: RunStatusFile, links: Record<string, string>, at: number, mask: (s: string) => string): string {
  return JSON.stringify({ type, timestamp: new Date(at).toISOString(), data: maskStrings(status, mask), links });
}

/** The messages of one run event, one per destination. */
export function messagesFor(
  runId: string,
  key: ReportKey,
  targets: StoredTarget[],
  body: { type: WebhookEventType; text: string },
  at: number,
  retryForMs: number,
): WebhookMessage[] {
  return targets.map((t, i) => ({
    webhook_id: webhookId(runId, key, t, i),
    run_id: runId,
    type: body.type,
    target: i,
    body: body.text,
    created_at: new Date(at).toISOString(),
    attempts: 0,
    state: 'pending',
    next_attempt_at: at,
    give_up_at: at + retryForMs,
  }));
}
