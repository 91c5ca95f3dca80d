/**
 * The API token: whether it is strong enough to guard a server others can reach, how a request
 * presents it (`Authorization: Bearer`, or `?access_token=` on a GET: EventSource and WebSocket cannot
 * set headers), and URLs as logs may show them. A query parameter's name is read decoded, as the
 * router reads it: `?%61ccess%5f%74oken=` is `access_token` both when it is checked and when it is
 * redacted.
 */
import { maskSecretValues } from '../events/secret-values.js';

export const MIN_TOKEN_LENGTH = 24;
const MIN_DISTINCT_CHARACTERS = 8;

export const MAKE_TOKEN_HINT = "make one with: openssl rand -hex 32   (or: node -e \"console.log(require('crypto').randomBytes(32).toString('hex'))\")";

/** Why `token` cannot guard the server, or null when it can. Never shows the token. */
export function weakTokenReason(token: string): string | null {
  if (token.length < MIN_TOKEN_LENGTH) {
    return `RUNTRAIL_API_TOKEN is ${token.length} character${token.length === 1 ? '' : 's'} long; it must be at least ${MIN_TOKEN_LENGTH} random characters; ${MAKE_TOKEN_HINT}`;
  }
  if (token !== token.trim()) return `RUNTRAIL_API_TOKEN has spaces at its ends, which HTTP clients drop from headers; ${MAKE_TOKEN_HINT}`;
  if (new Set(token).size < MIN_DISTINCT_CHARACTERS) {
    return `RUNTRAIL_API_TOKEN repeats a few characters (${new Set(token).size} different ones); it must be random; ${MAKE_TOKEN_HINT}`;
  }
  return null;
}

export { tokenMatches } from '../tenants/server-token.js';

/** The names a token travels under in a query string. */
const TOKEN_PARAM = /^(?:access[_-]?token|token)$/i;

/** A query string's part decoded as a router decodes it (`+` is a space); the text itself when it is not valid. */
function decodePart(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** A URL as logs may show it: the value of every token parameter (whatever encoding its name is in) is
 *  replaced, and the server's secrets and any other credential-looking value in it masked. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return maskSecretValues(url);
  const hash = url.indexOf('#', q);
  const query = url.slice(q + 1, hash < 0 ? undefined : hash);
  const shown = query
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return TOKEN_PARAM.test(decodePart(name).trim()) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return maskSecretValues(`${url.slice(0, q + 1)}${shown}${hash < 0 ? '' : url.slice(hash)}`);
}

/** The token a request presents: the Bearer header, else (GET only) the decoded `access_token` query parameter; '' when none. */
export function presentedToken(req: { method: string; headers: Record<string, string | string[] | undefined>; query?: unknown }): string {
  const h = req.headers.authorization;
  if (typeof h === 'string' && /^Bearer /i.test(h)) return h.slice(7).trim();
  if (req.method !== 'GET') return '';
  // the router's parser has decoded the names (`%61ccess_token` is `access_token` there)
  const q = (req.query as Record<string, unknown> | undefined)?.access_token;
  return typeof q === 'string' ? q : '';
}
