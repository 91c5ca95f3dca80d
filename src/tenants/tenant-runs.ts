/**
 * The runs as one tenant sees them: every method takes a TenantScope (which only the auth layer can
 * make), so the server cannot ask for a run without saying whose. A run of another tenant is absent
 * here, exactly as a run that does not exist: never listed, null from get, not_found from the rest.
 * A run belongs to the tenant in its status (`tenant_id`); a run without one is `default`'s.
 */
import type { AgentEvent } from '../events/agent-event.js';
import { RunRequestError } from '../runtime/run-request-error.js';
import type { CreateRunOptions, RunListQuery, RunServiceApi, RunStatusFile } from '../runtime/run-service-types.js';
import type { TenantScope } from './tenant-scope.js';

export class TenantRuns {
  constructor(private readonly service: RunServiceApi) {}

  async get(scope: TenantScope, runId: string): Promise<RunStatusFile | null> {
    const run = await this.service.get(runId);
    return run && scope.owns(run.tenant_id) ? run : null;
  }

  /** Whether run `runId` is this scope's, another tenant's (for the audit of foreign ids), or does not exist. */
  async probe(scope: TenantScope, runId: string): Promise<'mine' | 'foreign' | 'absent'> {
    const run = await this.service.get(runId);
    return !run ? 'absent' : scope.owns(run.tenant_id) ? 'mine' : 'foreign';
  }

  /** The run, or not_found as for a run that does not exist. */
  async require(scope: TenantScope, runId: string): Promise<RunStatusFile> {
    const run = await this.get(scope, runId);
    if (!run) throw new RunRequestError('not_found', `no run ${JSON.stringify(runId)}`);
    return run;
  }

  list(scope: TenantScope, q: Omit<RunListQuery, 'tenant'> = {}): Promise<{ runs: RunStatusFile[]; total: number }> {
    const tenant = scope.listFilter;
    return this.service.list(tenant === undefined ? q : { ...q, tenant });
  }

  /** Creates the run in the scope's tenant (whatever `tenant_id` the body had: the caller refused it before). */
  create(scope: TenantScope, body: Record<string, unknown>, opts?: CreateRunOptions): Promise<RunStatusFile> {
    return this.service.create({ ...body, tenant_id: scope.tenantId }, opts);
  }

  async cancel(scope: TenantScope, runId: string): Promise<RunStatusFile> {
    await this.require(scope, runId);
    return this.service.cancel(runId);
  }

  async *events(scope: TenantScope, runId: string, opts?: { after?: number; signal?: AbortSignal }): AsyncIterable<AgentEvent> {
    await this.require(scope, runId);
    yield* this.service.events(runId, opts);
  }
}
