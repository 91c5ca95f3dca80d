import { maskSecretValues } from './secret-values.js';

/**
 * Scrubs secrets (by key, and credential-looking values inside strings) and bounds size of
 * process-event payloads before they are shown, logged or sent. Never mutates its input, never throws (cycles, odd types, huge values).
 */
export interface SanitizeOptions {
  /** Longest string kept; longer ones are cut with a visible marker. Default 2000. */
  maxStringLength?: number;
  /** Most array items (and object keys) kept; the rest become a marker. Default 50. */
  maxItems?: number;
  /** Deepest nesting kept; deeper values become a marker. Default 6. */
  maxDepth?: number;
}

// the documented key words, and the same secrets under their other common names (passwd, passphrase, private_key, cookie)
const SECRET_WORDS = ['apikey', 'token', 'password', 'secret', 'authorization', 'credential', 'passwd', 'passphrase', 'privatekey', 'cookie'];

/** True when a key names a secret in any case or separator: apiKey, API-KEY, x_api_key, client_secret … */
export function isSecretKey(key: string): boolean {
  const k = key.toLowerCase().replace(/[^a-z0-9]/g, '');
  for (const w of SECRET_WORDS) if (k.includes(w)) return true;
  return false;
}

export const TRUNCATED_MARK = '…[truncated';
/** Text past the cut that is still masked, so a credential crossing it is recognised whole. */
const SECRET_MARGIN = 1024;

export function sanitizeProcessPayload(value: unknown, opts: SanitizeOptions = {}): unknown {
  const maxStr = opts.maxStringLength ?? 2000;
  const maxItems = opts.maxItems ?? 50;
  const maxDepth = opts.maxDepth ?? 6;
  const seen = new Set<object>();

  const walk = (v: unknown, depth: number): unknown => {
    switch (typeof v) {
      case 'string': {
        if (v.length <= maxStr) return maskSecretValues(v);
        // masked before the cut (with a margin), so a credential the cut would split is never half shown
        const kept = maskSecretValues(v.slice(0, maxStr + SECRET_MARGIN)).slice(0, maxStr);
        return `${kept}${TRUNCATED_MARK} ${v.length - maxStr} chars]`;
      }
      case 'number':
        return Number.isFinite(v) ? v : String(v);
      case 'boolean':
        return v;
      case 'undefined':
        return undefined;
      case 'bigint':
        return v.toString();
      case 'symbol':
        return v.toString();
      case 'function':
        return `[function ${v.name || 'anonymous'}]`;
    }
    if (v === null) return null;
    const o = v as object;
    if (seen.has(o)) return '[circular]';
    if (depth >= maxDepth) return '[max depth]';
    if (o instanceof Date) return Number.isNaN(o.getTime()) ? 'Invalid Date' : o.toISOString();
    if (o instanceof Error) return { name: o.name, message: walk(o.message, depth + 1) };
    if (ArrayBuffer.isView(o) || o instanceof ArrayBuffer) return `[${o.constructor.name} ${o.byteLength} bytes]`;
    seen.add(o);
    try {
      if (Array.isArray(o) || o instanceof Set) {
        const arr = Array.isArray(o) ? o : [...o];
        const out: unknown[] = [];
        const n = Math.min(arr.length, maxItems);
        for (let i = 0; i < n; i++) {
          const x = walk(arr[i], depth + 1);
          out.push(x === undefined ? null : x);
        }
        if (arr.length > maxItems) out.push(`${TRUNCATED_MARK} ${arr.length - maxItems} items]`);
        return out;
      }
      const entries: Array<[string, unknown]> = o instanceof Map ? [...o.entries()].map(([k, x]) => [String(k), x]) : safeEntries(o);
      const out: Record<string, unknown> = {};
      let kept = 0;
      let dropped = 0;
      for (const [k, x] of entries) {
        if (isSecretKey(k)) continue;
        if (kept >= maxItems) {
          dropped++;
          continue;
        }
        const w = walk(x, depth + 1);
        if (w === undefined) continue;
        out[k] = w;
        kept++;
      }
      if (dropped > 0) out['…'] = `${TRUNCATED_MARK} ${dropped} keys]`;
      return out;
    } finally {
      seen.delete(o);
    }
  };
  return walk(value, 0);
}

function safeEntries(o: object): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const k of Object.keys(o)) {
    try {
      out.push([k, (o as Record<string, unknown>)[k]]);
    } catch (err) {
      // a throwing getter must not take the event down with it
      out.push([k, `[unreadable: ${err instanceof Error ? err.message : String(err)}]`]);
    }
  }
  return out;
}
