/** What a failed HTTP call to a service tells about whether the request got there. */
import type { DeliveryFailure } from './channel-types.js';

/** Codes of failures before a request reached the service: repeating it cannot post twice. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT', 'ERR_INVALID_URL']);

function codeOf(err: unknown, depth = 0): string | undefined {
  if (!err || typeof err !== 'object' || depth > 4) return undefined;
  const e = err as { code?: unknown; errno?: unknown; cause?: unknown; error?: unknown };
  if (typeof e.code === 'string' && NOT_SENT.has(e.code)) return e.code;
  if (typeof e.errno === 'string' && NOT_SENT.has(e.errno)) return e.errno;
  return codeOf(e.cause, depth + 1) ?? codeOf(e.error, depth + 1);
}

/** A network failure (no HTTP answer): `no` when the connection was never made, else `maybe`. */
export function networkFailure(err: unknown): DeliveryFailure {
  const code = codeOf(err);
  const message = err instanceof Error ? err.message : String(err);
  return { kind: 'unavailable', landed: code ? 'no' : 'maybe', message: code && !message.includes(code) ? `${message} (${code})` : message };
}

/** An HTTP answer that is not a success, by its status. */
export function httpFailure(status: number, message: string, retryAfterMs?: number): DeliveryFailure {
  if (status === 429) return { kind: 'rate_limited', retryAfterMs: retryAfterMs ?? 1000, message };
  if (status >= 500) return { kind: 'unavailable', landed: 'maybe', message, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  return { kind: 'rejected', message };
}
