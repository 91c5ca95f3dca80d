/**
 * The filtering proxy of a sandbox whose policy opens named hosts. A sandbox has no network of its
 * own; this HTTP proxy (CONNECT for TLS, absolute-form requests for plain HTTP) listens on a unix
 * socket that is bound into the sandbox, where a tiny bridge relays a loopback port to it and
 * HTTP(S)_PROXY point at that port. The proxy lets through only hosts on the allowlist, resolves each
 * name itself and refuses it when any of its addresses is loopback, link-local, private or otherwise
 * not public — so an allowed name that points at 127.0.0.1 (or the server, or the cloud's metadata
 * address) is refused — and connects to the address it checked (no second lookup to rebind).
 */
import { lookup } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { classifyAddress, isPublicAddress, literalAddress } from '../events/address-class.js';
import { PROXY_REFUSAL_PREFIX } from './sandbox-denial.js';

export interface ProxyDenial {
  host: string;
  port: number;
  reason: string;
}

export interface FilteringProxyOptions {
  /** `host` (ports 80 and 443) or `host:port`. */
  allow: string[];
  onDenied?: (d: ProxyDenial) => void;
  /** Which resolved addresses may be reached; default: public unicast only. Tests widen it to reach a local server. */
  addressAllowed?: (address: string) => boolean;
}

/** A host as the allowlist compares it: an address in its canonical spelling, a name in lower case without a trailing dot. */
function hostKey(host: string): string {
  return literalAddress(host) ?? host.toLowerCase().replace(/\.$/, '');
}

/** An allowlist entry: `host`, `host:port`, `[v6]` or `[v6]:port`. */
function parseEntry(entry: string): { host: string; port: number | null } {
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry) ?? /^([^:]+)(?::(\d+))?$/.exec(entry);
  return m ? { host: hostKey(m[1]), port: m[2] === undefined ? null : Number(m[2]) } : { host: hostKey(entry), port: null };
}

function allowedPort(allow: string[], host: string, port: number): boolean {
  const h = hostKey(host);
  return allow.some((entry) => {
    const e = parseEntry(entry);
    if (e.host !== h) return false;
    return e.port === null ? port === 443 || port === 80 : e.port === port;
  });
}

export class FilteringProxy {
  readonly socketPath: string;
  private readonly dir: string;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly opts: FilteringProxyOptions) {
    // a folder of its own, owner-only: nobody else on the machine can use this proxy
    this.dir = mkdtempSync(join(tmpdir(), 'runtrail-proxy-'));
    this.socketPath = join(this.dir, 'proxy.sock');
    this.server = createServer((req, res) => void this.forward(req, res));
    this.server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => void this.tunnel(req, client, head));
    this.server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
  }

  static async start(opts: FilteringProxyOptions): Promise<FilteringProxy> {
    const proxy = new FilteringProxy(opts);
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(proxy.socketPath, () => resolve());
    });
    return proxy;
  }

  /** The address to connect to, or why not. */
  async check(host: string, port: number): Promise<{ ok: true; address: string } | { ok: false; reason: string }> {
    if (!allowedPort(this.opts.allow, host, port)) return { ok: false, reason: `${host}:${port} is not on the allowlist` };
    // an address in any spelling (`0x7f.1`, `[::127.0.0.1]`) is read as the address it is, never handed to DNS
    const literal = literalAddress(host);
    let addresses: string[];
    try {
      addresses = literal !== null ? [literal] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
    } catch (e) {
      return { ok: false, reason: `${host} does not resolve (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
    }
    const allowed = this.opts.addressAllowed ?? isPublicAddress;
    const bad = addresses.find((a) => !allowed(a));
    if (bad !== undefined) return { ok: false, reason: `${host} resolves to ${bad}, ${classifyAddress(bad).words}, not a public address` };
    if (addresses.length === 0) return { ok: false, reason: `${host} resolves to nothing` };
    return { ok: true, address: addresses[0] };
  }

  private deny(host: string, port: number, reason: string): string {
    this.opts.onDenied?.({ host, port, reason });
    return `${PROXY_REFUSAL_PREFIX} a connection to ${host}:${port}: ${reason}\n`;
  }

  private async tunnel(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => client.destroy());
    const m = /^\[?([^\]]+?)\]?:(\d+)$/.exec(req.url ?? '');
    if (!m) {
      client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
      return;
    }
    const host = m[1];
    const port = Number(m[2]);
    const verdict = await this.check(host, port);
    if (!verdict.ok) {
      const body = this.deny(host, port, verdict.reason);
      client.end(`HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      return;
    }
    const upstream = connect(port, verdict.address, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => {
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
    });
    client.on('close', () => upstream.destroy());
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute URL expected\n');
      return;
    }
    if (url.protocol !== 'http:') {
      res.writeHead(400).end('only http:// is forwarded; use CONNECT for https\n');
      return;
    }
    const port = Number(url.port || 80);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const verdict = await this.check(host, port);
    if (!verdict.ok) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end(this.deny(host, port, verdict.reason));
      return;
    }
    const headers = { ...req.headers };
    delete headers['proxy-connection'];
    delete headers['proxy-authorization'];
    const up = httpRequest({ host: verdict.address, port, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => {
      if (!res.headersSent) res.writeHead(502).end();
      else res.destroy();
    });
    req.pipe(up);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Where the proxy appears inside the sandbox, and the port the bridge listens on there. */
export const PROXY_SOCKET_INSIDE = '/run/runtrail-proxy.sock';
export const PROXY_PORT_INSIDE = 3128;

/**
 * The bridge run inside the sandbox before the command (`node -e`): listens on the loopback port of
 * the sandbox's own network namespace, relays each connection to the proxy's socket, then starts the
 * command, hands on the signals it gets and exits as the command did.
 */
export const PROXY_BRIDGE_SOURCE = `
const net = require('net');
const { spawn } = require('child_process');
const [sock, port, file, ...args] = process.argv.slice(1);
const server = net.createServer((c) => {
  const u = net.connect(sock);
  c.on('error', () => u.destroy());
  u.on('error', () => c.destroy());
  c.pipe(u).pipe(c);
});
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(file, args, { stdio: 'inherit' });
  for (const s of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(s, () => child.kill(s));
  child.on('error', (e) => { process.stderr.write('bwrap: execvp ' + file + ': ' + e.message + '\\n'); process.exit(1); });
  child.on('exit', (code, sig) => process.exit(code ?? 128 + (require('os').constants.signals[sig] || 0)));
});
`;

export function proxyEnv(): Record<string, string> {
  const url = `http://127.0.0.1:${PROXY_PORT_INSIDE}`;
  return { HTTP_PROXY: url, HTTPS_PROXY: url, http_proxy: url, https_proxy: url, ALL_PROXY: url, all_proxy: url };
}
