/**
 * How every JSON request body is read: by Fastify's own parser (its size limit, its refusal of
 * `__proto__` and `constructor.prototype`), then measured for depth before any route sees it. A body
 * nested deeper than MAX_INPUT_DEPTH is refused with a 400 naming where, so no route (runs, schedules,
 * chat, IM, approvals, messages) ever hands an unbounded nesting to code that recurses (JSON.stringify,
 * schema validation, masking) and answers 500 instead.
 */
import type { FastifyInstance } from 'fastify';
import { MAX_INPUT_DEPTH, tooDeepPath } from '../runtime/input-depth.js';
import { HttpError } from './http-error.js';

/** The 400 a body nested too deep gets: the path where it goes past the limit, in the message and details. */
export function tooDeepBody(path: string): HttpError {
  const where = path || '(body)';
  const message = `nested more than ${MAX_INPUT_DEPTH} levels deep; a request body may nest at most ${MAX_INPUT_DEPTH} levels`;
  return new HttpError(400, 'invalid_request', `invalid request body: ${where}: ${message}`, { issues: [{ path: where, message }] });
}

/** Replaces the server's `application/json` parser with Fastify's default followed by the depth check. */
export function boundJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    parse(req, body as string, (err: Error | null, value?: unknown) => {
      if (err) return done(err, undefined);
      const deep = tooDeepPath(value, MAX_INPUT_DEPTH);
      if (deep !== null) return done(tooDeepBody(deep), undefined);
      done(null, value);
    });
  });
}
