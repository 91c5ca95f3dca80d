/**
 * A person in the loop over HTTP: decide a waiting tool call, send a live run a
 * message. `by` is `web` when the run page sends it (`x-runtrail-client: web`), else `api`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DecisionSource } from '../events/agent-event.js';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { HttpError, invalidBody } from './http-error.js';
import { isRunId } from './run-id-param.js';
import { refuseRunProcess } from './run-process-guard.js';

function sourceOf(req: FastifyRequest): DecisionSource {
  return req.headers['x-runtrail-client'] === 'web' ? 'web' : 'api';
}

function bodyOf(req: FastifyRequest): Record<string, unknown> {
  const b = req.body;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw invalidBody([{ path: '(body)', message: 'must be a JSON object' }]);
  return b as Record<string, unknown>;
}

function runIdOf(id: string): string {
  if (!isRunId(id)) throw new HttpError(404, 'not_found', `no run ${JSON.stringify(id)}`);
  return id;
}

export function registerInteractionRoutes(app: FastifyInstance, service: RunServiceApi): void {
  app.get<{ Params: { id: string } }>('/api/runs/:id/approvals', async (req) => {
    const id = runIdOf(req.params.id);
    if (!(await service.get(id))) throw new HttpError(404, 'not_found', `no run ${JSON.stringify(id)}`);
    return { approvals: service.pendingApprovals?.(id) ?? [] };
  });

  app.post<{ Params: { id: string; approval: string } }>('/api/runs/:id/approvals/:approval', async (req) => {
    refuseRunProcess(req, 'an approval decision');
    const b = bodyOf(req);
    if (!service.decideApproval) throw new HttpError(501, 'not_supported', 'this service takes no approvals');
    const approval = await service.decideApproval(runIdOf(req.params.id), req.params.approval, { decision: b.decision, reason: b.reason, by: sourceOf(req) });
    return { approval };
  });

  app.post<{ Params: { id: string } }>('/api/runs/:id/messages', async (req, reply) => {
    refuseRunProcess(req, 'a message to a run');
    const b = bodyOf(req);
    if (!service.sendMessage) throw new HttpError(501, 'not_supported', 'this service takes no messages');
    const sent = await service.sendMessage(runIdOf(req.params.id), { text: b.text, mode: b.mode, from: sourceOf(req) });
    return reply.code(202).send(sent);
  });
}
