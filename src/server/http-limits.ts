/**
 * What one client on the network may hold of the server: how long it may take to send a request's
 * headers, how slowly it may send a body, how long an idle keep-alive connection stays, how many
 * connections the server keeps open at all and how many of them one address may hold. Without these a
 * few hundred sockets that trickle a byte now and then hold the server's connections (and file
 * descriptors) forever.
 *
 * Node's own checks cover the headers (`headersTimeout`, checked every second here rather than every
 * 30 s) and idle keep-alive; the body rule is a rate (a large upload on a slow link is fine, a trickle
 * is not), which Node has no setting for, so `SlowBodyGuard` measures it on the socket.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface HttpLimits {
  /** A request's headers must arrive within this (15 s). */
  headersTimeoutMs: number;
  /** A body may start as slowly as it likes for this long (30 s) … */
  bodyGraceMs: number;
  /** … after which it is cut when it has averaged fewer bytes a second than this since the request began (1 KiB/s). */
  bodyMinBytesPerSecond: number;
  /** An idle keep-alive connection is closed after this (5 s). */
  keepAliveTimeoutMs: number;
  /** Open connections at most (1,000); more are answered 503 and closed. */
  maxConnections: number;
  /** Open connections of one client address at most (64). */
  maxConnectionsPerClient: number;
  /** Live streams (SSE, WebSocket, chat) of one client address at most (64). */
  maxStreamsPerClient: number;
}

export const HTTP_LIMIT_DEFAULTS: HttpLimits = {
  headersTimeoutMs: 15_000,
  bodyGraceMs: 30_000,
  bodyMinBytesPerSecond: 1024,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1000,
  maxConnectionsPerClient: 64,
  maxStreamsPerClient: 64,
};

/** The settings as `config.json` names them (`"http": { … }`), in seconds where they are times. */
export interface HttpLimitsConfig {
  headers_timeout_s?: number;
  body_grace_s?: number;
  body_min_bytes_per_s?: number;
  keep_alive_s?: number;
  max_connections?: number;
  max_connections_per_client?: number;
  max_streams_per_client?: number;
}

export function httpLimitsFromConfig(c: HttpLimitsConfig | undefined): Partial<HttpLimits> {
  if (!c) return {};
  const ms = (s: number | undefined) => (s === undefined ? undefined : Math.round(s * 1000));
  const out: Partial<HttpLimits> = {
    headersTimeoutMs: ms(c.headers_timeout_s),
    bodyGraceMs: ms(c.body_grace_s),
    bodyMinBytesPerSecond: c.body_min_bytes_per_s,
    keepAliveTimeoutMs: ms(c.keep_alive_s),
    maxConnections: c.max_connections,
    maxConnectionsPerClient: c.max_connections_per_client,
    maxStreamsPerClient: c.max_streams_per_client,
  };
  for (const k of Object.keys(out) as Array<keyof HttpLimits>) if (out[k] === undefined) delete out[k];
  return out;
}

/** A client's address as one key: `::ffff:10.0.0.1` and `10.0.0.1` are the same client. */
export function clientKey(address: string | undefined): string {
  if (!address) return 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** A plain HTTP answer written on the socket of a request stuck in its body (no route can answer it). */
function rawAnswer(status: string, code: string, message: string): string {
  const body = JSON.stringify({ error: { code, message, details: {} } });
  return `HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** A refused connection that sends no request is closed after this. */
const REFUSED_LINGER_MS = 2_000;

/**
 * Caps open connections in all and per client address. Node's `maxConnections` would drop the extra
 * ones without a word; these are kept just long enough to answer their first request with a 503 that
 * says which limit they met (`refusal`, asked by the server's first hook, so no route runs and no body
 * is read), and are closed after it, or after two seconds without one.
 */
export class ConnectionCaps {
  private open = 0;
  private readonly byClient = new Map<string, number>();
  private readonly refused = new WeakMap<Socket, string>();

  constructor(
    server: Server,
    private readonly limits: Pick<HttpLimits, 'maxConnections' | 'maxConnectionsPerClient'>,
  ) {
    server.on('connection', (socket: Socket) => this.admit(socket));
  }

  /** Why the connection a request came on was refused, or null. */
  refusal(socket: Socket | undefined): string | null {
    return (socket && this.refused.get(socket)) ?? null;
  }

  private admit(socket: Socket): void {
    const key = clientKey(socket.remoteAddress);
    const mine = this.byClient.get(key) ?? 0;
    const why =
      this.open >= this.limits.maxConnections
        ? `the server already holds ${this.limits.maxConnections} connections; retry later`
        : mine >= this.limits.maxConnectionsPerClient
          ? `${key} already holds ${this.limits.maxConnectionsPerClient} connections to this server; close some or retry later`
          : null;
    if (why) {
      this.refused.set(socket, why);
      setTimeout(() => socket.destroy(), REFUSED_LINGER_MS).unref();
      return;
    }
    this.open++;
    this.byClient.set(key, mine + 1);
    socket.once('close', () => {
      this.open--;
      const n = (this.byClient.get(key) ?? 1) - 1;
      if (n > 0) this.byClient.set(key, n);
      else this.byClient.delete(key);
    });
  }
}

/** Whether a request announces a body (a length, or chunks). */
function hasBody(req: IncomingMessage): boolean {
  const len = req.headers['content-length'];
  return (len !== undefined && len !== '0') || req.headers['transfer-encoding'] !== undefined;
}

interface Watched {
  req: IncomingMessage;
  res: ServerResponse;
  socket: Socket;
  startedAt: number;
  startBytes: number;
  /** Takes the request off the watch and its listeners off the request and the socket. */
  leave(): void;
}

/**
 * Cuts request bodies that arrive slower than `bodyMinBytesPerSecond` once `bodyGraceMs` has passed,
 * measured on the socket (the body's bytes as they arrive, whether or not a handler has read them).
 * One timer checks every watched request once a second; a request leaves the watch when its body is
 * complete or its socket closes.
 */
export class SlowBodyGuard {
  private readonly watched = new Set<Watched>();
  private timer: NodeJS.Timeout | null = null;
  /** Bodies cut so far (for /metrics and tests). */
  cut = 0;

  constructor(
    private readonly limits: Pick<HttpLimits, 'bodyGraceMs' | 'bodyMinBytesPerSecond'>,
    private readonly now: () => number = Date.now,
  ) {}

  watch(req: IncomingMessage, res: ServerResponse): void {
    if (req.complete || !hasBody(req) || !req.socket) return;
    const socket = req.socket;
    // a kept-alive socket carries many requests: the close listener goes with the request it watches,
    // else every request with a body leaves one on the socket
    const leave = () => {
      this.watched.delete(w);
      req.off('end', leave);
      socket.off('close', leave);
    };
    const w: Watched = { req, res, socket, startedAt: this.now(), startBytes: socket.bytesRead, leave };
    this.watched.add(w);
    req.once('end', leave);
    socket.once('close', leave);
    this.timer ??= setInterval(() => this.check(), 1_000).unref();
  }

  private check(): void {
    const now = this.now();
    for (const w of this.watched) {
      if (w.req.complete || w.socket.destroyed) {
        w.leave();
        continue;
      }
      const elapsed = now - w.startedAt;
      if (elapsed < this.limits.bodyGraceMs) continue;
      const rate = (w.socket.bytesRead - w.startBytes) / (elapsed / 1000);
      if (rate >= this.limits.bodyMinBytesPerSecond) continue;
      w.leave();
      this.cut++;
      const message = `the request body arrived at ${Math.round(rate)} bytes/s, slower than ${this.limits.bodyMinBytesPerSecond} bytes/s after ${Math.round(this.limits.bodyGraceMs / 1000)} s`;
      w.socket.on('error', () => undefined);
      if (!w.res.headersSent) w.socket.end(rawAnswer('408 Request Timeout', 'request_too_slow', message));
      w.socket.destroySoon();
      setTimeout(() => w.socket.destroy(), 2_000).unref();
    }
    if (this.watched.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const w of this.watched) w.leave();
  }
}
