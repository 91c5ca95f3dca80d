import type { RunErrorCode, RunErrorDetails } from './run-service-types.js';

/** HTTP status of each run error code (the server maps errors with it). */
export const RUN_ERROR_HTTP_STATUS: Readonly<Record<RunErrorCode, number>> = {
  invalid_request: 400,
  input_outside_roots: 400,
  unknown_plugin: 404,
  not_found: 404,
  wrong_state: 409,
  incompatible: 422,
  queue_full: 429,
  service_unavailable: 503,
};

/** A request the runtime refuses; front doors map `status` to HTTP and `code` to a CLI exit. */
export class RunRequestError extends Error {
  readonly code: RunErrorCode;
  readonly status: number;
  readonly details: RunErrorDetails;

  constructor(code: RunErrorCode, message: string, details: RunErrorDetails = {}) {
    super(message);
    this.name = 'RunRequestError';
    this.code = code;
    this.status = RUN_ERROR_HTTP_STATUS[code];
    this.details = details;
  }

  toJSON(): { code: RunErrorCode; status: number; message: string; details: RunErrorDetails } {
    return { code: this.code, status: this.status, message: this.message, details: this.details };
  }
}

export function isRunRequestError(e: unknown): e is RunRequestError {
  return e instanceof RunRequestError;
}
