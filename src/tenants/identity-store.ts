/**
 * Tenants, users and keys of one data dir, in `<dataDir>/tenants/identity.json` (folder 0700, file
 * 0600), changed under a lock so a server and the CLI can both change it. Every change is checked
 * here, so the API and the CLI refuse the same input with the same words: an unknown role or scope,
 * a scope above its user's role, an expiry in the past, a duplicate id (400, nothing written), an
 * unknown tenant, user or key (404), removing the last owner (409).
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { LockedJsonFile } from '../triggers/locked-json-file.js';
import { isKeyId, keyHash, newApiKey, newKeyId } from './api-key.js';
import { IdentityError } from './identity-error.js';
import {
  DEFAULT_TENANT,
  emptyIdentityFile,
  keyView,
  type IdentityFile,
  type KeyRecord,
  type KeyView,
  type TenantRecord,
  type UserKind,
  type UserRecord,
} from './identity-records.js';
import { isRole, isScope, ROLES, SCOPES, scopesOfRole, type Role, type Scope } from './roles.js';

const TENANT_ID = /^[a-z0-9][a-z0-9-]{0,39}$/;
const USER_ID = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export const DEFAULT_ROTATION_GRACE_S = 24 * 3600;
/** A rotation's grace is at most a week: an old key should not live on by accident. */
const MAX_ROTATION_GRACE_S = 7 * 24 * 3600;

export function identityFilePath(dataDir: string): string {
  return join(dataDir, 'tenants', 'identity.json');
}

function bodyOf(raw: unknown): Record<string, unknown> {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new IdentityError('invalid_request', '(body)', 'must be a JSON object');
  return raw as Record<string, unknown>;
}

function tenantIdOf(v: unknown, field = 'id'): string {
  if (typeof v !== 'string' || !TENANT_ID.test(v))
    throw new IdentityError(
      'invalid_request',
      field,
      `must be 1-40 characters of a-z, 0-9 and '-', starting with a letter or digit (got ${JSON.stringify(v)})`,
    );
  return v;
}

function userIdOf(v: unknown, field = 'id'): string {
  if (typeof v !== 'string' || !USER_ID.test(v))
    throw new IdentityError(
      'invalid_request',
      field,
      `must be 1-64 characters of letters, digits and . _ @ -, starting with a letter or digit (got ${JSON.stringify(v)})`,
    );
  return v;
}

function roleOf(v: unknown, field = 'role'): Role {
  if (!isRole(v)) throw new IdentityError('invalid_request', field, `must be one of ${ROLES.join(', ')} (got ${JSON.stringify(v)})`);
  return v;
}

function optionalText(v: unknown, field: string, max: number): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length > max) throw new IdentityError('invalid_request', field, `must be text of at most ${max} characters`);
  return v;
}

/** The scopes asked for a key of a user of `role`: all of the role's when none are named. */
function scopesFor(raw: unknown, role: Role): Scope[] {
  if (raw === undefined) return [...scopesOfRole(role)];
  if (!Array.isArray(raw) || raw.length === 0) throw new IdentityError('invalid_request', 'scopes', `must be a non-empty list of ${SCOPES.join(', ')}`);
  const held = scopesOfRole(role);
  raw.forEach((s, i) => {
    if (!isScope(s)) throw new IdentityError('invalid_request', `scopes[${i}]`, `unknown scope ${JSON.stringify(s)}; scopes are ${SCOPES.join(', ')}`);
    if (!held.includes(s)) throw new IdentityError('invalid_request', `scopes[${i}]`, `${s} is above the user's role ${role} (which holds ${held.join(', ')})`);
  });
  return [...new Set(raw as Scope[])];
}

function expiryOf(v: unknown, now: number): string | null {
  if (v === undefined || v === null) return null;
  const t = typeof v === 'string' ? Date.parse(v) : Number.NaN;
  if (!Number.isFinite(t)) throw new IdentityError('invalid_request', 'expires_at', `must be an ISO date-time (got ${JSON.stringify(v)})`);
  if (t <= now) throw new IdentityError('invalid_request', 'expires_at', `${v} is in the past`);
  return new Date(t).toISOString();
}

function graceOf(v: unknown): number {
  if (v === undefined) return DEFAULT_ROTATION_GRACE_S;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_ROTATION_GRACE_S)
    throw new IdentityError('invalid_request', 'grace_s', `must be an integer number of seconds in 0..${MAX_ROTATION_GRACE_S}`);
  return v;
}

/** The tenants, with `default` always there (it exists before anyone makes it). */
export function tenantsOf(file: IdentityFile): TenantRecord[] {
  if (file.tenants.some((t) => t.id === DEFAULT_TENANT)) return file.tenants;
  return [{ id: DEFAULT_TENANT, name: 'Default', created_at: new Date(0).toISOString(), disabled_at: null }, ...file.tenants];
}

function requireTenant(file: IdentityFile, id: string, field = 'tenant'): TenantRecord {
  const t = tenantsOf(file).find((x) => x.id === id);
  if (!t) throw new IdentityError('not_found', field, `no tenant ${JSON.stringify(id)}`);
  return t;
}

function requireUser(file: IdentityFile, tenant: string, id: string, field = 'user'): UserRecord {
  const u = file.users.find((x) => x.tenant === tenant && x.id === id);
  if (!u) throw new IdentityError('not_found', field, `no user ${JSON.stringify(id)} in tenant ${tenant}`);
  return u;
}

function requireKey(file: IdentityFile, id: string): KeyRecord {
  const k = isKeyId(id) ? file.keys.find((x) => x.id === id) : undefined;
  if (!k) throw new IdentityError('not_found', 'key', `no key ${JSON.stringify(id)}`);
  return k;
}

export interface NewKey {
  /** The key's text: shown once, never stored. */
  key: string;
  view: KeyView;
}

export class IdentityStore {
  private readonly file: LockedJsonFile<IdentityFile>;

  constructor(
    readonly dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.file = new LockedJsonFile(identityFilePath(dataDir), emptyIdentityFile);
  }

  /** The file as it is now. */
  read(): Promise<IdentityFile> {
    return this.file.read();
  }

  /** When the file last changed (0 when absent): a reader reloads when this moves. */
  mtime(): Promise<number> {
    return this.file.mtime();
  }

  private async change<R>(fn: (f: IdentityFile) => R): Promise<R> {
    await mkdir(join(this.dataDir, 'tenants'), { recursive: true, mode: 0o700 });
    return this.file.update((f) => ({ result: fn(f), changed: true }));
  }

  async listTenants(): Promise<TenantRecord[]> {
    return tenantsOf(await this.read());
  }

  async addTenant(raw: unknown): Promise<TenantRecord> {
    const b = bodyOf(raw);
    const id = tenantIdOf(b.id);
    const name = optionalText(b.name, 'name', 200) ?? id;
    return this.change((f) => {
      if (tenantsOf(f).some((t) => t.id === id)) throw new IdentityError('invalid_request', 'id', `tenant ${id} already exists`);
      const t: TenantRecord = { id, name, created_at: new Date(this.now()).toISOString(), disabled_at: null };
      f.tenants.push(t);
      return t;
    });
  }

  async listUsers(tenant: string): Promise<UserRecord[]> {
    const f = await this.read();
    requireTenant(f, tenant);
    return f.users.filter((u) => u.tenant === tenant);
  }

  async addUser(tenant: string, raw: unknown): Promise<UserRecord> {
    const b = bodyOf(raw);
    const id = userIdOf(b.id);
    const role = roleOf(b.role ?? 'member');
    if (b.kind !== undefined && b.kind !== 'user' && b.kind !== 'service')
      throw new IdentityError('invalid_request', 'kind', `must be user or service (got ${JSON.stringify(b.kind)})`);
    const kind: UserKind = (b.kind as UserKind | undefined) ?? 'user';
    if (role === 'owner' && tenant !== DEFAULT_TENANT)
      throw new IdentityError(
        'invalid_request',
        'role',
        `owner is the server's role and is held in tenant ${DEFAULT_TENANT} only; a tenant's highest is admin`,
      );
    return this.change((f) => {
      requireTenant(f, tenant);
      if (f.users.some((u) => u.tenant === tenant && u.id === id))
        throw new IdentityError('invalid_request', 'id', `user ${id} already exists in tenant ${tenant}`);
      const u: UserRecord = { id, tenant, role, kind, created_at: new Date(this.now()).toISOString() };
      f.users.push(u);
      return u;
    });
  }

  /** Removes a user and revokes their keys; the last owner stays (409). */
  async removeUser(tenant: string, id: string): Promise<UserRecord> {
    return this.change((f) => {
      const u = requireUser(f, tenant, id);
      if (u.role === 'owner' && f.users.filter((x) => x.role === 'owner').length === 1)
        throw new IdentityError('conflict', 'user', `${id} is the last owner; add another owner first`);
      f.users = f.users.filter((x) => x !== u);
      const at = new Date(this.now()).toISOString();
      for (const k of f.keys) if (k.tenant === tenant && k.user === id && !k.revoked_at) revoke(k, at);
      return u;
    });
  }

  async listKeys(filter: { tenant?: string; user?: string } = {}): Promise<KeyView[]> {
    const f = await this.read();
    return f.keys
      .filter((k) => (filter.tenant === undefined || k.tenant === filter.tenant) && (filter.user === undefined || k.user === filter.user))
      .map(keyView);
  }

  async getKey(id: string): Promise<KeyView> {
    return keyView(requireKey(await this.read(), id));
  }

  /** A new key for a user of `tenant` (`raw`: user, name?, scopes?, expires_at?). */
  async addKey(tenant: string, raw: unknown): Promise<NewKey> {
    const b = bodyOf(raw);
    const userId = userIdOf(b.user, 'user');
    const name = optionalText(b.name, 'name', 200) ?? '';
    const expiresAt = expiryOf(b.expires_at, this.now());
    return this.change((f) => {
      requireTenant(f, tenant);
      const user = requireUser(f, tenant, userId);
      const scopes = scopesFor(b.scopes, user.role);
      let id = newKeyId();
      while (f.keys.some((k) => k.id === id)) id = newKeyId();
      const key = newApiKey(id);
      const rec: KeyRecord = {
        id,
        tenant,
        user: user.id,
        name,
        scopes,
        hash: keyHash(key),
        previous: null,
        created_at: new Date(this.now()).toISOString(),
        expires_at: expiresAt,
        revoked_at: null,
        last_used_at: null,
      };
      f.keys.push(rec);
      return { key, view: keyView(rec) };
    });
  }

  /** A new secret for key `id`; the old one keeps working for `grace_s` (default 24 h). */
  async rotateKey(id: string, raw: unknown = {}): Promise<NewKey> {
    const grace = graceOf(bodyOf(raw).grace_s);
    return this.change((f) => {
      const k = requireKey(f, id);
      if (k.revoked_at) throw new IdentityError('conflict', 'key', `key ${id} is revoked`);
      const key = newApiKey(k.id);
      k.previous = grace > 0 ? { hash: k.hash, valid_until: new Date(this.now() + grace * 1000).toISOString() } : null;
      k.hash = keyHash(key);
      return { key, view: keyView(k) };
    });
  }

  async revokeKey(id: string): Promise<KeyView> {
    return this.change((f) => {
      const k = requireKey(f, id);
      if (!k.revoked_at) revoke(k, new Date(this.now()).toISOString());
      return keyView(k);
    });
  }

  /** Records when keys were last used (the reader gathers these and writes them now and then, not per request). */
  async recordUse(lastUsed: ReadonlyMap<string, number>): Promise<void> {
    if (lastUsed.size === 0) return;
    await this.change((f) => {
      for (const k of f.keys) {
        const t = lastUsed.get(k.id);
        if (t !== undefined && (!k.last_used_at || Date.parse(k.last_used_at) < t)) k.last_used_at = new Date(t).toISOString();
      }
    });
  }
}

function revoke(k: KeyRecord, at: string): void {
  k.revoked_at = at;
  k.previous = null;
}
