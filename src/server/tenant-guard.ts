/**
 * The auth layer in the server: each request's credential becomes a TenantScope before any handler
 * runs, and the route's policy (route-policies.ts) is applied to it. A run id of another tenant is
 * answered 404 exactly as an unknown one, and audited; a wrong or missing credential is 401 (audited,
 * and refused without a lookup when a key's checksum is wrong); a route a key's role or scopes do
 * not reach is 403. `tenant_id` in a run's body is refused unless the owner names a tenant to act for
 * (audited). A stream opened with a key is closed within a second of the key being revoked or expiring.
 *
 * Without a server token, a request that presents no key comes from the local operator (the loopback
 * guard in start-server.ts has already refused anyone else): the owner, as before tenants.
 */
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { parseApiKey } from '../tenants/api-key.js';
import { AuditLog, type AuditEvent } from '../tenants/audit-log.js';
import { Authenticator, type AuthFailure } from '../tenants/authenticator.js';
import { SIGN_IN_LIMIT_DEFAULTS, SignInLimiter, type SignInLimits } from '../tenants/sign-in-limiter.js';
import { tenantsOf, IdentityStore } from '../tenants/identity-store.js';
import type { TenantScope } from '../tenants/tenant-scope.js';
import { TenantRuns } from '../tenants/tenant-runs.js';
import { presentedToken } from './api-token.js';
import { errorBody } from './http-error.js';
import { isRunId } from './run-id-param.js';
import { policyOf, type RoutePolicy } from './route-policies.js';

const FAILURE_TEXT: Record<AuthFailure, string> = {
  missing: 'missing bearer token (Authorization: Bearer <key>)',
  malformed: 'not a valid key: its checksum does not match (a typo, or a truncated copy)',
  unknown_key: 'unknown key',
  wrong_secret: 'wrong key',
  revoked: 'the key was revoked',
  expired: 'the key has expired',
  user_removed: "the key's user was removed",
  tenant_disabled: "the key's tenant is disabled",
  wrong_token: 'missing or wrong bearer token (Authorization: Bearer <RUNTRAIL_API_TOKEN or a key>)',
};

/** A stream route: its socket is closed when the key that opened it stops working. */
function isStreamRoute(url: string | undefined): boolean {
  return url === '/api/runs/:id/events' || url === '/api/runs/:id/ws';
}

/** The tenancy each server installed (tests read its route table). */
const INSTALLED = new WeakMap<FastifyInstance, Tenancy>();

export function tenancyOf(app: FastifyInstance): Tenancy | undefined {
  return INSTALLED.get(app);
}

export interface TenancyOptions {
  dataDir: string;
  service: RunServiceApi;
  /** The server token (RUNTRAIL_API_TOKEN): the owner key of tenant `default`. */
  token?: string;
  /** How often streams opened with a key look whether it still works (500 ms). */
  streamCheckMs?: number;
  /** Failed sign-ins allowed per address and per key id in a minute (SIGN_IN_LIMIT_DEFAULTS). */
  signIn?: Partial<SignInLimits>;
}

export class Tenancy {
  readonly identities: IdentityStore;
  readonly auth: Authenticator;
  readonly runs: TenantRuns;
  readonly audit: AuditLog;
  private readonly signIns: SignInLimiter;
  private readonly scopes = new WeakMap<FastifyRequest, TenantScope>();
  private readonly streams = new Map<string, Set<Socket>>();
  private streamTimer: NodeJS.Timeout | null = null;

  constructor(private readonly opts: TenancyOptions) {
    this.identities = new IdentityStore(opts.dataDir);
    this.auth = new Authenticator(this.identities, { serverToken: opts.token });
    this.runs = new TenantRuns(opts.service);
    this.audit = new AuditLog(opts.dataDir);
    this.signIns = new SignInLimiter({ ...SIGN_IN_LIMIT_DEFAULTS, ...opts.signIn });
  }

  /** The scope the guard gave this request (every route but the public ones has one). */
  scopeOf(req: FastifyRequest): TenantScope {
    const s = this.scopes.get(req);
    if (!s) throw new Error(`no tenant scope for ${req.method} ${req.routeOptions.url}: the route has no policy`);
    return s;
  }

  /** An owner acting for a tenant (a body's tenant_id) replaces the request's scope. */
  private setScope(req: FastifyRequest, scope: TenantScope): void {
    this.scopes.set(req, scope);
  }

  /** Writes an audit line of this request; resolves once it is written (a failed write is logged, never
   *  failing the request). Also makes the next authentication read the identity file anew: a change
   *  this process made (a key revoked) holds at once. */
  async record(req: FastifyRequest, ev: Omit<AuditEvent, 'ip' | 'request_id' | 'actor'> & { actor?: AuditEvent['actor'] }): Promise<void> {
    const scope = this.scopes.get(req);
    const actor = ev.actor !== undefined ? ev.actor : scope ? { tenant: scope.identity.tenant, user: scope.identity.user, key_id: scope.identity.keyId } : null;
    if (/^(key|user|tenant)\./.test(ev.action)) this.auth.invalidate();
    await this.audit.append({ ...ev, actor, ip: req.ip, request_id: String(req.id) }).catch((e) => req.log.error({ err: e }, 'audit log write failed'));
  }

  /** Every route of the server, as registered (the cross-tenant test checks each has a policy). */
  readonly routes: Array<{ method: string; url: string }> = [];

  install(app: FastifyInstance): void {
    INSTALLED.set(app, this);
    app.addHook('onRoute', (r) => {
      for (const method of [r.method].flat()) if (method !== 'HEAD') this.routes.push({ method, url: r.url });
    });
    app.addHook('onRequest', async (req, reply) => this.guard(req, reply));
    app.addHook('preHandler', async (req, reply) => this.bodyTenant(req, reply));
    app.addHook('onClose', async () => {
      if (this.streamTimer) clearInterval(this.streamTimer);
      await this.auth.close();
    });
  }

  private async guard(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    const route = req.routeOptions.url;
    const policy: RoutePolicy = policyOf(req.method, route) ?? { kind: 'owner' };
    if (policy.kind === 'public' && (req.method === 'GET' || req.method === 'HEAD')) return;
    const given = presentedToken(req);
    let scope: TenantScope;
    if (!given && this.opts.token === undefined) {
      scope = this.auth.operatorScope();
    } else {
      const claimedKeyId = /^rt_([0-9A-Za-z]{12})_/.exec(given)?.[1];
      const wait = this.signIns.retryAfterS(req.ip, claimedKeyId);
      if (wait > 0) {
        reply
          .code(429)
          .header('retry-after', String(wait))
          .header('connection', 'close')
          .send(
            errorBody('too_many_failed_sign_ins', `too many failed sign-ins from this address or for this key; try again in ${wait} s`, {
              retry_after_s: wait,
            }),
          );
        return reply;
      }
      const r = await this.auth.authenticate(given);
      if (!r.ok) {
        this.signIns.fail(req.ip, claimedKeyId);
        const keyId = r.keyId ?? parseApiKey(given)?.keyId;
        await this.record(req, { action: 'auth.failed', actor: null, tenant: null, outcome: r.reason, ...(keyId ? { target: `key:${keyId}` } : {}) });
        // answered before the body is read; the connection closes, so a body still coming holds nothing
        reply.code(401).header('www-authenticate', 'Bearer').header('connection', 'close').send(errorBody('unauthorized', FAILURE_TEXT[r.reason]));
        return reply;
      }
      scope = r.scope;
    }
    this.scopes.set(req, scope);
    const refusal = await this.refusal(req, policy, scope);
    if (refusal) {
      if (refusal.status === 403 || refusal.foreign) {
        await this.record(req, {
          action: refusal.status === 403 ? 'access.forbidden' : 'access.foreign_id',
          tenant: scope.tenantId,
          target: `${req.method} ${req.url.split('?')[0]}`,
        });
      }
      reply.code(refusal.status).send(errorBody(refusal.status === 404 ? 'not_found' : 'forbidden', refusal.message));
      return reply;
    }
    if (scope.identity.keyId && isStreamRoute(route)) this.watchStream(scope.identity.keyId, req.raw.socket);
  }

  private async refusal(
    req: FastifyRequest,
    policy: RoutePolicy,
    scope: TenantScope,
  ): Promise<{ status: 403 | 404; message: string; foreign?: boolean } | null> {
    const params = (req.params ?? {}) as Record<string, string | undefined>;
    switch (policy.kind) {
      case 'public':
      case 'identity':
      case 'handler':
        return null;
      case 'owner':
        return scope.seesEveryTenant
          ? null
          : { status: 403, message: `${req.method} ${req.routeOptions.url} is the server owner's; a tenant's key cannot use it` };
      case 'runs':
        return scope.can(policy.scope) ? null : { status: 403, message: `this key lacks the scope ${policy.scope}` };
      case 'run': {
        const id = params.id ?? '';
        const probe = isRunId(id) ? await this.runs.probe(scope, id) : 'absent';
        // a WebSocket is told "not found" in its own protocol (close 4404), by the route's scoped lookup
        const upgrade = req.routeOptions.url === '/api/runs/:id/ws' && /websocket/i.test(String(req.headers.upgrade ?? ''));
        if (probe !== 'mine' && upgrade) {
          if (probe === 'foreign')
            await this.record(req, { action: 'access.foreign_id', tenant: scope.tenantId, target: `${req.method} ${req.url.split('?')[0]}` });
          return null;
        }
        if (probe !== 'mine') return { status: 404, message: `no run ${JSON.stringify(id)}`, foreign: probe === 'foreign' };
        return scope.can(policy.scope) ? null : { status: 403, message: `this key lacks the scope ${policy.scope}` };
      }
      case 'tenant': {
        const t = params.t ?? '';
        if (scope.seesEveryTenant) return null;
        if (t !== scope.tenantId) return { status: 404, message: `no tenant ${JSON.stringify(t)}`, foreign: true };
        return scope.can(policy.scope) ? null : { status: 403, message: `this key lacks the scope ${policy.scope}` };
      }
    }
  }

  /** POST /api/runs: `tenant_id` is the key's tenant; only the owner may name one, and acts for it (audited). */
  private async bodyTenant(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply | undefined> {
    if (req.method !== 'POST' || policyOf(req.method, req.routeOptions.url)?.kind !== 'runs') return;
    const body = req.body as Record<string, unknown> | null;
    if (!body || typeof body !== 'object' || Array.isArray(body) || body.tenant_id === undefined) return;
    const scope = this.scopeOf(req);
    const issue = (message: string) => {
      reply.code(400).send(errorBody('invalid_request', `tenant_id: ${message}`, { issues: [{ path: 'tenant_id', message }] }));
      return reply;
    };
    if (!scope.seesEveryTenant) return issue("a run belongs to its key's tenant; only the server owner may name one");
    const t = body.tenant_id;
    const tenants = tenantsOf(await this.identities.read());
    if (typeof t !== 'string' || !tenants.some((x) => x.id === t))
      return issue(`no tenant ${JSON.stringify(t)} (tenants: ${tenants.map((x) => x.id).join(', ')})`);
    const { tenant_id: _named, ...rest } = body;
    req.body = rest;
    this.setScope(req, scope.actingFor(t));
    await this.record(req, { action: 'owner.act_as', tenant: t, target: `${req.method} ${req.routeOptions.url}` });
  }

  private watchStream(keyId: string, socket: Socket): void {
    let set = this.streams.get(keyId);
    if (!set) this.streams.set(keyId, (set = new Set()));
    set.add(socket);
    socket.once('close', () => {
      set.delete(socket);
      if (set.size === 0 && this.streams.get(keyId) === set) this.streams.delete(keyId);
    });
    this.streamTimer ??= setInterval(() => void this.closeStreamsOfDeadKeys(), this.opts.streamCheckMs ?? 500);
    this.streamTimer.unref();
  }

  private async closeStreamsOfDeadKeys(): Promise<void> {
    if (this.streams.size === 0) {
      if (this.streamTimer) clearInterval(this.streamTimer);
      this.streamTimer = null;
      return;
    }
    for (const [keyId, sockets] of this.streams) {
      if (await this.auth.keyStillValid(keyId).catch(() => true)) continue;
      for (const s of sockets) s.destroy();
      this.streams.delete(keyId);
    }
  }
}
