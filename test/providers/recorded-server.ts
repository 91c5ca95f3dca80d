/** A loopback HTTP server that replays recorded provider responses and keeps what it was sent. */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';

export const FIXTURES = fileURLToPath(new URL('../fixtures/recorded/', import.meta.url));

export function fixture(name: string): string {
  return readFileSync(FIXTURES + name, 'utf8');
}

export interface RecordedReply {
  status: number;
  body: string;
  headers?: Record<string, string>;
  /** Send only this many bytes of the body, then drop the connection (a network failure mid-stream). */
  dropAfterBytes?: number;
}

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export function sse(name: string): RecordedReply {
  return { status: 200, body: fixture(name), headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' } };
}

export function jsonError(status: number, name: string, headers: Record<string, string> = {}): RecordedReply {
  return { status, body: fixture(name), headers: { 'content-type': 'application/json', ...headers } };
}

export interface RecordedServer {
  baseURL: string;
  requests: ReceivedRequest[];
  /** Replies served in order, one per request; the last one repeats. */
  reply(...replies: RecordedReply[]): void;
  close(): Promise<void>;
}

export async function startRecordedServer(prefix = '/v1'): Promise<RecordedServer> {
  let queue: RecordedReply[] = [];
  const requests: ReceivedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: raw ? (JSON.parse(raw) as Record<string, unknown>) : {} });
      const r = queue.length > 1 ? queue.shift()! : queue[0];
      if (!r) {
        res.writeHead(500).end('no reply configured');
        return;
      }
      res.writeHead(r.status, r.headers ?? {});
      if (r.dropAfterBytes !== undefined) {
        res.write(r.body.slice(0, r.dropAfterBytes), () => res.socket?.destroy());
        return;
      }
      res.end(r.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}${prefix}`,
    requests,
    reply: (...replies) => {
      queue = replies;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: bind, note the port, close. */
export async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}
