/** The run API: create, list, show, cancel, manifest, artifacts, plan and metrics of a run. */
import { refuseRunProcess } from './run-process-guard.js';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, sep } from 'node:path';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RUN_STATUSES, type RunStatus } from '../events/agent-event.js';
import type { CreateRunOptions, RunServiceApi, RunStatusFile, RunWebhook } from '../runtime/run-service-types.js';
import type { Agent } from '../runtime/agent.js';
import { RunFolder, type RunFile } from '../runtime/storage/run-folder.js';
import { HttpError, invalidBody } from './http-error.js';
import { intQuery, oneOfQuery, textQuery } from './query-params.js';
import { agentNamed, named, runBodyWithAgent } from './agent-field.js';
import { fileInputIssues } from './input-roots.js';
import { isRunId } from './run-id-param.js';
import { RunUsageReader } from './run-usage.js';
import type { TenantRuns } from '../tenants/tenant-runs.js';
import type { TenantScope } from '../tenants/tenant-scope.js';
import type { Tenancy } from './tenant-guard.js';

const STATUSES: readonly RunStatus[] = RUN_STATUSES;

const CONTENT_TYPES: Record<string, string> = {
  '.json': 'application/json; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.jsonl': 'application/x-ndjson; charset=utf-8',
  '.html': 'text/plain; charset=utf-8', // never rendered as a page of ours
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.svg': 'text/plain; charset=utf-8',
};

export function runLinks(runId: string): Record<string, string> {
  const base = `/api/runs/${encodeURIComponent(runId)}`;
  return {
    self: base,
    events: `${base}/events`,
    ws: `${base}/ws`,
    manifest: `${base}/manifest`,
    cancel: `${base}/cancel`,
    artifacts: `${base}/artifacts/`,
    plan: `${base}/plan`,
  };
}

export interface RunRouteOptions {
  dataDir: string;
  /** The service's agents now (they can change under `serve --watch`). */
  agents: () => Agent[];
  inputRoots: string[] | 'any';
  /** `script:<file>` reads a file of the server's disk; off over HTTP unless asked for. */
  allowScriptModel: boolean;
  /** Checks a request's `webhook` (throws a 400 naming the field); absent: this server sends none. */
  checkWebhook?: (raw: unknown) => RunWebhook;
}

function isScriptModel(model: unknown): boolean {
  if (typeof model === 'string') return /^\s*script\s*:/i.test(model) || model.trim().toLowerCase() === 'script';
  return Boolean(
    model &&
      typeof model === 'object' &&
      String((model as { provider?: unknown }).provider ?? '')
        .trim()
        .toLowerCase() === 'script',
  );
}

/** The run `id` of the caller's tenant, or 404 as for one that does not exist. */
async function requireTenantRun(runs: TenantRuns, scope: TenantScope, id: string): Promise<RunStatusFile> {
  const run = isRunId(id) ? await runs.get(scope, id) : null;
  if (!run) throw new HttpError(404, 'not_found', `no run ${JSON.stringify(id)}`);
  return run;
}

function readRuntimeJson(dataDir: string, runId: string, file: RunFile): Promise<unknown | null> {
  return new RunFolder(join(dataDir, 'runs'), runId).readJson(file);
}

/**
 * The real file behind an artifact path the service resolved (`<runs>/<run_id>/artifacts/…`), or null when
 * a symlink (the file, or a folder on the way) leads out of that run's artifacts/.
 */
export async function confinedArtifactFile(abs: string, runId: string): Promise<string | null> {
  const marker = `${sep}${runId}${sep}artifacts${sep}`;
  const i = abs.lastIndexOf(marker);
  if (i < 0) return null;
  try {
    const [root, file] = await Promise.all([realpath(abs.slice(0, i + marker.length - 1)), realpath(abs)]);
    const rel = relative(root, file);
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel) ? file : null;
  } catch {
    return null;
  }
}

/** The caller's W3C trace context: a `traceparent` header makes the run part of the caller's trace. */
export function traceparentOf(headers: Record<string, string | string[] | undefined>): { traceparent?: string } {
  const h = headers.traceparent;
  const v = Array.isArray(h) ? h[0] : h;
  return typeof v === 'string' && v ? { traceparent: v } : {};
}

/** What HTTP refuses before the service sees a request (a script model, file inputs outside the roots); then creates the run. */
export async function createRunOverHttp(
  service: Pick<RunServiceApi, 'create'>,
  body: unknown,
  opts: RunRouteOptions,
  front: CreateRunOptions,
): Promise<RunStatusFile> {
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw invalidBody([{ path: '(body)', message: 'must be a JSON object { agent, goal?, input, ... }' }]);
  }
  const { webhook: rawWebhook, ...b } = runBodyWithAgent(body as Record<string, unknown>);
  if (rawWebhook !== undefined && !opts.checkWebhook)
    throw invalidBody([{ path: 'webhook', message: 'this server sends no webhooks (start it with runtrail serve)' }]);
  const webhook = rawWebhook === undefined ? undefined : opts.checkWebhook!(rawWebhook);
  if (!opts.allowScriptModel && isScriptModel(b.model)) {
    throw invalidBody([{ path: 'model', message: 'the script model reads files on the server and is not allowed over HTTP; use the CLI' }]);
  }
  const plugin = opts.agents().find((p) => p.name === b.plugin);
  if (plugin) {
    const issues = fileInputIssues(b.input, plugin.fileInputs, opts.inputRoots);
    if (issues.length) throw new HttpError(400, 'input_outside_roots', `${issues[0].path}: ${issues[0].message}`, { issues });
  }
  // limits above the agent's own need the operator's consent (config.json request_limits)
  return service.create(b, { ...front, fromNetwork: true, ...(webhook ? { webhook } : {}) });
}

export function registerRunRoutes(app: FastifyInstance, service: RunServiceApi, tenancy: Tenancy, opts: RunRouteOptions): void {
  const usage = new RunUsageReader(opts.dataDir);
  const runs = tenancy.runs;
  const requireRun = (req: FastifyRequest, id: string) => requireTenantRun(runs, tenancy.scopeOf(req), id);
  app.post('/api/runs', async (req, reply) => {
    const scope = tenancy.scopeOf(req);
    const run = await createRunOverHttp({ create: (b, o) => runs.create(scope, b as Record<string, unknown>, o) }, req.body, opts, {
      claw: 'web',
      ...traceparentOf(req.headers),
    });
    return reply.code(201).send({ run_id: run.run_id, status: run.status, trace_id: run.trace_id, links: runLinks(run.run_id) });
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/api/runs', async (req) => {
    const q = req.query ?? {};
    const status = oneOfQuery(q.status, 'status', STATUSES);
    const limit = intQuery(q.limit, 'limit', 1, 500) ?? 50;
    const offset = intQuery(q.offset, 'offset', 0, 1e9) ?? 0;
    const { runs: page, total } = await runs.list(tenancy.scopeOf(req), {
      status,
      plugin: agentNamed(named(textQuery(q.agent, 'agent', 100), '?agent='), named(textQuery(q.plugin, 'plugin', 100), '?plugin=')) ?? undefined,
      model: textQuery(q.model, 'model', 200),
      goal: textQuery(q.q, 'q', 200),
      conversation: textQuery(q.conversation, 'conversation', 200),
      limit,
      offset,
    });
    // each run with its duration, tokens and cost (the list's columns)
    const withUsage = await Promise.all(page.map(async (r) => ({ ...r, usage: await usage.of(r) })));
    return { runs: withUsage, total, limit, offset };
  });

  app.get<{ Params: { id: string } }>('/api/runs/:id', async (req) => requireRun(req, req.params.id));

  app.post<{ Params: { id: string } }>('/api/runs/:id/cancel', async (req) => {
    refuseRunProcess(req, 'a cancel');
    return runs.cancel(tenancy.scopeOf(req), req.params.id);
  });

  app.get<{ Params: { id: string } }>('/api/runs/:id/manifest', async (req) => {
    await requireRun(req, req.params.id);
    const m = await service.manifest(req.params.id);
    if (m === null || m === undefined) throw new HttpError(404, 'not_found', `run ${req.params.id} has no manifest yet`);
    return m;
  });

  // The todo checklist and metrics: the wire carries neither, the web page polls these.
  app.get<{ Params: { id: string } }>('/api/runs/:id/plan', async (req) => {
    const run = await requireRun(req, req.params.id);
    const todo = await readRuntimeJson(opts.dataDir, run.run_id, 'todoState');
    const plan = await readRuntimeJson(opts.dataDir, run.run_id, 'agentPlan');
    return { run_id: run.run_id, todo, plan };
  });
  // the run's resolved settings (capabilities, model and its catalog facts, reasoning, limits, capture): never a key
  app.get<{ Params: { id: string } }>('/api/runs/:id/config', async (req) => {
    const run = await requireRun(req, req.params.id);
    return { run_id: run.run_id, config: await readRuntimeJson(opts.dataDir, run.run_id, 'resolvedConfig') };
  });
  app.get<{ Params: { id: string } }>('/api/runs/:id/metrics', async (req) => {
    const run = await requireRun(req, req.params.id);
    return { run_id: run.run_id, metrics: await readRuntimeJson(opts.dataDir, run.run_id, 'metrics') };
  });

  app.get<{ Params: { id: string; '*': string }; Querystring: { download?: string } }>('/api/runs/:id/artifacts/*', async (req, reply) => {
    const run = await requireRun(req, req.params.id);
    const rel = req.params['*'] ?? '';
    if (!rel || rel.includes('\0') || rel.startsWith('/') || rel.split(/[\\/]/).includes('..')) {
      throw new HttpError(404, 'not_found', `no artifact ${JSON.stringify(rel)} in run ${run.run_id}`);
    }
    // Only documents the manifest lists; the service resolves and confines the path.
    const listed = (await service.documentPath(run.run_id, `artifacts/${rel}`)) ?? (await service.documentPath(run.run_id, rel));
    if (!listed) throw new HttpError(404, 'not_found', `no artifact ${JSON.stringify(rel)} in run ${run.run_id}'s manifest`);
    // symlinks are followed before the check: a link in artifacts/ must not serve a file from elsewhere
    const abs = await confinedArtifactFile(listed, run.run_id);
    if (!abs) throw new HttpError(404, 'not_found', `artifact ${JSON.stringify(rel)} is missing or outside the run's artifacts`);
    const st = await stat(abs).catch(() => null);
    if (!st?.isFile()) throw new HttpError(404, 'not_found', `artifact ${JSON.stringify(rel)} is listed but missing`);
    const name = rel.split('/').pop() ?? 'artifact';
    reply.header('content-type', CONTENT_TYPES[extname(name).toLowerCase()] ?? 'application/octet-stream');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('content-length', String(st.size));
    if (req.query?.download !== undefined) reply.header('content-disposition', `attachment; filename="${name.replace(/[^A-Za-z0-9._-]/g, '_')}"`);
    return reply.send(createReadStream(abs));
  });
}
