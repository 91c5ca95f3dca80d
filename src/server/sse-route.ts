/** GET /api/runs/:id/events — resumable SSE; a leaving client never cancels the run. */
import type { FastifyInstance } from 'fastify';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { HttpError, sendError } from './http-error.js';
import { parseAfter } from './run-frames.js';
import type { RunFrameHubs } from './run-frame-hub.js';
import { SseFrameWriter } from './sse-frame-writer.js';
import { slowClientFrame } from './slow-client-frame.js';
import { clientKey } from './http-limits.js';
import { takeClientSlot, type StreamCounters } from './stream-counters.js';
import { isRunId } from './run-id-param.js';

export interface StreamOptions {
  /** ms between `: ping` comments (15 s). */
  pingMs: number;
  /** bytes a client may have waiting before it must catch up. */
  maxQueueBytes: number;
  /** how long a client over its queue bound may go without reading before it is dropped. */
  slowClientMs: number;
  /** SSE and WebSocket clients at once; more are refused with 503 (each may hold maxQueueBytes). */
  maxClients: number;
  /** Streams of one client address at once: one client cannot take every slot. */
  maxPerClient: number;
}

/** The 503 a stream client gets when the server already has `maxClients` of them, or its address `maxPerClient`. */
export function tooManyClients(counters: StreamCounters, opts: Pick<StreamOptions, 'maxClients' | 'maxPerClient'>, client: string): HttpError | null {
  if (counters.sseClients + counters.wsClients >= opts.maxClients) {
    return new HttpError(503, 'too_many_clients', `the server already streams to ${opts.maxClients} clients; retry later`);
  }
  if ((counters.byClient.get(client) ?? 0) >= opts.maxPerClient) {
    return new HttpError(503, 'too_many_streams', `${client} already has ${opts.maxPerClient} live streams open on this server; close one or retry later`, {
      limit: opts.maxPerClient,
    });
  }
  return null;
}

export function registerSseRoute(app: FastifyInstance, service: RunServiceApi, hubs: RunFrameHubs, counters: StreamCounters, opts: StreamOptions): void {
  // no HEAD twin: a HEAD on a live stream would hold the connection for nothing
  app.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>('/api/runs/:id/events', { exposeHeadRoute: false }, async (req, reply) => {
    const runId = req.params.id;
    const headerAfter = req.headers['last-event-id'];
    const raw = headerAfter !== undefined && headerAfter !== '' ? headerAfter : req.query?.after;
    const after = parseAfter(Array.isArray(raw) ? raw[0] : raw);
    if (typeof after === 'string') {
      return sendError(reply, new HttpError(400, 'invalid_request', `Last-Event-ID / after ${after}`, { issues: [{ path: 'after', message: after }] }));
    }
    if (!isRunId(runId) || !(await service.get(runId))) return sendError(reply, new HttpError(404, 'not_found', `no run ${JSON.stringify(runId)}`));
    const client = clientKey(req.ip);
    const busy = tooManyClients(counters, opts, client);
    if (busy) return sendError(reply.header('retry-after', '5'), busy);

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
    const releaseSlot = takeClientSlot(counters, client);
    const out = new SseFrameWriter(res);

    const abort = new AbortController();
    let finished = false;
    const finish = (): void => {
      if (finished) return;
      finished = true;
      clearInterval(ping);
      counters.sseClients--;
      releaseSlot();
      abort.abort();
      out.flush();
      if (!res.writableEnded) res.end();
    };
    const ping = setInterval(() => {
      if (!res.writableEnded) out.write(': ping\n\n');
    }, opts.pingMs);
    ping.unref?.();
    res.on('close', finish);

    try {
      for await (const frame of hubs.frames(runId, { after, signal: abort.signal })) {
        if (finished) break;
        out.write(frame.text);
        counters.framesSent++;
        // The socket's own buffer is the per-client queue. Past the bound we wait for it to drain while the
        // client reads; one that reads nothing for slowClientMs is dropped, so a stalled reader costs at
        // most about maxQueueBytes (plus the frame that crossed it) and never slows the run or other clients.
        if (out.queuedBytes > opts.maxQueueBytes && !(await out.drain(opts.slowClientMs))) {
          if (finished) break;
          counters.clientsDropped++;
          out.write(slowClientFrame(runId, opts.maxQueueBytes));
          finish();
          // end() lets the queued frames and the error frame drain; a reader that never reads is cut off.
          setTimeout(() => res.destroy(), 10_000).unref();
          break;
        }
      }
    } catch (err) {
      req.log.warn({ err, runId }, 'sse stream ended by error');
    } finally {
      finish();
    }
  });
}
