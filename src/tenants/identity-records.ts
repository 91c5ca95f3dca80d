/**
 * What the identity file holds (`<dataDir>/tenants/identity.json`, owner-only): tenants, their users
 * and service accounts, and their keys. A key is kept as the SHA-256 of its text; during a rotation's
 * grace the old key's hash is kept beside the new one until `valid_until`.
 */
import type { Role, Scope } from './roles.js';

/** The tenant every run, upload and conversation from before tenants belongs to; the server token's. */
export const DEFAULT_TENANT = 'default';

export interface TenantRecord {
  id: string;
  name: string;
  created_at: string;
  disabled_at: string | null;
}

export type UserKind = 'user' | 'service';

export interface UserRecord {
  /** Unique within its tenant. */
  id: string;
  tenant: string;
  role: Role;
  kind: UserKind;
  created_at: string;
}

export interface KeyRecord {
  id: string;
  tenant: string;
  user: string;
  name: string;
  scopes: Scope[];
  hash: string;
  /** The hash a rotation replaced, valid until then (its grace). */
  previous: { hash: string; valid_until: string } | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

export interface IdentityFile {
  tenants: TenantRecord[];
  users: UserRecord[];
  keys: KeyRecord[];
}

export function emptyIdentityFile(): IdentityFile {
  return { tenants: [], users: [], keys: [] };
}

/** A key as any API or CLI shows it: never a hash. */
export interface KeyView {
  id: string;
  tenant: string;
  user: string;
  name: string;
  scopes: Scope[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  /** While a rotation's grace lasts: until when the replaced key still works. */
  previous_valid_until: string | null;
}

export function keyView(k: KeyRecord): KeyView {
  return {
    id: k.id,
    tenant: k.tenant,
    user: k.user,
    name: k.name,
    scopes: [...k.scopes],
    created_at: k.created_at,
    expires_at: k.expires_at,
    revoked_at: k.revoked_at,
    last_used_at: k.last_used_at,
    previous_valid_until: k.previous?.valid_until ?? null,
  };
}
