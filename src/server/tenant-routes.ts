/**
 * Tenants, users, keys and the audit log over HTTP: `GET /api/me`, `/api/tenants` (the owner),
 * `/api/tenants/:t/users` (the owner, or an admin of :t), `/api/keys` (+ `/:id/rotate`, `/:id/revoke`)
 * and `GET /api/audit`. A caller sees and changes only what its role reaches: a member its own keys,
 * an admin its tenant's, the owner everything; another tenant's key is 404. No answer holds a key's
 * hash; a new key's text is in the one answer that makes it. Every change is audited.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { IdentityError } from '../tenants/identity-error.js';
import { DEFAULT_TENANT, type KeyView } from '../tenants/identity-records.js';
import { isRole, roleRank, SCOPES, type Role, type Scope } from '../tenants/roles.js';
import type { TenantScope } from '../tenants/tenant-scope.js';
import { HttpError } from './http-error.js';
import type { Tenancy } from './tenant-guard.js';

function httpErrorOf(e: unknown): unknown {
  if (!(e instanceof IdentityError)) return e;
  return new HttpError(e.status, e.code, e.message, { issues: [{ path: e.field, message: e.message.slice(e.field.length + 2) }] });
}

async function answer<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw httpErrorOf(e);
  }
}

function bodyObject(raw: unknown): Record<string, unknown> {
  return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
}

const notFoundKey = (id: string) => new HttpError(404, 'not_found', `no key ${JSON.stringify(id)}`);

export function registerTenantRoutes(app: FastifyInstance, tenancy: Tenancy): void {
  const store = tenancy.identities;

  /** Whether `scope` may manage keys of `user` (of `tenant`, holding `role`): the owner any; an admin its
   *  tenant's users of its rank or below; anyone else its own. */
  const mayManage = (scope: TenantScope, tenant: string, user: string, role: Role | undefined): boolean => {
    if (scope.seesEveryTenant) return true;
    if (tenant !== scope.tenantId) return false;
    if (scope.can('admin')) return role === undefined || roleRank(role) <= roleRank(scope.identity.role);
    return user === scope.identity.user;
  };
  const roleOfUser = async (tenant: string, user: string): Promise<Role | undefined> =>
    (await store.read()).users.find((u) => u.tenant === tenant && u.id === user)?.role;
  /** The key `id` if the caller may manage it; else 404 as for a key that does not exist. */
  const manageableKey = async (req: FastifyRequest, id: string): Promise<KeyView> => {
    const scope = tenancy.scopeOf(req);
    const key = await store.getKey(id).catch(() => null);
    if (!key || !mayManage(scope, key.tenant, key.user, await roleOfUser(key.tenant, key.user))) {
      if (key) await tenancy.record(req, { action: 'access.foreign_id', tenant: scope.tenantId, target: `key:${id}` });
      throw notFoundKey(id);
    }
    return key;
  };

  app.get('/api/me', async (req) => {
    const s = tenancy.scopeOf(req);
    const { tenant, user, role, scopes, keyId } = s.identity;
    return { tenant, user, role, scopes, key_id: keyId, quotas: null };
  });

  app.get('/api/tenants', async () => ({ tenants: await store.listTenants() }));
  app.post('/api/tenants', async (req, reply) => {
    const t = await answer(() => store.addTenant(req.body));
    await tenancy.record(req, { action: 'tenant.created', tenant: t.id, target: `tenant:${t.id}`, after: t });
    return reply.code(201).send(t);
  });

  app.get<{ Params: { t: string } }>('/api/tenants/:t/users', async (req) => ({ users: await answer(() => store.listUsers(req.params.t)) }));
  app.post<{ Params: { t: string } }>('/api/tenants/:t/users', async (req, reply) => {
    const scope = tenancy.scopeOf(req);
    const role = bodyObject(req.body).role;
    if (isRole(role) && roleRank(role) > roleRank(scope.identity.role)) {
      throw new HttpError(400, 'invalid_request', `role: ${role} is above your own role ${scope.identity.role}`, {
        issues: [{ path: 'role', message: `${role} is above your own role ${scope.identity.role}` }],
      });
    }
    const u = await answer(() => store.addUser(req.params.t, req.body));
    await tenancy.record(req, { action: 'user.created', tenant: u.tenant, target: `user:${u.tenant}/${u.id}`, after: u });
    return reply.code(201).send(u);
  });
  app.delete<{ Params: { t: string; user: string } }>('/api/tenants/:t/users/:user', async (req, reply) => {
    const scope = tenancy.scopeOf(req);
    const role = await roleOfUser(req.params.t, req.params.user);
    if (role && roleRank(role) > roleRank(scope.identity.role))
      throw new HttpError(403, 'forbidden', `${req.params.user} is a${role === 'owner' ? 'n' : ''} ${role}, above your role`);
    const u = await answer(() => store.removeUser(req.params.t, req.params.user));
    await tenancy.record(req, { action: 'user.removed', tenant: u.tenant, target: `user:${u.tenant}/${u.id}`, before: u });
    return reply.code(204).send();
  });

  app.get<{ Querystring: { tenant?: string } }>('/api/keys', async (req) => {
    const scope = tenancy.scopeOf(req);
    if (scope.seesEveryTenant) return { keys: await store.listKeys(req.query?.tenant ? { tenant: req.query.tenant } : {}) };
    if (scope.can('admin')) return { keys: await store.listKeys({ tenant: scope.tenantId }) };
    return { keys: await store.listKeys({ tenant: scope.tenantId, user: scope.identity.user }) };
  });

  app.post('/api/keys', async (req, reply) => {
    const scope = tenancy.scopeOf(req);
    const b = bodyObject(req.body);
    const tenant = b.tenant === undefined ? scope.tenantId : b.tenant;
    if (typeof tenant !== 'string')
      throw new HttpError(400, 'invalid_request', 'tenant: must be a tenant id', { issues: [{ path: 'tenant', message: 'must be a tenant id' }] });
    const user = b.user === undefined ? scope.identity.user : b.user;
    if (tenant !== scope.tenantId && !scope.seesEveryTenant) throw new HttpError(404, 'not_found', `no tenant ${JSON.stringify(tenant)}`);
    if (typeof user === 'string' && !mayManage(scope, tenant, user, await roleOfUser(tenant, user)))
      throw new HttpError(
        403,
        'forbidden',
        `you may make keys for yourself only${scope.can('admin') ? ' and for users of your tenant at or below your role' : ''}`,
      );
    // a key never carries what the key that made it lacks, unless an admin makes it for another user
    if (!scope.seesEveryTenant && !scope.can('admin') && Array.isArray(b.scopes)) {
      const above = (b.scopes as unknown[]).findIndex((s) => typeof s === 'string' && (SCOPES as readonly string[]).includes(s) && !scope.can(s as Scope));
      if (above >= 0)
        throw new HttpError(400, 'invalid_request', `scopes[${above}]: your key lacks ${String(b.scopes[above])}`, {
          issues: [{ path: `scopes[${above}]`, message: `your key lacks ${String(b.scopes[above])}` }],
        });
    }
    const { tenant: _t, ...rest } = b;
    const made = await answer(() => store.addKey(tenant, { ...rest, user }));
    await tenancy.record(req, { action: 'key.created', tenant, target: `key:${made.view.id}`, after: made.view });
    return reply.code(201).send({ key: made.key, ...made.view });
  });

  app.post<{ Params: { id: string } }>('/api/keys/:id/rotate', async (req, reply) => {
    const before = await manageableKey(req, req.params.id);
    const made = await answer(() => store.rotateKey(req.params.id, req.body ?? {}));
    await tenancy.record(req, { action: 'key.rotated', tenant: before.tenant, target: `key:${before.id}`, before, after: made.view });
    return reply.code(201).send({ key: made.key, ...made.view });
  });

  app.post<{ Params: { id: string } }>('/api/keys/:id/revoke', async (req) => {
    const before = await manageableKey(req, req.params.id);
    const after = await answer(() => store.revokeKey(req.params.id));
    await tenancy.record(req, { action: 'key.revoked', tenant: before.tenant, target: `key:${before.id}`, before, after });
    return after;
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/api/audit', async (req, reply) => {
    const scope = tenancy.scopeOf(req);
    if (!scope.seesEveryTenant && !scope.can('admin')) throw new HttpError(403, 'forbidden', 'the audit log is for admins of a tenant and the owner');
    const q = req.query ?? {};
    const tenant = scope.seesEveryTenant ? q.tenant : scope.tenantId;
    const lines = await tenancy.audit.read(
      (l) =>
        (tenant === undefined || l.tenant === tenant || (tenant === DEFAULT_TENANT && l.tenant === null && scope.seesEveryTenant)) &&
        (q.action === undefined || l.action === q.action || l.action.startsWith(`${q.action}.`)) &&
        (q.since === undefined || l.time >= q.since),
    );
    if (q.format === 'jsonl')
      return reply.type('application/x-ndjson; charset=utf-8').send(lines.map((l) => JSON.stringify(l)).join('\n') + (lines.length ? '\n' : ''));
    return { entries: lines };
  });
}
