/**
 * Roles and scopes: what a role may do, and the scopes a key may carry to narrow it. A role ranks
 * owner > admin > member > viewer; a key's scopes narrow its user's role and never widen it.
 */

export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const SCOPES = ['runs:read', 'runs:write', 'approvals', 'schedules', 'channels', 'experiments', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

/** The scopes each role holds in full; a key of that role carries these or fewer. */
const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: SCOPES,
  admin: SCOPES,
  member: ['runs:read', 'runs:write', 'approvals', 'schedules', 'channels', 'experiments'],
  viewer: ['runs:read'],
};

export function isRole(v: unknown): v is Role {
  return typeof v === 'string' && (ROLES as readonly string[]).includes(v);
}

export function isScope(v: unknown): v is Scope {
  return typeof v === 'string' && (SCOPES as readonly string[]).includes(v);
}

export function scopesOfRole(role: Role): readonly Scope[] {
  return ROLE_SCOPES[role];
}

/** Higher is more: owner 3 … viewer 0. */
export function roleRank(role: Role): number {
  return ROLES.length - 1 - ROLES.indexOf(role);
}
