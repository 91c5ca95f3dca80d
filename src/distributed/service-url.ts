/** Service URLs as they may be shown (no password), and the error a node gives when one is unreachable. */
import type { RunErrorDetails } from '../runtime/run-service-types.js';

export function redactServiceUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
}

export type ServiceName = 'PostgreSQL' | 'Redis';

/**
 * Redis or PostgreSQL cannot be reached: at start a node exits 2 with it; later the API answers 503
 * with Retry-After (the code and status are those of the run errors, so every front door maps it).
 */
export class ServiceUnavailableError extends Error {
  readonly code = 'service_unavailable' as const;
  readonly status = 503;
  readonly details: RunErrorDetails;

  constructor(
    readonly service: ServiceName,
    /** Already redacted. */
    readonly url: string,
    readonly reason: string,
  ) {
    super(`${service} at ${url} is unreachable: ${reason}`);
    this.name = 'ServiceUnavailableError';
    this.details = { service, url, retry_after_s: 5 };
  }
}
