/** GET /api/runs/:id/events — resumable SSE; a leaving client never cancels the run. */
import type { FastifyInstance } from 'fastify';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { HttpError, sendError } from './http-error.js';
import { parseAfter, runFrames } from './run-frames.js';
import { slowClientFrame } from './slow-client-frame.js';
import type { StreamCounters } from './stream-counters.js';
import { isRunId } from './run-id-param.js';

export interface StreamOptions {
  /** ms between `: ping` comments (15 s). */
  pingMs: number;
  /** bytes a client may have waiting before it is dropped. */
  maxQueueBytes: number;
}

export function registerSseRoute(app: FastifyInstance, service: RunServiceApi, counters: StreamCounters, opts: StreamOptions): void {
  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>('/api/runs/:id/events', async (req, reply) => {
    const runId = req.params.id;
    const headerAfter = req.headers['last-event-id'];
    const raw = headerAfter !== undefined && headerAfter !== '' ? headerAfter : req.query?.after;
    const after = parseAfter(Array.isArray(raw) ? raw[0] : raw);
    if (typeof after === 'string') {
      return sendError(reply, new HttpError(400, 'invalid_request', `Last-Event-ID / after ${after}`, { issues: [{ path: 'after', message: after }] }));
    }
    if (!isRunId(runId) || !(await service.get(runId))) return sendError(reply, new HttpError(404, 'not_found', `no run ${JSON.stringify(runId)}`));

    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write('retry: 2000\n\n');
    counters.sseClients++;

    const abort = new AbortController();
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearInterval(ping);
      counters.sseClients--;
      abort.abort();
      if (!res.writableEnded) res.end();
    };
    const ping = setInterval(() => {
      if (!res.writableEnded) res.write(': ping\n\n');
    }, opts.pingMs);
    ping.unref?.();
    res.on('close', finish);

    try {
      for await (const frame of runFrames(service, runId, { after, signal: abort.signal })) {
        if (finished) break;
        // The socket's own buffer is the per-client queue: past the bound the client is dropped, so a
        // stalled reader costs at most maxQueueBytes and never slows the run or other clients.
        if (res.writableLength > opts.maxQueueBytes) {
          counters.clientsDropped++;
          res.write(slowClientFrame(runId, opts.maxQueueBytes));
          finish();
          res.destroy();
          break;
        }
        res.write(frame.text);
        counters.framesSent++;
      }
    } catch (err) {
      req.log.warn({ err, runId }, 'sse stream ended by error');
    } finally {
      finish();
    }
  });
}
