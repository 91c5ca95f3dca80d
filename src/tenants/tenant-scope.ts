/**
 * Who is asking, and which tenant's data they may see. `TenantScope` has no public constructor: only
 * the auth layer mints one, from a key it has verified (Authenticator), and every scoped store method
 * takes one, so a query without a scope does not compile. An owner's scope covers every tenant; any
 * other covers its own tenant only. test/architecture/tenant-scope.test.ts keeps `mint` in the auth layer.
 */
import { DEFAULT_TENANT } from './identity-records.js';
import type { Role, Scope } from './roles.js';

export interface Identity {
  tenant: string;
  /** The user or service account; `operator` for the server token and the local operator. */
  user: string;
  role: Role;
  /** What this key may do (its role's scopes, or fewer). */
  scopes: readonly Scope[];
  /** The key used; null for the server token (RUNTRAIL_API_TOKEN) or a local caller without one. */
  keyId: string | null;
}

export class TenantScope {
  private constructor(
    readonly identity: Identity,
    /** The tenant new resources go to. */
    readonly tenantId: string,
    private readonly everyTenant: boolean,
  ) {}

  /** For the auth layer only (Authenticator, and the local operator of the CLI). */
  static mint(identity: Identity): TenantScope {
    return new TenantScope(identity, identity.tenant, identity.role === 'owner');
  }

  /** An owner acting for `tenant`: resources it makes go there; it still sees every tenant. */
  actingFor(tenant: string): TenantScope {
    if (!this.everyTenant) throw new Error('only an owner acts for another tenant');
    return new TenantScope(this.identity, tenant, true);
  }

  get seesEveryTenant(): boolean {
    return this.everyTenant;
  }

  /** Whether a resource of `tenant` (absent: from before tenants, so `default`'s) is visible here. */
  owns(tenant: string | null | undefined): boolean {
    return this.everyTenant || (tenant || DEFAULT_TENANT) === this.tenantId;
  }

  /** The tenant filter a list takes: undefined for every tenant. */
  get listFilter(): string | undefined {
    return this.everyTenant ? undefined : this.tenantId;
  }

  can(scope: Scope): boolean {
    return this.identity.scopes.includes(scope);
  }
}

export function tenantOf(resourceTenant: string | null | undefined): string {
  return resourceTenant || DEFAULT_TENANT;
}
