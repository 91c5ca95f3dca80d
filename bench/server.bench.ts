/**
 * `npm run bench server`: 100 concurrent streaming runs (a script model at 50 deltas/s each) watched by
 * 500 SSE clients over loopback HTTP. The server runs in a child process (its RSS is measured alone);
 * clients run here. Each delta carries its send time, so delivery latency = receive − send, across
 * bus → event store → bridge → SSE → HTTP → client parser. Baseline, same run, same shape: a bare
 * node:http server writing prebuilt frames to the same 500 clients on the same schedule (untilDue).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createParser } from 'eventsource-parser';
import { z } from 'zod';
import type { ModelProvider, ModelRequest, ModelStreamPart } from '../src/providers/model-provider.js';

const RUNS = 100;
const CLIENTS_PER_RUN = 5;
const DELTAS = 150;
const INTERVAL_MS = 20; // 50 deltas/s
/** Unloaded POST → first frame: runs measured, after runs that warm a fresh server up. */
const SOLO = 9;
const SOLO_WARMUP = 5;
const self = fileURLToPath(import.meta.url);

const wallNow = (): number => performance.timeOrigin + performance.now();

/**
 * Delta `n` (from 1) of a stream that began at `start` is due at start + n × INTERVAL_MS: both sides
 * send on this fixed schedule, as a provider's stream arrives. (Waiting INTERVAL_MS after each delta
 * instead let the time Runtrail spent on one delta push every later one back, so its 150 deltas took
 * longer than the baseline's for a reason that is not delivery.)
 */
function untilDue(start: number, n: number): Promise<void> {
  return new Promise((r) => setTimeout(r, Math.max(0, start + n * INTERVAL_MS - performance.now())));
}

/** The script model, stamping each delta with the moment it is emitted. */
class StampedScriptModel implements ModelProvider {
  readonly provider = 'script';
  readonly model = 'stamped';
  async *stream(req: ModelRequest): AsyncIterable<ModelStreamPart> {
    const start = performance.now();
    for (let i = 0; i < DELTAS; i++) {
      await untilDue(start, i + 1);
      if (req.signal?.aborted) return;
      yield { type: 'text-delta', text: `@${wallNow().toFixed(3)} ` };
    }
    yield { type: 'finish', reason: 'stop', usage: { inputTokens: 1, outputTokens: DELTAS } };
  }
}

async function childRuntrail(dataDir: string): Promise<void> {
  const { RunService } = await import('../src/runtime/service/run-service.js');
  const { startServer } = await import('../src/server/start-server.js');
  const { createTextOnlyPlugin } = await import('../src/plugins/text-only-plugin.js');
  const { registerSecret } = await import('../src/events/secret-masker.js');
  // as a real server has (a provider key, a database password): every event and file is masked against them
  for (const secret of ['sk-proj-AbCdEfGhIjKlMnOpQrStUvWx1234', 'correct horse battery staple']) registerSecret(secret, 'bench');
  const plugin = createTextOnlyPlugin({ name: 'talk', description: 'streams', inputSchema: z.object({}).passthrough() });
  const service = new RunService({ dataDir, agents: [plugin], env: {}, concurrency: RUNS, maxQueue: 1000, providerResolver: () => new StampedScriptModel() });
  // 500 clients from one address: the per-address caps (64) are lifted, as an operator behind a proxy would
  const limits = { maxConnectionsPerClient: 1000, maxStreamsPerClient: 1000 };
  const s = await startServer({ service, port: 0, dataDir, env: {}, maxClientQueueBytes: 4 * 1024 * 1024, http: limits });
  process.stdout.write(JSON.stringify({ url: s.url }) + '\n');
}

/** Baseline: prebuilt delta frames, one timer per "run", fanned out to its clients with res.write. */
async function childRaw(): Promise<void> {
  const subs = new Map<number, Set<http.ServerResponse>>();
  const server = http.createServer((req, res) => {
    const m = /^\/raw\/(\d+)/.exec(req.url ?? '');
    if (!m) return void res.writeHead(404).end();
    const i = Number(m[1]);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('retry: 2000\n\n');
    let set = subs.get(i);
    if (!set) {
      set = new Set();
      subs.set(i, set);
    }
    set.add(res);
    if (set.size === CLIENTS_PER_RUN) {
      const clients = set;
      void (async () => {
        const start = performance.now();
        for (let n = 1; n <= DELTAS; n++) {
          await untilDue(start, n);
          const frame = `id: ${n}\ndata: {"type":"delta","content":${JSON.stringify(`@${wallNow().toFixed(3)} `)}}\n\n`;
          for (const r of clients) r.write(frame);
        }
        for (const r of clients) r.end('data: {"type":"done"}\n\n');
      })();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as { port: number };
  process.stdout.write(JSON.stringify({ url: `http://127.0.0.1:${addr.port}` }) + '\n');
}

interface Figures {
  latencies: number[];
  frames: number;
  seconds: number;
  peakRssMb: number;
  firstFrameMs: number[];
  postMs: number[];
  /** deltas each client received; every one must be DELTAS */
  deltasPerClient: number[];
}

function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * Node flags for the server children, e.g. BENCH_CHILD_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/p"
 * to profile the server under the load (NODE_OPTIONS refuses --cpu-prof); split on spaces.
 */
const childFlags = (process.env.BENCH_CHILD_NODE_FLAGS ?? '').split(' ').filter(Boolean);

function startChild(args: string[]): Promise<{ url: string; proc: ChildProcess }> {
  const proc = spawn(process.execPath, [...childFlags, self, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      if (buf.includes('\n')) resolve({ url: (JSON.parse(buf.split('\n')[0]) as { url: string }).url, proc });
    });
    proc.on('exit', (c) => reject(new Error(`bench child exited (${c})`)));
  });
}

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/** One SSE client; resolves at the end of the stream. */
function watch(url: string, onData: (data: string, at: number, connectedAt: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, (res) => {
      const connectedAt = wallNow();
      const parser = createParser({ onEvent: (e) => onData(e.data, wallNow(), connectedAt) });
      res.setEncoding('utf8');
      res.on('data', (c: string) => parser.feed(c));
      res.on('end', resolve);
      res.on('error', reject);
    });
    req.on('error', reject);
  });
}

/** Only deltas emitted after the client connected count: earlier ones are history catch-up, not delivery. */
function onDelta(fig: Figures, data: string, at: number, connectedAt: number): void {
  fig.frames++;
  const m = /"content":"@([\d.]+) "/.exec(data);
  if (m && Number(m[1]) >= connectedAt) fig.latencies.push(at - Number(m[1]));
}

function postRun(url: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const req = http.request(`${url}/api/runs`, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      let b = '';
      res.on('data', (c) => (b += c));
      res.on('end', () => (res.statusCode === 201 ? resolve((JSON.parse(b) as { run_id: string }).run_id) : reject(new Error(b))));
    });
    req.on('error', reject);
    req.end(JSON.stringify({ plugin: 'talk', input: {} }));
  });
}

function pct(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : NaN;
}

async function measure(kind: 'raw' | 'runtrail', dataDir: string): Promise<Figures> {
  const { url, proc } = await startChild(kind === 'raw' ? ['--child', 'raw'] : ['--child', 'runtrail', dataDir]);
  const fig: Figures = { latencies: [], frames: 0, seconds: 0, peakRssMb: rssMb(proc.pid!), firstFrameMs: [], postMs: [], deltasPerClient: [] };
  const sampler = setInterval(() => {
    fig.peakRssMb = Math.max(fig.peakRssMb, rssMb(proc.pid!));
  }, 100);
  if (kind === 'runtrail') {
    // unloaded: one run at a time, POST → first frame; the first runs of a fresh server also compile
    // its code paths (JIT), so they are shown apart and the median is of the runs after them
    const solo: number[] = [];
    for (let i = 0; i < SOLO_WARMUP + SOLO; i++) {
      const posted = wallNow();
      const runId = await postRun(url);
      await new Promise<void>((resolve) => {
        let got = false;
        void watch(`${url}/api/runs/${runId}/events`, (_d, at) => {
          if (!got) {
            got = true;
            solo.push(at - posted);
          }
        }).then(resolve);
      });
    }
    const cold = solo.slice(0, SOLO_WARMUP);
    const warm = solo.slice(SOLO_WARMUP).sort((a, b) => a - b);
    console.log(
      `runtrail  unloaded POST → first frame: median ${pct(warm, 50).toFixed(1)} ms of ${SOLO} runs after ${SOLO_WARMUP} on the fresh server (those: ${cold.map((ms) => ms.toFixed(1)).join(', ')} ms)`,
    );
  }
  const t0 = wallNow();
  const watchers: Array<Promise<void>> = [];
  await Promise.all(
    Array.from({ length: RUNS }, async (_, i) => {
      let streamUrl: string;
      const posted = wallNow();
      if (kind === 'raw') streamUrl = `${url}/raw/${i}`;
      else {
        const runId = await postRun(url);
        fig.postMs.push(wallNow() - posted);
        streamUrl = `${url}/api/runs/${runId}/events`;
      }
      for (let c = 0; c < CLIENTS_PER_RUN; c++) {
        let first = c !== 0;
        let deltas = 0;
        watchers.push(
          watch(streamUrl, (data, at, connectedAt) => {
            if (!first) {
              first = true;
              fig.firstFrameMs.push(at - posted);
            }
            if (data.startsWith('{"type":"delta"')) deltas++;
            onDelta(fig, data, at, connectedAt);
          }).then(() => void fig.deltasPerClient.push(deltas)),
        );
      }
    }),
  );
  await Promise.all(watchers);
  fig.seconds = (wallNow() - t0) / 1000;
  clearInterval(sampler);
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  return fig;
}

function report(name: string, f: Figures): { p50: number; p99: number; fps: number } {
  const s = [...f.latencies].sort((a, b) => a - b);
  const ff = [...f.firstFrameMs].sort((a, b) => a - b);
  const fps = f.frames / f.seconds;
  const pm = [...f.postMs].sort((a, b) => a - b);
  console.log(
    `${name.padEnd(9)} latency p50 ${pct(s, 50).toFixed(2)} ms  p99 ${pct(s, 99).toFixed(2)} ms  ` +
      `frames ${f.frames} in ${f.seconds.toFixed(1)} s = ${fps.toFixed(0)}/s  server RSS peak ${f.peakRssMb.toFixed(0)} MB  ` +
      `first frame p50 ${pct(ff, 50).toFixed(1)} ms p99 ${pct(ff, 99).toFixed(1)} ms` +
      (pm.length ? `  (POST → 201 p50 ${pct(pm, 50).toFixed(1)} ms)` : ''),
  );
  const short = f.deltasPerClient.filter((n) => n !== DELTAS).length;
  console.log(`${''.padEnd(9)} ${f.deltasPerClient.length} clients, ${short} with a missing or extra delta`);
  return { p50: pct(s, 50), p99: pct(s, 99), fps };
}

export async function run(): Promise<void> {
  console.log(`${RUNS} runs × ${DELTAS} deltas at ${1000 / INTERVAL_MS}/s, ${RUNS * CLIENTS_PER_RUN} SSE clients (server in a child process)`);
  const dataDir = mkdtempSync(join(tmpdir(), 'runtrail-bench-server-'));
  try {
    const raw = report('raw http', await measure('raw', dataDir));
    const rt = report('runtrail', await measure('runtrail', dataDir));
    console.log(
      `ratios vs raw: latency p50 ×${(rt.p50 / raw.p50).toFixed(2)}, p99 ×${(rt.p99 / raw.p99).toFixed(2)}, frames/s ×${(rt.fps / raw.fps).toFixed(2)}` +
        ` (runtrail first frame = POST → first SSE frame, incl. run creation; raw = connect → first frame)`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
    agent.destroy();
  }
}

if (process.argv[1] === self && process.argv[2] === '--child') {
  // the parent ends a child with SIGTERM: exit normally, so that a profile asked for is written
  process.once('SIGTERM', () => process.exit(0));
  if (process.argv[3] === 'raw') await childRaw();
  else await childRuntrail(process.argv[4]);
}
