/** Service URLs as they may be shown (no password), and the error a node exits with when one is unreachable. */

export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@');
  }
}

export class ServiceUnavailableError extends Error {
  constructor(
    readonly service: 'PostgreSQL' | 'Redis',
    readonly url: string,
    readonly reason: string,
  ) {
    super(`${service} at ${url} is unreachable: ${reason}`);
    this.name = 'ServiceUnavailableError';
  }
}
