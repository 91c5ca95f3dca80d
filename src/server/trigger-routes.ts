/**
 * Schedules and completion webhooks over HTTP: `/api/schedules` (create, list, show, pause/resume/
 * change with PATCH, delete, run now) and a run's webhooks (`GET /api/runs/:id/webhooks`, its
 * attempts; `POST …/webhooks/redeliver`, the end message again).
 */
import type { FastifyInstance } from 'fastify';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { webhookRequestError, type TriggerHost } from '../triggers/trigger-host.js';
import { HttpError } from './http-error.js';
import { isRunId } from './run-id-param.js';
import { runLinks } from './run-routes.js';

export function registerTriggerRoutes(app: FastifyInstance, service: RunServiceApi, triggers: TriggerHost): void {
  app.post('/api/schedules', async (req, reply) => {
    const s = await triggers.create(req.body);
    return reply.code(201).send({ schedule_id: s.schedule_id, next_run_at: s.next_run_at, schedule: s });
  });
  app.get('/api/schedules', async () => ({ schedules: await triggers.list() }));
  app.get<{ Params: { id: string } }>('/api/schedules/:id', async (req) => triggers.get(req.params.id));
  app.patch<{ Params: { id: string } }>('/api/schedules/:id', async (req) => triggers.update(req.params.id, req.body ?? {}));
  app.delete<{ Params: { id: string } }>('/api/schedules/:id', async (req, reply) => {
    await triggers.remove(req.params.id);
    return reply.code(204).send();
  });
  app.post<{ Params: { id: string } }>('/api/schedules/:id/run', async (req, reply) => {
    const fire = await triggers.runNow(req.params.id);
    return reply.code(201).send({ schedule_id: req.params.id, fire_time: fire.fire_time, run_id: fire.run_id, links: runLinks(fire.run_id!) });
  });

  app.get<{ Params: { id: string } }>('/api/runs/:id/webhooks', async (req) => {
    const run = isRunId(req.params.id) ? await service.get(req.params.id) : null;
    if (!run) throw new HttpError(404, 'not_found', `no run ${JSON.stringify(req.params.id)}`);
    return { run_id: run.run_id, ...(await triggers.webhooks.view(run.run_id)) };
  });
  app.post<{ Params: { id: string } }>('/api/runs/:id/webhooks/redeliver', async (req, reply) => {
    const run = isRunId(req.params.id) ? await service.get(req.params.id) : null;
    if (!run) throw new HttpError(404, 'not_found', `no run ${JSON.stringify(req.params.id)}`);
    const again = await triggers.webhooks.redeliver(run.run_id).catch(webhookRequestError);
    return reply.code(202).send({ run_id: run.run_id, redelivered: again.map((m) => ({ webhook_id: m.webhook_id, type: m.type })) });
  });
}
