/**
 * The auth layer's front: turns what a request presents into an Identity and its TenantScope, or a
 * reason it cannot. A text starting `rt_` is a key: its checksum is checked first (a typo or a guess is
 * refused without a lookup), then its id is looked up and its hash compared in constant time, with
 * the rotation grace, expiry, revocation and the user's current role applied. Anything else is compared
 * with the server token (RUNTRAIL_API_TOKEN), the owner key of tenant `default`.
 *
 * The identity file is re-read when it changes, looked at no more than every `refreshMs` (500 ms), so
 * a key revoked by any process on this data dir stops working within a second. `last_used_at` is
 * gathered in memory and written every `touchEveryMs` (30 s), not once per request.
 */
import { keyHashMatches, parseApiKey, looksLikeApiKey } from './api-key.js';
import { DEFAULT_TENANT, type IdentityFile } from './identity-records.js';
import type { IdentityStore } from './identity-store.js';
import { scopesOfRole } from './roles.js';
import { TenantScope, type Identity } from './tenant-scope.js';
import { tokenMatches } from './server-token.js';

export type AuthFailure = 'missing' | 'malformed' | 'unknown_key' | 'wrong_secret' | 'revoked' | 'expired' | 'user_removed' | 'tenant_disabled' | 'wrong_token';

export type AuthResult = { ok: true; scope: TenantScope } | { ok: false; reason: AuthFailure; keyId?: string };

export interface AuthenticatorOptions {
  /** The server token; absent: only keys (and the local operator, where the server allows one). */
  serverToken?: string;
  now?: () => number;
  refreshMs?: number;
  touchEveryMs?: number;
}

/** The identity of the server token and of the local operator (no token, loopback only). */
export const OPERATOR: Identity = { tenant: DEFAULT_TENANT, user: 'operator', role: 'owner', scopes: scopesOfRole('owner'), keyId: null };

export class Authenticator {
  private file: IdentityFile | null = null;
  private fileMtime = -1;
  private checkedAt = 0;
  private loading: Promise<void> | null = null;
  private readonly used = new Map<string, number>();
  private readonly touchTimer: NodeJS.Timeout;
  private readonly now: () => number;
  private readonly listeners = new Set<(file: IdentityFile) => void>();

  constructor(
    private readonly store: IdentityStore,
    private readonly opts: AuthenticatorOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    this.touchTimer = setInterval(() => void this.flushUse().catch(() => undefined), opts.touchEveryMs ?? 30_000);
    this.touchTimer.unref();
  }

  /** The local operator's scope (a server without a token, loopback only; the CLI on its own data dir). */
  operatorScope(): TenantScope {
    return TenantScope.mint(OPERATOR);
  }

  /** Called with the identity file each time it is read anew (to close the streams of keys that stopped working). */
  onReload(listener: (file: IdentityFile) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async authenticate(presented: string): Promise<AuthResult> {
    if (!presented) return { ok: false, reason: 'missing' };
    if (!looksLikeApiKey(presented)) {
      if (this.opts.serverToken !== undefined && tokenMatches(presented, this.opts.serverToken)) return { ok: true, scope: TenantScope.mint(OPERATOR) };
      return { ok: false, reason: 'wrong_token' };
    }
    const parsed = parseApiKey(presented);
    if (!parsed) return { ok: false, reason: 'malformed' };
    const file = await this.current();
    const keyId = parsed.keyId;
    // a key made a moment ago by another process: look at the file once more before refusing
    const key = file.keys.find((k) => k.id === keyId) ?? (this.invalidate(), (await this.current()).keys.find((k) => k.id === keyId));
    if (!key) return { ok: false, reason: 'unknown_key', keyId };
    const now = this.now();
    const matches =
      keyHashMatches(presented, key.hash) ||
      (key.previous !== null && Date.parse(key.previous.valid_until) > now && keyHashMatches(presented, key.previous.hash));
    if (!matches) return { ok: false, reason: 'wrong_secret', keyId };
    if (key.revoked_at) return { ok: false, reason: 'revoked', keyId };
    if (key.expires_at && Date.parse(key.expires_at) <= now) return { ok: false, reason: 'expired', keyId };
    const user = file.users.find((u) => u.tenant === key.tenant && u.id === key.user);
    if (!user) return { ok: false, reason: 'user_removed', keyId };
    const tenant = file.tenants.find((t) => t.id === key.tenant);
    if (tenant?.disabled_at) return { ok: false, reason: 'tenant_disabled', keyId };
    // the user's role today bounds the key, whatever it was given when the role was higher
    const held = scopesOfRole(user.role);
    this.used.set(keyId, now);
    return {
      ok: true,
      scope: TenantScope.mint({ tenant: key.tenant, user: user.id, role: user.role, scopes: key.scopes.filter((s) => held.includes(s)), keyId }),
    };
  }

  /** Whether a key still works now (for streams opened with it). */
  async keyStillValid(keyId: string): Promise<boolean> {
    const file = await this.current();
    const k = file.keys.find((x) => x.id === keyId);
    if (!k || k.revoked_at) return false;
    if (k.expires_at && Date.parse(k.expires_at) <= this.now()) return false;
    return file.users.some((u) => u.tenant === k.tenant && u.id === k.user);
  }

  /** The next look at the identity file reads it (after a change this process made). */
  invalidate(): void {
    this.checkedAt = Number.NEGATIVE_INFINITY;
  }

  /** The identity file, re-read when it changed (looked at every refreshMs at most). */
  async current(): Promise<IdentityFile> {
    if (this.file && this.now() - this.checkedAt < (this.opts.refreshMs ?? 500)) return this.file;
    this.loading ??= this.reload().finally(() => {
      this.loading = null;
    });
    await this.loading;
    return this.file!;
  }

  private async reload(): Promise<void> {
    const mtime = await this.store.mtime();
    this.checkedAt = this.now();
    if (this.file && mtime === this.fileMtime) return;
    this.file = await this.store.read();
    this.fileMtime = mtime;
    for (const l of this.listeners) l(this.file);
  }

  async flushUse(): Promise<void> {
    if (this.used.size === 0) return;
    const batch = new Map(this.used);
    this.used.clear();
    await this.store.recordUse(batch);
  }

  async close(): Promise<void> {
    clearInterval(this.touchTimer);
    await this.flushUse().catch(() => undefined);
  }
}
