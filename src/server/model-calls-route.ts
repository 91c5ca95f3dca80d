/**
 * GET /api/runs/:id/model-calls — what each model call of a run was sent and answered (paged, oldest
 * first; `?turn=` one loop turn's attempts, `?call=` one call), and
 * GET /api/runs/:id/model-calls/files/:name — an image or file a call carried, from the run folder.
 */
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { MODEL_CALL_FILES_DIR, readModelCalls } from '../runtime/model-calls/model-call-record.js';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { HttpError } from './http-error.js';
import { intQuery } from './query-params.js';
import { isRunId } from './run-id-param.js';

const FILE_NAME = /^[0-9a-f]{32}\.(png|jpg|gif|webp|pdf|txt|bin)$/;
const FILE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  pdf: 'application/pdf',
  txt: 'text/plain; charset=utf-8',
  bin: 'application/octet-stream',
};

export function registerModelCallsRoute(app: FastifyInstance, service: RunServiceApi, opts: { dataDir: string }): void {
  const runOf = async (id: string) => {
    const run = isRunId(id) ? await service.get(id) : null;
    if (!run) throw new HttpError(404, 'not_found', `no run ${JSON.stringify(id)}`);
    return run;
  };

  app.get<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>('/api/runs/:id/model-calls', async (req) => {
    const q = req.query ?? {};
    const query = {
      offset: intQuery(q.offset, 'offset', 0, 1e9) ?? 0,
      limit: intQuery(q.limit, 'limit', 1, 200) ?? 20,
      turn: intQuery(q.turn, 'turn', 1, 1e9),
      call: intQuery(q.call, 'call', 1, 1e9),
    };
    const run = await runOf(req.params.id);
    return readModelCalls(run.run_id, join(opts.dataDir, 'runs', run.run_id), query);
  });

  app.get<{ Params: { id: string; name: string } }>('/api/runs/:id/model-calls/files/:name', async (req, reply) => {
    const run = await runOf(req.params.id);
    const name = req.params.name;
    if (!FILE_NAME.test(name)) throw new HttpError(404, 'not_found', `no model-call file ${JSON.stringify(name).slice(0, 80)} in run ${run.run_id}`);
    const runRoot = join(opts.dataDir, 'runs', run.run_id);
    // a link (the file or its folder) must not serve a file from elsewhere
    const abs = await realpath(join(runRoot, MODEL_CALL_FILES_DIR, name)).catch(() => null);
    const inside =
      abs !== null &&
      dirname(abs) === (await realpath(join(runRoot, MODEL_CALL_FILES_DIR)).catch(() => null)) &&
      dirname(dirname(abs)) === join(await realpath(runRoot), 'runtime');
    const st = inside ? await stat(abs).catch(() => null) : null;
    if (!abs || !st?.isFile()) throw new HttpError(404, 'not_found', `no model-call file ${name} in run ${run.run_id}`);
    reply.header('content-type', FILE_TYPES[name.split('.').pop() ?? 'bin'] ?? 'application/octet-stream');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('content-length', String(st.size));
    return reply.send(createReadStream(abs));
  });
}
