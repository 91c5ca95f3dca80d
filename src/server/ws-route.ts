/**
 * GET /api/runs/:id/ws — the SSE frames as WebSocket messages `{"id":<seq>,"data":<wire>}` (data is the very
 * JSON of the SSE `data:` line). Resume: connect with `?after=N`, or send `{ "after": N }` as the first
 * message (the stream starts after that message, or from the start when none comes within `helloMs`).
 * A later `{ "after": N }` restarts the stream after N.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { frameData, parseAfter } from './run-frames.js';
import type { RunFrameHubs } from './run-frame-hub.js';
import { HttpError, sendError } from './http-error.js';
import { slowClientFrame } from './slow-client-frame.js';
import { clientKey } from './http-limits.js';
import { takeClientSlot, type StreamCounters } from './stream-counters.js';
import { tooManyClients, type StreamOptions } from './sse-route.js';
import { isRunId } from './run-id-param.js';
import { caughtUp } from './ws-caught-up.js';

export interface WsOptions extends StreamOptions {
  helloMs: number;
  /** Whether the caller may see run `runId` (its tenant's); absent: any run the service has. */
  runVisible?: (req: FastifyRequest, runId: string) => Promise<boolean>;
}

function messageOf(frameText: string, seq: number | null): string {
  return `{"id":${seq === null ? 'null' : seq},"data":${frameData(frameText)}}`;
}

export function registerWsRoute(app: FastifyInstance, service: RunServiceApi, hubs: RunFrameHubs, counters: StreamCounters, opts: WsOptions): void {
  app.route<{ Params: { id: string }; Querystring: Record<string, unknown> }>({
    method: 'GET',
    url: '/api/runs/:id/ws',
    // refused before the upgrade, as a plain HTTP answer
    preHandler: async (req, reply) => {
      const busy = tooManyClients(counters, opts, clientKey(req.ip));
      if (busy) return sendError(reply.header('retry-after', '5'), busy);
    },
    // a plain GET (no Upgrade) gets a JSON answer instead of an empty 404
    handler: (_req, reply) => sendError(reply, new HttpError(426, 'upgrade_required', 'this endpoint speaks WebSocket: connect with Upgrade: websocket')),
    wsHandler: (socket: WebSocket, req) => {
      const runId = req.params.id;
      counters.wsClients++;
      const releaseSlot = takeClientSlot(counters, clientKey(req.ip));
      /** The one stream this socket has: its abort switch and the promise that settles when it has ended. */
      let current: { abort: AbortController; done: Promise<void> } | null = null;
      /** The latest `after` asked for while the stream is being switched; null when none is waiting. */
      let wanted: number | null = null;
      let switching = false;
      let closed = false;
      let hello: NodeJS.Timeout | null = null;

      const sendErrorMessage = (code: string, message: string): void => {
        socket.send(JSON.stringify({ id: null, error: { code, message } }));
      };

      const stream = (after: number, abort: AbortController): Promise<void> =>
        (async () => {
          try {
            if (!isRunId(runId) || !(await (opts.runVisible ? opts.runVisible(req, runId) : service.get(runId)))) {
              sendErrorMessage('not_found', `no run ${JSON.stringify(runId)}`);
              socket.close(4404, 'not found');
              return;
            }
            for await (const frame of hubs.frames(runId, { after, signal: abort.signal })) {
              if (closed || abort.signal.aborted) return;
              socket.send(messageOf(frame.text, frame.seq));
              counters.framesSent++;
              // past the bound, wait while the client reads; one that reads nothing for slowClientMs is dropped,
              // so a stalled reader costs about maxQueueBytes (plus the frame that crossed it), never the run
              if (socket.bufferedAmount > opts.maxQueueBytes && !(await caughtUp(socket, opts.maxQueueBytes, opts.slowClientMs))) {
                if (closed) return;
                counters.clientsDropped++;
                socket.send(messageOf(slowClientFrame(runId, opts.maxQueueBytes), null));
                socket.close(1013, 'client too slow');
                return;
              }
            }
            if (!abort.signal.aborted && !closed) socket.close(1000, 'run finished');
          } catch (err) {
            req.log.warn({ err, runId }, 'ws stream ended by error');
            if (!closed) socket.close(1011, 'stream error');
          }
        })();

      // Every stream reads the run's history from disk. A new one starts only once the one before it has
      // ended, with the latest `after` asked for meanwhile: a burst of { after } messages costs one re-read,
      // not one concurrent re-read per message.
      const start = (after: number): void => {
        wanted = after;
        if (switching) return;
        switching = true;
        void (async () => {
          try {
            while (wanted !== null && !closed) {
              if (current) {
                current.abort.abort();
                await current.done;
              }
              const next = wanted;
              wanted = null;
              if (closed || next === null) break;
              const abort = new AbortController();
              current = { abort, done: stream(next, abort) };
            }
          } finally {
            switching = false;
          }
        })();
      };

      socket.on('message', (data) => {
        let after: number | string = 'must be a JSON object { "after": N }';
        try {
          const msg: unknown = JSON.parse(String(data));
          if (msg && typeof msg === 'object' && !Array.isArray(msg)) after = parseAfter((msg as Record<string, unknown>).after);
        } catch {
          /* keeps the message above */
        }
        if (typeof after === 'string') {
          sendErrorMessage('invalid_request', `after ${after}`);
          return;
        }
        if (hello) clearTimeout(hello);
        hello = null;
        start(after);
      });
      socket.on('close', () => {
        closed = true;
        counters.wsClients--;
        releaseSlot();
        if (hello) clearTimeout(hello);
        current?.abort.abort();
      });

      const q = req.query?.after;
      if (q !== undefined) {
        const after = parseAfter(q);
        if (typeof after === 'string') {
          sendErrorMessage('invalid_request', `after ${after}`);
          socket.close(4400, 'bad after');
          return;
        }
        start(after);
      } else {
        hello = setTimeout(() => {
          hello = null;
          start(0);
        }, opts.helloMs);
      }
    },
  });
}
