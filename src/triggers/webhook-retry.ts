/**
 * When a failed webhook delivery is tried again: the wait doubles from `base` (5 s by default) up to
 * `max_interval` (1 h), each wait between 80 % and 120 % of its step (never past the cap) so the
 * retries of many messages spread out; attempts stop `for` (24 h) after the message was made. With
 * the defaults a receiver answering 500, 500, 200 has its message about 15 s after the first
 * attempt, and one that is down for a day gets about thirty attempts.
 */
import type { WebhookRetry } from './trigger-config.js';

/** The wait after the `attempt`-th failed attempt (1-based). */
export function webhookRetryDelay(attempt: number, r: WebhookRetry, random: () => number = Math.random): number {
  const step = Math.min(r.baseMs * 2 ** Math.min(attempt - 1, 40), r.maxIntervalMs);
  return Math.round(Math.min(step * (0.8 + 0.4 * random()), r.maxIntervalMs));
}
