/** Test helpers: a real loopback server over a service, and an independent SSE reader (eventsource-parser). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createParser } from 'eventsource-parser';
import { startServer, type RunningServer, type ServerOptions } from '../../src/server/start-server.js';
import type { RunServiceApi } from '../../src/runtime/run-service-types.js';
import { RunService, type RunServiceOptions } from '../../src/runtime/service/run-service.js';

export interface TestServer extends RunningServer {
  dataDir: string;
  stop(): Promise<void>;
}

export async function startTestServer(service: RunServiceApi, extra: Partial<ServerOptions> = {}): Promise<TestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'runtrail-server-'));
  const s = await startServer({ service, port: 0, logger: false, dataDir, env: {}, ...extra });
  return {
    ...s,
    dataDir,
    stop: async () => {
      await s.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RealTestServer {
  url: string;
  service: RunService;
  dataDir: string;
  stop(): Promise<void>;
}

/** A loopback server over a real RunService in a fresh data dir (no environment). */
export async function startRealServer(opts: Omit<RunServiceOptions, 'dataDir'>, extra: Partial<ServerOptions> = {}): Promise<RealTestServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'runtrail-real-server-'));
  const service = new RunService({ env: {}, ...opts, dataDir });
  const s = await startServer({ service, port: 0, dataDir, env: {}, ...extra });
  return {
    url: s.url,
    service,
    dataDir,
    stop: async () => {
      await s.close();
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface SseEvent {
  id?: string;
  data: string;
}

export interface SseResult {
  status: number;
  headers: Headers;
  raw: string;
  events: SseEvent[];
  retry: number | null;
  comments: string[];
}

/** Reads an SSE response to its end, or until `stopWhen` says so (then the client hangs up). */
export async function readSse(url: string, opts: { headers?: Record<string, string>; stopWhen?: (r: SseResult) => boolean } = {}): Promise<SseResult> {
  const ctrl = new AbortController();
  const res = await fetch(url, { headers: opts.headers, signal: ctrl.signal });
  const out: SseResult = { status: res.status, headers: res.headers, raw: '', events: [], retry: null, comments: [] };
  if (!res.body) return out;
  const parser = createParser({
    onEvent: (e) => out.events.push({ id: e.id, data: e.data }),
    onRetry: (ms) => {
      out.retry = ms;
    },
    onComment: (c) => out.comments.push(c),
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      out.raw += value;
      parser.feed(value);
      if (opts.stopWhen?.(out)) {
        ctrl.abort();
        break;
      }
    }
  } catch (err) {
    if (!ctrl.signal.aborted) throw err;
  }
  return out;
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  // `any`: tests read whatever JSON the route returned and assert on it.
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* raw text */
  }
  return { status: res.status, body: parsed };
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  // `any`: as above.
  const res = await fetch(url, { headers });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    /* raw text */
  }
  return { status: res.status, body: parsed };
}
