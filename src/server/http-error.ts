/** JSON errors of the HTTP API: `{ error: { code, message, details } }` with the status the issue names. */
import type { FastifyReply } from 'fastify';
import { RUN_ERROR_HTTP_STATUS } from '../runtime/run-request-error.js';

export interface HttpErrorBody {
  error: { code: string; message: string; details: Record<string, unknown> };
}

export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown>;

  constructor(status: number, code: string, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

export function errorBody(code: string, message: string, details: Record<string, unknown> = {}): HttpErrorBody {
  return { error: { code, message, details } };
}

const RUN_ERROR_STATUS: Readonly<Record<string, number>> = RUN_ERROR_HTTP_STATUS; // one table, owned by the runtime

/** Maps what the runtime throws (RunRequestError, duck-typed so the server needs no runtime class) and
 *  what Fastify throws (bad JSON, body too large) to one status + body. Anything else is a 500. */
export function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const e = (err && typeof err === 'object' ? err : {}) as Record<string, unknown>;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : String(err);
  if (code in RUN_ERROR_STATUS) {
    const details = e.details && typeof e.details === 'object' ? (e.details as Record<string, unknown>) : {};
    const status = typeof e.status === 'number' ? e.status : RUN_ERROR_STATUS[code];
    return new HttpError(status, code, message, details);
  }
  const statusCode = typeof e.statusCode === 'number' ? e.statusCode : 500;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE' || statusCode === 413) {
    return new HttpError(413, 'body_too_large', 'request body is larger than the limit (1 MB)', {});
  }
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new HttpError(415, 'unsupported_media_type', message);
  if (code.startsWith('FST_ERR_CTP') || code === 'FST_ERR_VALIDATION' || (statusCode >= 400 && statusCode < 500)) {
    return new HttpError(statusCode >= 400 && statusCode < 500 ? statusCode : 400, 'invalid_request', message);
  }
  return new HttpError(500, 'internal', 'internal server error');
}

export function sendError(reply: FastifyReply, err: unknown): FastifyReply {
  const h = toHttpError(err);
  // a service the node depends on is away (several nodes): the client is told when to try again
  if (h.status === 503 && typeof h.details.retry_after_s === 'number') reply.header('retry-after', String(h.details.retry_after_s));
  return reply
    .code(h.status)
    .type('application/json; charset=utf-8')
    .send(errorBody(h.code, h.message, h.details));
}

/** zod issues → `details.issues` with dotted field paths, the shape RunRequestError uses too. */
export function issuesFromZod(
  issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>,
  prefix = '',
): Array<{ path: string; message: string }> {
  return issues.map((i) => ({
    path: [prefix, ...i.path.map((p) => String(p))].filter(Boolean).join('.') || '(body)',
    message: i.message,
  }));
}

export function invalidBody(issues: Array<{ path: string; message: string }>): HttpError {
  const named = issues.map((i) => `${i.path}: ${i.message}`).join('; ');
  return new HttpError(400, 'invalid_request', `invalid request body: ${named}`, { issues });
}
