/**
 * `webhooks.allow` of config.json: URL patterns of where completion webhooks may go, e.g.
 * `https://hooks.example.com/*`, `https://*.example.com/runtrail/*`, `http://127.0.0.1:8080/*`.
 * An entry that is only an origin allows every path under it. A `*` in the host stands for one or
 * more labels before the rest of the name; in the path it stands for anything. The pattern is taken
 * apart (scheme, host, port, path) and each part matched alone, so a `*` can never reach from the
 * path into the host. With no list, any http(s) URL on a public address is allowed.
 */
import type { FieldIssue } from './types.js';

interface AllowEntry {
  text: string;
  scheme: 'http:' | 'https:';
  /** lowercase; `*.` prefix: any subdomain; `*`: any host */
  host: string;
  /** null: the scheme's default; '*': any */
  port: string | null;
  /** null: every path */
  path: RegExp | null;
}

/** How a URL fares against the list. `exactHost`: its entry names the host itself (no wildcard), which
 *  also allows that host's loopback, link-local and private addresses. */
export interface AllowMatch {
  allowed: boolean;
  exactHost: boolean;
}

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

function escapeRegExp(s: string): string {
  return s.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
}

function parseEntry(text: string): AllowEntry | string {
  const m = /^(https?):\/\/([^/?#]+)(\/[^?#]*)?$/i.exec(text.trim());
  if (!m) return 'must be an http(s) URL pattern such as https://hooks.example.com/* (no query or fragment)';
  const authority = m[2].toLowerCase();
  if (authority.includes('@')) return 'must not hold a user name or password';
  const hp = /^(\[[0-9a-f:.]+\]|[^:[\]]+)(?::(\d{1,5}|\*))?$/.exec(authority);
  if (!hp) return `has an unreadable host ${JSON.stringify(authority)}`;
  const host = hp[1];
  if (host !== '*' && !/^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$/.test(host) && !/^\[[0-9a-f:.]+\]$/.test(host)) {
    return `has an unreadable host ${JSON.stringify(host)} (a "*" may only stand first, as in *.example.com)`;
  }
  const rawPath = m[3] ?? '';
  const path = rawPath === '' || rawPath === '/' || rawPath === '/*' ? null : new RegExp(`^${rawPath.split('*').map(escapeRegExp).join('.*')}$`);
  return { text, scheme: `${m[1].toLowerCase()}:` as AllowEntry['scheme'], host, port: hp[2] ?? null, path };
}

function hostMatches(pattern: string, host: string): boolean {
  if (pattern === '*') return true;
  if (pattern.startsWith('*.')) return host.endsWith(pattern.slice(1)) && host.length > pattern.length - 1;
  return pattern.replace(/\.$/, '') === host.replace(/\.$/, '');
}

export class WebhookAllowList {
  private constructor(
    private readonly entries: AllowEntry[],
    /** false when config.json has no `webhooks.allow`: any public address is allowed */
    readonly configured: boolean,
  ) {}

  static readonly none = new WebhookAllowList([], false);

  /** The list from config.json's `webhooks.allow`; an entry that cannot be read is an issue and allows nothing. */
  static parse(raw: unknown, path = 'webhooks.allow'): { list: WebhookAllowList; issues: FieldIssue[] } {
    if (raw === undefined) return { list: WebhookAllowList.none, issues: [] };
    if (!Array.isArray(raw)) return { list: new WebhookAllowList([], true), issues: [{ path, message: 'must be a list of URL patterns' }] };
    const entries: AllowEntry[] = [];
    const issues: FieldIssue[] = [];
    raw.forEach((e, i) => {
      const r = typeof e === 'string' ? parseEntry(e) : 'must be a string';
      if (typeof r === 'string') issues.push({ path: `${path}.${i}`, message: `${JSON.stringify(e)} ${r}` });
      else entries.push(r);
    });
    return { list: new WebhookAllowList(entries, true), issues };
  }

  match(url: URL): AllowMatch {
    if (!this.configured) return { allowed: true, exactHost: false };
    const host = url.hostname.toLowerCase();
    const port = url.port || DEFAULT_PORT[url.protocol] || '';
    let allowed = false;
    for (const e of this.entries) {
      if (e.scheme !== url.protocol || !hostMatches(e.host, host)) continue;
      if (e.port !== '*' && (e.port ?? DEFAULT_PORT[e.scheme]) !== port) continue;
      if (e.path && !e.path.test(url.pathname)) continue;
      if (!e.host.includes('*')) return { allowed: true, exactHost: true };
      allowed = true;
    }
    return { allowed, exactHost: false };
  }

  /** The entries as written, for messages. */
  describe(): string {
    return this.entries.map((e) => e.text).join(', ') || '(none)';
  }
}
