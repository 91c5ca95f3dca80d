/**
 * An attacker on the network, with real sockets: slow headers, trickled bodies (300 of them), idle
 * keep-alive connections, too many connections from one address, a body sent without the token, and one
 * client taking every stream slot. Other clients (another loopback address: Linux routes all of
 * 127.0.0.0/8 to lo) must still be served.
 */
import { readdirSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeRunService } from './fake-run-service.js';
import { startTestServer, type TestServer } from './helpers.js';

let server: TestServer | null = null;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await server?.stop();
  server = null;
});

const TOKEN = 'limits-test-token-0123456789abcdef';

/** Resolves once `cond` holds (polled), or rejects after `ms` with `what`. */
async function until(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface RawSocket {
  sock: Socket;
  data: () => string;
  closed: () => boolean;
}

/** A raw TCP connection to the server from `from` (a loopback address); `first` is written once connected. */
function open(url: string, from: string, first = ''): Promise<RawSocket> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = connect({ port: Number(u.port), host: u.hostname, localAddress: from });
    sockets.push(sock);
    let data = '';
    let closed = false;
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => (data += d));
    sock.on('close', () => (closed = true));
    sock.on('error', () => (closed = true));
    sock.on('connect', () => {
      if (first) sock.write(first);
      resolve({ sock, data: () => data, closed: () => closed });
    });
    sock.on('error', reject);
  });
}

/** GET `path` from `from`; resolves with the status (or the error's code). */
function getFrom(url: string, path: string, from: string, headers: Record<string, string> = {}): Promise<{ status: number | string; body: string }> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const req = request({ host: u.hostname, port: Number(u.port), path, localAddress: from, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        body += d;
        // a stream answers 200 and stays open: its head is enough
        if ((res.headers['content-type'] ?? '').includes('event-stream')) resolve({ status: res.statusCode ?? 0, body });
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', (e: NodeJS.ErrnoException) => resolve({ status: e.code ?? 'error', body: '' }));
    req.end();
  });
}

function uploadHead(host: string, length: number, boundary = 'xyz'): string {
  return `POST /api/uploads HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\n\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.csv"\r\nContent-Type: text/csv\r\n\r\n`;
}

describe('HTTP limits against a slow or greedy client', () => {
  it('closes a connection whose headers do not arrive in time (408)', async () => {
    server = await startTestServer(new FakeRunService(), { http: { headersTimeoutMs: 1_000 } });
    const host = new URL(server.url).host;
    const s = await open(server.url, '127.0.0.2', `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nX-Slow: `);
    await until(s.closed, 'the server to close the slow-header connection');
    expect(s.data()).toMatch(/^HTTP\/1\.1 408/);
    expect((await getFrom(server.url, '/healthz', '127.0.0.1')).status).toBe(200);
  });

  it('closes an idle keep-alive connection', async () => {
    server = await startTestServer(new FakeRunService(), { http: { keepAliveTimeoutMs: 300 } });
    const host = new URL(server.url).host;
    const s = await open(server.url, '127.0.0.1', `GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`);
    await until(() => s.data().includes('"ok":true'), 'the healthz answer');
    expect(s.data()).toMatch(/keep-alive/i);
    await until(s.closed, 'the server to close the idle keep-alive connection');
  });

  it('answers 401 before reading the body of a request without the token, and closes the connection', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service, { token: TOKEN });
    const host = new URL(server.url).host;
    // announces 10 MB, sends 20 bytes: the answer must not wait for the rest
    const s = await open(
      server.url,
      '127.0.0.2',
      `POST /api/runs HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 10000000\r\n\r\n{"plugin":"echo","in`,
    );
    await until(() => s.data().includes('unauthorized'), 'the 401');
    expect(s.data()).toMatch(/^HTTP\/1\.1 401/);
    expect(s.data()).toMatch(/connection: close/i);
    // the client keeps trickling; the server has hung up
    const trickle = setInterval(() => !s.closed() && s.sock.write('x'), 50);
    try {
      await until(s.closed, 'the server to close the refused connection');
    } finally {
      clearInterval(trickle);
    }
    expect(service.runs.size).toBe(0);
  });

  it('cuts a body that trickles slower than the minimum rate after the grace period (408), and keeps nothing of it', async () => {
    server = await startTestServer(new FakeRunService(), { token: TOKEN, http: { bodyGraceMs: 1_000, bodyMinBytesPerSecond: 1024 } });
    const host = new URL(server.url).host;
    const s = await open(server.url, '127.0.0.2', uploadHead(host, 1_000_000));
    const trickle = setInterval(() => !s.closed() && s.sock.write('a'), 100);
    try {
      await until(s.closed, 'the trickled upload to be cut');
    } finally {
      clearInterval(trickle);
    }
    expect(s.data()).toMatch(/^HTTP\/1\.1 408/);
    expect(s.data()).toContain('request_too_slow');
    const left = () => {
      try {
        return readdirSync(join(server!.dataDir, 'uploads'), { recursive: true }).filter((f) => String(f).endsWith('.csv'));
      } catch {
        return [];
      }
    };
    await until(() => left().length === 0, 'the partial upload to be removed', 10_000);
  });

  it('300 trickling uploads do not make /healthz (or an upload of another client) fail, and all of them are cut', async () => {
    // a quota large enough for all of them: here the body rule alone must hold
    server = await startTestServer(new FakeRunService(), { token: TOKEN, http: { bodyGraceMs: 3_000 }, uploads: { maxBytesPerClient: 1e12 } });
    const host = new URL(server.url).host;
    const attackers: RawSocket[] = [];
    // five addresses, 60 connections each (under the 64 a client may hold)
    for (let i = 0; i < 300; i++) attackers.push(await open(server.url, `127.0.0.${2 + (i % 5)}`, uploadHead(host, 5_000_000)));
    const trickle = setInterval(() => {
      for (const a of attackers) if (!a.closed()) a.sock.write('b');
    }, 200);
    try {
      expect(attackers.filter((a) => a.closed())).toHaveLength(0);
      for (let i = 0; i < 5; i++) expect((await getFrom(server.url, '/healthz', '127.0.0.1')).status).toBe(200);
      const fd = new FormData();
      fd.append('file', new Blob(['id,text\n1,fine\n']), 'ok.csv');
      const up = await fetch(`${server.url}/api/uploads`, { method: 'POST', body: fd, headers: { authorization: `Bearer ${TOKEN}` } });
      expect(up.status).toBe(201);
      await until(() => attackers.every((a) => a.closed()), 'every trickling upload to be cut', 60_000);
    } finally {
      clearInterval(trickle);
    }
    expect(attackers.filter((a) => !/^HTTP\/1\.1 408/.test(a.data())).map((a) => a.data().split('\r\n')[0])).toEqual([]);
    expect((await getFrom(server.url, '/healthz', '127.0.0.1')).status).toBe(200);
  }, 120_000);

  it('refuses connections past the per-address cap with a 503 that says so, while other addresses are served', async () => {
    server = await startTestServer(new FakeRunService(), { http: { maxConnectionsPerClient: 5 } });
    const held: RawSocket[] = [];
    for (let i = 0; i < 5; i++) held.push(await open(server.url, '127.0.0.2'));
    const sixth = await getFrom(server.url, '/healthz', '127.0.0.2');
    expect(sixth.status).toBe(503);
    expect(sixth.body).toContain('127.0.0.2 already holds 5 connections');
    expect((await getFrom(server.url, '/healthz', '127.0.0.1')).status).toBe(200);
    // a slot given back is usable again (the server sees the close a moment after the client)
    held[0].sock.destroy();
    let again = await getFrom(server.url, '/healthz', '127.0.0.2');
    for (let i = 0; i < 100 && again.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      again = await getFrom(server.url, '/healthz', '127.0.0.2');
    }
    expect(again.status).toBe(200);
  });

  it('a request on a refused connection runs no route: no run is made', async () => {
    const service = new FakeRunService();
    server = await startTestServer(service, { http: { maxConnectionsPerClient: 1 } });
    const host = new URL(server.url).host;
    await open(server.url, '127.0.0.2');
    const body = '{"plugin":"echo","input":{}}';
    const s = await open(
      server.url,
      '127.0.0.2',
      `POST /api/runs HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await until(s.closed, 'the refused connection to close');
    expect(s.data()).toMatch(/^HTTP\/1\.1 503/);
    expect(s.data()).toContain('too_many_connections');
    expect(service.runs.size).toBe(0);
  });

  it('refuses connections past the server-wide cap', async () => {
    server = await startTestServer(new FakeRunService(), { http: { maxConnections: 8 } });
    for (let i = 0; i < 8; i++) await open(server.url, `127.0.0.${2 + (i % 4)}`);
    const over = await getFrom(server.url, '/healthz', '127.0.0.1');
    expect(over.status).toBe(503);
    expect(over.body).toContain('already holds 8 connections');
  });

  it('one client address cannot take every stream slot', async () => {
    const service = new FakeRunService();
    service.scriptFor = () => ({ deltas: ['a', 'b'], pauseAfter: 1 });
    server = await startTestServer(service, { http: { maxStreamsPerClient: 2 } });
    const run = await service.create({ plugin: 'echo', goal: 'g', input: {} });
    const path = `/api/runs/${run.run_id}/events`;
    expect((await getFrom(server.url, path, '127.0.0.2')).status).toBe(200);
    expect((await getFrom(server.url, path, '127.0.0.2')).status).toBe(200);
    const third = await getFrom(server.url, path, '127.0.0.2');
    expect(third.status).toBe(503);
    expect(third.body).toContain('too_many_streams');
    expect((await getFrom(server.url, path, '127.0.0.1')).status).toBe(200);
  });
});
