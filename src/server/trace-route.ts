/** GET /api/runs/:id/trace — the run's spans as the page's waterfall draws them (live while it runs). */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { parseEventLines } from '../runtime/storage/event-store.js';
import { RunFolder } from '../runtime/storage/run-folder.js';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { runTraceView } from '../telemetry/run-trace-view.js';
import { HttpError } from './http-error.js';
import { isRunId } from './run-id-param.js';

export function registerTraceRoute(app: FastifyInstance, service: RunServiceApi, opts: { dataDir: string }): void {
  app.get<{ Params: { id: string } }>('/api/runs/:id/trace', async (req) => {
    const id = req.params.id;
    const run = isRunId(id) ? await service.get(id) : null;
    if (!run) throw new HttpError(404, 'not_found', `no run ${JSON.stringify(id)}`);
    // events.jsonl is written as each event is published, so a live run reads up to its latest event
    const text = await readFile(new RunFolder(join(opts.dataDir, 'runs'), run.run_id).path('events'), 'utf8').catch(() => '');
    return runTraceView(parseEventLines(text), { runId: run.run_id, traceId: run.trace_id || run.run_id });
  });
}
