/**
 * Every route's tenant policy: who may call it and how its data is kept to the caller's tenant. The
 * auth guard (tenant-guard.ts) applies it before any handler runs; a route missing here is treated as
 * `owner` (closed to every tenant key), and the cross-tenant test fails on it.
 *
 * - public: no credential (health, the page shell).
 * - identity: any valid key (who am I, the server's agents and skills).
 * - run: `:id` is a run of the caller's tenant, else 404 as for a run that does not exist.
 * - runs: lists or creates runs; the handler goes through TenantRuns with the caller's scope.
 * - tenant: `/api/tenants/:t/...`: the owner, or an admin of tenant :t (others: 404).
 * - handler: any valid key; the handler lets each caller see and change only what its role allows.
 * - owner: server-wide, or not yet kept per tenant: the owner only (403 to every tenant key).
 */
import type { Scope } from '../tenants/roles.js';

export type RoutePolicy =
  | { kind: 'public' }
  | { kind: 'identity' }
  | { kind: 'run'; scope: Scope }
  | { kind: 'runs'; scope: Scope }
  | { kind: 'tenant'; scope: Scope }
  | { kind: 'handler' }
  | { kind: 'owner' };

const READ: RoutePolicy = { kind: 'run', scope: 'runs:read' };
const WRITE: RoutePolicy = { kind: 'run', scope: 'runs:write' };

/** By `METHOD url` as the router has it (HEAD goes by its GET). */
export const ROUTE_POLICIES: Readonly<Record<string, RoutePolicy>> = {
  'GET /healthz': { kind: 'public' },
  'GET /': { kind: 'public' },
  'GET /*': { kind: 'public' },
  'GET /api/me': { kind: 'identity' },
  'GET /api/plugins': { kind: 'identity' },
  'GET /api/skills': { kind: 'identity' },

  'POST /api/runs': { kind: 'runs', scope: 'runs:write' },
  'GET /api/runs': { kind: 'runs', scope: 'runs:read' },
  'GET /api/runs/:id': READ,
  'POST /api/runs/:id/cancel': WRITE,
  'GET /api/runs/:id/manifest': READ,
  'GET /api/runs/:id/plan': READ,
  'GET /api/runs/:id/config': READ,
  'GET /api/runs/:id/metrics': READ,
  'GET /api/runs/:id/artifacts/*': READ,
  'GET /api/runs/:id/events': READ,
  'GET /api/runs/:id/ws': READ,
  'GET /api/runs/:id/trace': READ,
  'GET /api/runs/:id/model-calls': READ,
  'GET /api/runs/:id/model-calls/files/:name': READ,
  'GET /api/runs/:id/approvals': READ,
  'POST /api/runs/:id/approvals/:approval': { kind: 'run', scope: 'approvals' },
  'POST /api/runs/:id/messages': WRITE,
  'GET /api/runs/:id/webhooks': READ,
  'POST /api/runs/:id/webhooks/redeliver': WRITE,

  'GET /api/tenants': { kind: 'owner' },
  'POST /api/tenants': { kind: 'owner' },
  'GET /api/tenants/:t/users': { kind: 'tenant', scope: 'admin' },
  'POST /api/tenants/:t/users': { kind: 'tenant', scope: 'admin' },
  'DELETE /api/tenants/:t/users/:user': { kind: 'tenant', scope: 'admin' },
  'GET /api/keys': { kind: 'handler' },
  'POST /api/keys': { kind: 'handler' },
  'POST /api/keys/:id/rotate': { kind: 'handler' },
  'POST /api/keys/:id/revoke': { kind: 'handler' },
  'GET /api/audit': { kind: 'handler' },

  // server-wide, or not yet kept per tenant: the owner's alone until they are
  'GET /metrics': { kind: 'owner' },
  'GET /api/channels': { kind: 'owner' },
  'POST /api/uploads': { kind: 'owner' },
  'POST /api/chat': { kind: 'owner' },
  'GET /api/chat/:id/stream': { kind: 'owner' },
  'POST /api/im/messages': { kind: 'owner' },
  'POST /api/schedules': { kind: 'owner' },
  'GET /api/schedules': { kind: 'owner' },
  'GET /api/schedules/:id': { kind: 'owner' },
  'PATCH /api/schedules/:id': { kind: 'owner' },
  'DELETE /api/schedules/:id': { kind: 'owner' },
  'POST /api/schedules/:id/run': { kind: 'owner' },
};

/** The policy of a matched route; undefined when it has none. */
export function policyOf(method: string, url: string | undefined): RoutePolicy | undefined {
  if (url === undefined) return undefined;
  return ROUTE_POLICIES[`${method === 'HEAD' ? 'GET' : method} ${url}`];
}
