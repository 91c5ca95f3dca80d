/**
 * 200,000 deltas over loopback HTTP as SSE, three ways, in one run:
 *   raw       res.write of prebuilt frames (the floor any SSE server pays)
 *   raw-join  the same frames, a batch joined into one res.write (the floor of a coalescing server)
 *   ai-sdk    Vercel AI SDK v6 UI message stream (createUIMessageStream → pipeUIMessageStreamToResponse)
 *   runtrail  AgentEventBus → engine bridge → SseAdapter → the server's SseFrameWriter (a tick's
 *             frames in one res.write, as GET /api/runs/:id/events writes them)
 *   +log      the same with the run's events.jsonl written (EventStore), as every real run does
 * Each way writes in batches of 1,000 and waits for 'drain' when the socket is full, so no path
 * buffers the whole run in memory. The client counts frames (blank-line terminators) and bytes.
 */
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createUIMessageStream, pipeUIMessageStreamToResponse } from 'ai';
import { AgentEventBus } from '../src/events/agent-event-bus.js';
import { registerSecret } from '../src/events/secret-masker.js';
import { createEngineBridge } from '../src/events/engine-bridge.js';
import { SseAdapter } from '../src/channels/sse-adapter.js';
import { EventStore } from '../src/runtime/storage/event-store.js';
import { SseFrameWriter } from '../src/server/sse-frame-writer.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const N = 200_000;
const BATCH = 1_000;
const TOKENS = ['The', ' quick', ' brown', ' fox', ' jumps', ' over', ' the', ' lazy', ' dog', '.', ' 世界', '\n'];
const token = (i: number): string => TOKENS[i % TOKENS.length];

const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' };

function drained(res: ServerResponse): Promise<void> {
  return res.writableNeedDrain ? new Promise((r) => res.once('drain', () => r())) : Promise.resolve();
}

type Handler = (res: ServerResponse) => Promise<void>;

const rawFrames = Array.from({ length: N }, (_, i) => `id: ${i + 1}\ndata: ${JSON.stringify({ type: 'delta', content: token(i) })}\n\n`);

const raw: Handler = async (res) => {
  res.writeHead(200, SSE_HEADERS);
  for (let i = 0; i < N; i += BATCH) {
    const end = Math.min(N, i + BATCH);
    for (let j = i; j < end; j++) res.write(rawFrames[j]);
    await drained(res);
  }
  res.end();
};

// the same frames, each batch joined into one write: the floor for a server that coalesces as Runtrail's does
const rawJoined: Handler = async (res) => {
  res.writeHead(200, SSE_HEADERS);
  for (let i = 0; i < N; i += BATCH) {
    res.write(rawFrames.slice(i, Math.min(N, i + BATCH)).join(''));
    await drained(res);
  }
  res.end();
};

const aiSdk: Handler = async (res) => {
  const stream = createUIMessageStream({
    execute: async ({ writer }) => {
      writer.write({ type: 'text-start', id: 't1' });
      for (let i = 0; i < N; i += BATCH) {
        const end = Math.min(N, i + BATCH);
        for (let j = i; j < end; j++) writer.write({ type: 'text-delta', id: 't1', delta: token(j) });
        await new Promise((r) => setImmediate(r));
      }
      writer.write({ type: 'text-end', id: 't1' });
    },
  });
  await new Promise<void>((resolve) => {
    res.once('finish', () => resolve());
    void pipeUIMessageStreamToResponse({ response: res, stream });
  });
};

const runtrailPath =
  (withLog: boolean): Handler =>
  async (res) => {
    res.writeHead(200, SSE_HEADERS);
    const bus = new AgentEventBus({ runId: 'run_bench' });
    const bridge = createEngineBridge({ traceId: 'run_bench' });
    const out = new SseFrameWriter(res);
    const sse = new SseAdapter(null, { onFrame: (f) => out.write(f) });
    const dir = withLog ? mkdtempSync(join(tmpdir(), 'runtrail-sse-bench-')) : '';
    const log = withLog ? new EventStore(join(dir, 'events.jsonl')) : null;
    // as in a run: the log subscribes first, then the wire
    if (log) bus.subscribe((ev) => log.append(ev));
    bus.subscribe((ev) => {
      const e = bridge.translate(ev);
      if (e) sse.emit(e);
    });
    let text = '';
    for (let i = 0; i < N; i += BATCH) {
      const end = Math.min(N, i + BATCH);
      for (let j = i; j < end; j++) {
        const delta = token(j);
        text += delta;
        bus.publish('assistant', { text: '', delta });
      }
      out.flush(); // as the route does past its queue bound: write what is held, then wait for the socket
      await drained(res);
    }
    if (text.length === 0) throw new Error('unreachable');
    if (sse.stats.handled !== N) throw new Error(`runtrail path handled ${sse.stats.handled} of ${N}`);
    if (log) {
      log.close();
      if (log.written !== N) throw new Error(`events.jsonl holds ${log.written} of ${N}`);
      rmSync(dir, { recursive: true, force: true });
    }
    res.end();
  };
const runtrail = runtrailPath(false);
const runtrailLog = runtrailPath(true);

async function measure(name: string, handler: Handler, expectFrames: (frames: number) => boolean): Promise<{ eps: number; bytes: number }> {
  const server = createServer((_req, res) => {
    handler(res).catch((err: unknown) => {
      console.error(`${name} handler failed`, err);
      res.destroy();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  try {
    const t0 = process.hrtime.bigint();
    const { frames, bytes } = await new Promise<{ frames: number; bytes: number }>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/', agent: false }, (res: IncomingMessage) => {
        let frames = 0;
        let bytes = 0;
        let prevNl = false;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          for (let i = 0; i < chunk.length; i++) {
            const nl = chunk[i] === 10;
            if (nl && prevNl) frames++;
            prevNl = nl;
          }
        });
        res.on('end', () => resolve({ frames, bytes }));
        res.on('error', reject);
      }).on('error', reject);
    });
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    if (!expectFrames(frames)) throw new Error(`${name}: client saw ${frames} frames`);
    const eps = N / secs;
    console.log(
      `${name.padEnd(9)} ${Math.round(eps).toLocaleString('en-US').padStart(11)} deltas/s  ${(secs * 1000).toFixed(0).padStart(6)} ms  ${(bytes / 1e6).toFixed(1)} MB`,
    );
    return { eps, bytes };
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

/** A server holds secrets (a provider key, its API token, a database password): every event is masked against them. */
const BENCH_SECRETS = ['sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234', 'tok-5f2b8c1d9e4a7b3c6d0e1f2a3b4c5d6e', 'correct horse battery staple'];

export async function run(): Promise<void> {
  for (const s of BENCH_SECRETS) registerSecret(s, 'bench');
  console.log(`${N.toLocaleString('en-US')} deltas over loopback HTTP SSE (best of 3 rounds, interleaved; ${BENCH_SECRETS.length} secrets masked)`);
  const best = { raw: 0, join: 0, ai: 0, rt: 0, log: 0 };
  for (let round = 0; round < 3; round++) {
    best.raw = Math.max(best.raw, (await measure('raw', raw, (f) => f === N)).eps);
    best.join = Math.max(best.join, (await measure('raw-join', rawJoined, (f) => f === N)).eps);
    // The AI SDK adds start/text-start/text-end/finish frames and a [DONE] line.
    best.ai = Math.max(best.ai, (await measure('ai-sdk', aiSdk, (f) => f >= N)).eps);
    best.rt = Math.max(best.rt, (await measure('runtrail', runtrail, (f) => f === N)).eps);
    best.log = Math.max(best.log, (await measure('+log', runtrailLog, (f) => f === N)).eps);
  }
  const n = (x: number) => Math.round(x).toLocaleString('en-US');
  console.log(`best: raw ${n(best.raw)}/s, ai-sdk ${n(best.ai)}/s, runtrail ${n(best.rt)}/s, runtrail with events.jsonl ${n(best.log)}/s`);
  console.log(`runtrail / raw    = ${(best.rt / best.raw).toFixed(2)}x  (target >= 0.7x)`);
  console.log(`runtrail + events.jsonl / raw = ${(best.log / best.raw).toFixed(2)}x  (target >= 0.85x)`);
  console.log(
    `against raw-join (the same one write per batch): runtrail ${(best.rt / best.join).toFixed(2)}x, with events.jsonl ${(best.log / best.join).toFixed(2)}x`,
  );
  console.log(`runtrail / ai-sdk = ${(best.rt / best.ai).toFixed(2)}x  (target >= 5x; raw itself is ${(best.raw / best.ai).toFixed(2)}x the AI SDK here)`);
}
