/**
 * Scale-out figures, every node a `runtrail` process started from dist/ as a user would
 * start it, every client here over loopback HTTP:
 *  1. runs per second and POST → first SSE frame p50/p99 with 1 API node and 1, 2 and 4 workers
 *     (`worker --concurrency 4` each, so more workers = more capacity), against the single-process
 *     mode (`serve` without RUNTRAIL_REDIS_URL / RUNTRAIL_DATABASE_URL) at the same capacities, 4 and
 *     16. The runs wait on I/O: an agent whose script model takes 250 ms per turn (two turns, a tool
 *     call between them), so the two cores are not what limits them. Load is a closed loop: as many
 *     clients as there are run slots, each creating a run, streaming it to its end, then the next
 *     (runs do not pile up in the queue: the first frame shows the claim, not a backlog); the POST's
 *     own answer is shown beside it. Target: 4 workers ≥ 3.5× the runs/s of 1 worker.
 *  2. cross-node delivery latency p50/p99: runs created on API node A, streamed from API node B; each
 *     frame's arrival (here) minus its event's `ts` (set when the worker's bus publishes it: same
 *     machine, same clock) — through the PostgreSQL batch commit, the Redis Stream, B's reader, the
 *     bridge and SSE. Only events published after the client connected count (earlier ones are
 *     history). `ts` is whole milliseconds (floored), so figures read up to 1 ms high. An observer of
 *     each run's Redis Stream (a blocking XREAD here) splits the figure at Redis. Baseline: the same
 *     runs in one process (bus → SSE). Target: cross-node p99 ≤ 20 ms.
 * Each phase runs a warm-up first; its runs/s is taken over the waves after the first. Alongside: the
 * CPU time each process took per run and how busy the machine was (the cores are shared).
 * PostgreSQL and Redis come from RUNTRAIL_BENCH_DATABASE_URL / RUNTRAIL_BENCH_REDIS_URL (default the
 * loopback services); a fresh schema and key prefix are made and dropped; unreachable: skipped.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createParser } from 'eventsource-parser';
import { Redis } from 'ioredis';
import pg from 'pg';
import { redactServiceUrl } from '../src/distributed/service-url.js';

const CLI = fileURLToPath(new URL('../src/cli/main.js', import.meta.url));
const DATABASE_URL = process.env.RUNTRAIL_BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
/** A database number of its own besides the prefix: another suite's FLUSHDB of db 0 does not hit it. */
const REDIS_URL = process.env.RUNTRAIL_BENCH_REDIS_URL || 'redis://127.0.0.1:6379/14';
const CONCURRENCY = 4;
const TURN_MS = 250;
/** Runs each client makes in a measured phase (the first wave is not counted in runs/s). */
const RUNS_PER_CLIENT = 12;
const WARMUP_PER_CLIENT = 2;
/** Cross-node phase: runs at once, rounds, deltas per run and their spacing. */
const STREAM_RUNS = 8;
const STREAM_ROUNDS = 3;
const DELTAS = 40;
const DELTA_MS = 20;
const RUN_TIMEOUT_MS = 30_000;

const wallNow = (): number => performance.timeOrigin + performance.now();

function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

const ms = (x: number): string => `${x.toFixed(1)} ms`;

// ---------------------------------------------------------------------------------------------
// processes: each node in a process group of its own, all of them ended when the bench ends
// ---------------------------------------------------------------------------------------------

interface Node {
  name: string;
  proc: ChildProcess;
  /** The HTTP server's URL; null for a worker. */
  url: string | null;
  stderr: string;
  exited: boolean;
  /** Ended by the bench (not died). */
  stopped: boolean;
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system) of a process so far, ms. */
function cpuMs(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return 0;
  }
}

/** [busy, total] clock ticks of the whole machine. */
function machineTicks(): [number, number] {
  try {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    return [total - f[3] - (f[4] ?? 0), total];
  } catch {
    return [0, 0];
  }
}

class Nodes {
  private readonly live = new Set<Node>();
  /** Every node started, for the error of a run that never ended (one died meanwhile). */
  private readonly started: Node[] = [];
  private readonly onExit = (): void => this.killAll('SIGKILL');
  private readonly onSignal = (sig: NodeJS.Signals): void => {
    this.killAll('SIGKILL');
    this.detach();
    // the schema and keys too, briefly; then the signal does what it would have done
    const t = setTimeout(() => process.kill(process.pid, sig), 3_000);
    void this.cleanup().finally(() => {
      clearTimeout(t);
      process.kill(process.pid, sig);
    });
  };

  constructor(
    private readonly cwd: string,
    private readonly env: Record<string, string>,
    /** What else a bench ended by a signal removes (the nodes are killed first). */
    private readonly cleanup: () => Promise<void>,
  ) {
    // a bench ended early (an exception, Ctrl-C, a closed pipe) leaves no node behind
    process.once('exit', this.onExit);
    process.once('SIGINT', this.onSignal);
    process.once('SIGTERM', this.onSignal);
    process.once('SIGHUP', this.onSignal);
  }

  detach(): void {
    process.off('exit', this.onExit);
    process.off('SIGINT', this.onSignal);
    process.off('SIGTERM', this.onSignal);
    process.off('SIGHUP', this.onSignal);
  }

  private killAll(sig: NodeJS.Signals): void {
    for (const n of this.live) {
      try {
        if (n.proc.pid) process.kill(-n.proc.pid, sig);
      } catch {
        // already gone
      }
    }
  }

  /** Starts `runtrail <args>` and waits for the line that says it serves (or claims runs). */
  start(name: string, args: string[], env: Record<string, string> = {}): Promise<Node> {
    const proc = spawn(process.execPath, [CLI, ...args], { cwd: this.cwd, env: { ...this.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const node: Node = { name, proc, url: null, stderr: '', exited: false, stopped: false };
    this.live.add(node);
    this.started.push(node);
    proc.stderr!.setEncoding('utf8').on('data', (s: string) => (node.stderr = (node.stderr + s).slice(-4_000)));
    return new Promise<Node>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`${name} did not start within 30 s: ${node.stderr || out}`)), 30_000);
      proc.stdout!.setEncoding('utf8').on('data', (s: string) => {
        out += s;
        const url = /serving on (http:\/\/\S+)/.exec(out)?.[1];
        if (url || /worker claiming runs/.test(out)) {
          clearTimeout(timer);
          node.url = url ?? null;
          resolve(node);
        }
      });
      proc.once('exit', (code, sig) => {
        node.exited = true;
        this.live.delete(node);
        clearTimeout(timer);
        reject(new Error(`${name} exited (${code ?? sig}): ${node.stderr.trim() || out.trim()}`));
      });
    });
  }

  /** SIGTERM to its group (a worker drains for --drain-s), then SIGKILL after 5 s. */
  async stop(node: Node): Promise<void> {
    node.stopped = true;
    if (node.exited || !node.proc.pid) return;
    const gone = new Promise<void>((r) => node.proc.once('exit', () => r()));
    try {
      process.kill(-node.proc.pid, 'SIGTERM');
    } catch {
      return;
    }
    const t = setTimeout(() => {
      try {
        process.kill(-node.proc.pid!, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }, 5_000);
    await gone;
    clearTimeout(t);
    // what the node started (MCP servers, none here) shares its group
    try {
      process.kill(-node.proc.pid, 'SIGKILL');
    } catch {
      // the group is empty
    }
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.live].map((n) => this.stop(n)));
  }

  /** A node that died mid-phase, for the error of a run that never ended. */
  dead(): string {
    return this.started
      .filter((n) => n.exited && !n.stopped)
      .map((n) => `${n.name}: ${n.stderr.trim()}`)
      .join('; ');
  }

  pids(): Array<{ name: string; pid: number | undefined }> {
    return [...this.live].map((n) => ({ name: n.name, pid: n.proc.pid }));
  }
}

// ---------------------------------------------------------------------------------------------
// clients
// ---------------------------------------------------------------------------------------------

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

function postRun(api: string, plugin: string): Promise<string> {
  const body = JSON.stringify({ plugin, input: {} });
  return new Promise<string>((resolve, reject) => {
    const req = http.request(
      `${api}/api/runs`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          if ((res.statusCode ?? 0) >= 300) return reject(new Error(`POST ${api}/api/runs: ${res.statusCode} ${text.slice(0, 300)}`));
          resolve((JSON.parse(text) as { run_id: string }).run_id);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

interface Streamed {
  connectedAt: number;
  firstFrameAt: number;
  /** Each frame's seq (its `id:`) and arrival time. */
  frames: Array<{ seq: number; at: number }>;
}

/** Reads a run's SSE stream to its end; a run that fails or does not end in time rejects. */
function streamRun(api: string, runId: string, dead: () => string): Promise<Streamed> {
  return new Promise<Streamed>((resolve, reject) => {
    const r: Streamed = { connectedAt: 0, firstFrameAt: 0, frames: [] };
    let terminal = '';
    const req = http.get(`${api}/api/runs/${runId}/events`, { agent }, (res) => {
      r.connectedAt = wallNow();
      if (res.statusCode !== 200) {
        res.resume();
        return reject(new Error(`GET ${api}/api/runs/${runId}/events: ${res.statusCode}`));
      }
      const parser = createParser({
        onEvent: (e) => {
          const at = wallNow();
          if (!r.firstFrameAt) r.firstFrameAt = at;
          if (e.id) r.frames.push({ seq: Number(e.id), at });
          if (e.data.startsWith('{"type":"done"')) terminal = 'done';
          else if (e.data.startsWith('{"type":"error"')) terminal = e.data;
        },
      });
      res.setEncoding('utf8');
      res.on('data', (c: string) => parser.feed(c));
      res.on('end', () => {
        clearTimeout(timer);
        if (terminal === 'done') resolve(r);
        else reject(new Error(`run ${runId} did not complete: ${terminal.slice(0, 400) || 'the stream ended without a terminal frame'}`));
      });
      res.on('error', reject);
    });
    const timer = setTimeout(() => {
      req.destroy();
      const d = dead();
      reject(new Error(`run ${runId} did not end within ${RUN_TIMEOUT_MS / 1000} s${d ? ` (a node died: ${d})` : ''}`));
    }, RUN_TIMEOUT_MS);
    req.on('error', reject);
  });
}

/** CPU time each node took and how busy the whole machine was, from `start()` to `read(runs)`. */
function usageMeter(nodes: Nodes): { read: (runs: number) => string } {
  const pids = nodes.pids();
  const cpu0 = pids.map((p) => cpuMs(p.pid));
  const [busy0, total0] = machineTicks();
  return {
    read: (runs) => {
      const [busy1, total1] = machineTicks();
      const per = pids.map((p, i) => `${p.name} ${((cpuMs(p.pid) - cpu0[i]) / runs).toFixed(1)}`).join(', ');
      const machine = total1 > total0 ? `${(((busy1 - busy0) / (total1 - total0)) * 100).toFixed(0)}%` : '?';
      return `CPU ms/run: ${per}; machine ${machine} busy`;
    },
  };
}

interface LoadFigures {
  runsPerS: number;
  /** POST sent → its answer */
  post: number[];
  /** POST sent → the first frame of the run's stream */
  firstFrame: number[];
  runs: number;
  seconds: number;
  usage: string;
}

/** `clients` clients, each making `perClient` runs one after another; runs/s over the waves after the first. */
async function closedLoop(nodes: Nodes, api: string, plugin: string, clients: number, perClient: number): Promise<LoadFigures> {
  const meter = usageMeter(nodes);
  const post: number[] = [];
  const firstFrame: number[] = [];
  const ends: number[] = [];
  const t0 = wallNow();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = 0; i < perClient; i++) {
        const t = wallNow();
        const id = await postRun(api, plugin);
        post.push(wallNow() - t);
        const s = await streamRun(api, id, () => nodes.dead());
        firstFrame.push(s.firstFrameAt - t);
        ends.push(wallNow());
      }
    }),
  );
  ends.sort((a, b) => a - b);
  const n = ends.length;
  const window = (ends[n - 1] - ends[clients - 1]) / 1000;
  return { runsPerS: (n - clients) / window, post, firstFrame, runs: n, seconds: (ends[n - 1] - t0) / 1000, usage: meter.read(n) };
}

async function measureLoad(label: string, nodes: Nodes, api: string, clients: number): Promise<LoadFigures> {
  await closedLoop(nodes, api, 'waiter', clients, WARMUP_PER_CLIENT);
  const f = await closedLoop(nodes, api, 'waiter', clients, RUNS_PER_CLIENT);
  console.log(
    `  ${label.padEnd(34)} ${f.runsPerS.toFixed(2).padStart(6)} runs/s   POST → first frame p50 ${ms(pct(f.firstFrame, 50))}, p99 ${ms(pct(f.firstFrame, 99))} (the POST's answer p50 ${ms(pct(f.post, 50))}, p99 ${ms(pct(f.post, 99))})   (${f.runs} runs, ${clients} clients, ${f.seconds.toFixed(1)} s; ${f.usage})`,
  );
  return f;
}

interface Delivery {
  /** publish → frame at the SSE client */
  total: number[];
  /** publish → the entry readable on the run's Redis Stream (batch wait, PostgreSQL commit, XADD) */
  toRedis: number[];
  /** the entry on Redis → the frame at the client (the API node's reader, bridge, SSE, HTTP) */
  fromRedis: number[];
  usage: string;
}

/**
 * Runs created on `createOn`, streamed from `streamFrom`: each live frame's arrival − its event's ts.
 * With `stream` (several nodes), an observer of its own also reads each run's Redis Stream, which
 * splits the figure in two.
 */
async function delivery(nodes: Nodes, createOn: string, streamFrom: string, dataDir: string, stream?: { url: string; prefix: string }): Promise<Delivery> {
  const d: Delivery = { total: [], toRedis: [], fromRedis: [], usage: '' };
  const meter = usageMeter(nodes);
  for (let round = 0; round < STREAM_ROUNDS; round++) {
    await Promise.all(
      Array.from({ length: STREAM_RUNS }, async () => {
        const id = await postRun(createOn, 'streamer');
        const observed = stream ? observeStream(stream.url, `${stream.prefix}:events:${id}`) : null;
        const s = await streamRun(streamFrom, id, () => nodes.dead()).finally(() => observed?.stop());
        const onRedis = (await observed?.arrivals) ?? new Map<number, number>();
        const ts = await eventTimes(dataDir, id);
        for (const f of s.frames) {
          const t = ts.get(f.seq);
          // published before this client was connected: history it caught up on, not delivery
          if (t === undefined || t < s.connectedAt) continue;
          d.total.push(f.at - t);
          const r = onRedis.get(f.seq);
          if (r !== undefined) {
            d.toRedis.push(r - t);
            d.fromRedis.push(f.at - r);
          }
        }
      }),
    );
  }
  d.usage = meter.read(STREAM_ROUNDS * STREAM_RUNS);
  return d;
}

/** When each entry of a Redis Stream became readable (a blocking XREAD of its own), by seq (its id). */
function observeStream(url: string, key: string): { arrivals: Promise<Map<number, number>>; stop: () => void } {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  r.on('error', () => undefined);
  let stopped = false;
  const arrivals = (async () => {
    const seen = new Map<number, number>();
    let last = '0';
    try {
      while (!stopped) {
        const res = (await r.xread('BLOCK', 500, 'STREAMS', key, last)) as Array<[string, Array<[string, string[]]>]> | null;
        const at = wallNow();
        for (const [, entries] of res ?? []) {
          for (const [entryId] of entries) {
            last = entryId;
            seen.set(Number(entryId.split('-')[0]), at);
          }
        }
      }
    } finally {
      r.disconnect();
    }
    return seen;
  })();
  // the SSE stream ended: what is on the stream by now is all there is
  return { arrivals, stop: () => void setTimeout(() => (stopped = true), 100) };
}

/** seq → ts of a finished run, from its events.jsonl on the shared data dir (written by the worker). */
async function eventTimes(dataDir: string, runId: string): Promise<Map<number, number>> {
  const file = join(dataDir, 'runs', runId, 'runtime', 'events.jsonl');
  for (let i = 0; ; i++) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      // not there yet
    }
    const events = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { seq: number; ts: number; stream: string; data: { type?: string } });
    if (events.some((e) => e.stream === 'run' && /^run\.(completed|failed|cancelled)$/.test(e.data.type ?? '')) || i >= 50)
      return new Map(events.map((e) => [e.seq, e.ts]));
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---------------------------------------------------------------------------------------------
// the services, the project, the phases
// ---------------------------------------------------------------------------------------------

/** Why the services cannot be used, or null when both answer. */
async function unreachable(): Promise<string | null> {
  const c = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3_000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
  } catch (e) {
    return `PostgreSQL ${redactServiceUrl(DATABASE_URL)} is not reachable (${(e as Error).message || (e as Error).name})`;
  } finally {
    await c.end().catch(() => undefined);
  }
  const r = new Redis(REDIS_URL, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 3_000, enableOfflineQueue: false });
  let cause = '';
  r.on('error', (e: Error) => (cause ||= e.message));
  try {
    await r.connect();
    await r.ping();
  } catch (e) {
    return `Redis ${redactServiceUrl(REDIS_URL)} is not reachable (${cause || (e as Error).message})`;
  } finally {
    r.disconnect();
  }
  return null;
}

async function dropServices(schema: string, prefix: string): Promise<void> {
  const c = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3_000 });
  try {
    await c.connect();
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } catch (e) {
    console.log(`  (could not drop schema ${schema}: ${(e as Error).message})`);
  } finally {
    await c.end().catch(() => undefined);
  }
  const r = new Redis(REDIS_URL, { maxRetriesPerRequest: 1, retryStrategy: () => null });
  r.on('error', () => undefined);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await r.del(...keys);
    } while (cursor !== '0');
  } catch (e) {
    console.log(`  (could not delete Redis keys ${prefix}:*: ${(e as Error).message})`);
  } finally {
    r.disconnect();
  }
}

function writeProject(dir: string): void {
  const words = Array.from({ length: DELTAS }, (_, i) => `w${i}`).join(' ');
  const files: Record<string, string> = {
    // a run whose time goes to its model (I/O): two 250 ms turns with a tool call between them
    '.runtrail/agents/waiter.md':
      '---\nname: waiter\ndescription: waits on its model\ngoal: wait\nmodel: script:waiter.turns.json\ntools: [list_artifacts]\n---\nYou wait.\n',
    '.runtrail/agents/waiter.turns.json': JSON.stringify([
      { delayMs: TURN_MS, toolCalls: [{ name: 'list_artifacts', args: {} }] },
      { delayMs: TURN_MS, text: 'done waiting' },
    ]),
    // a streaming answer: the client is connected during the first delay; then a delta every 20 ms
    '.runtrail/agents/streamer.md':
      '---\nname: streamer\ndescription: streams an answer\ngoal: stream\nmodel: script:streamer.turns.json\ntools: []\n---\nYou stream.\n',
    '.runtrail/agents/streamer.turns.json': JSON.stringify([{ delayMs: 300, chunkDelayMs: DELTA_MS, text: words }]),
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
}

/** The environment of every node: nothing of this shell's Runtrail or OpenTelemetry settings. */
function baseEnv(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !/^(RUNTRAIL_|OTEL_)/.test(k)) env[k] = v;
  env.HOME = home; // no ~/.runtrail definitions of whoever runs the bench
  return env;
}

export async function run(): Promise<void> {
  const why = await unreachable();
  if (why) {
    console.log(`scale-out: skipped: ${why}`);
    return;
  }
  const root = mkdtempSync(join(tmpdir(), 'runtrail-bench-scale-'));
  const project = join(root, 'project');
  const home = join(root, 'home');
  mkdirSync(home);
  writeProject(project);
  const tag = `${process.pid.toString(36)}${Date.now().toString(36)}`;
  const schema = `bench_scale_${tag}`;
  const prefix = `bench-scale-${tag}`;
  const cleanup = async (): Promise<void> => {
    await dropServices(schema, prefix);
    rmSync(root, { recursive: true, force: true });
  };
  const nodes = new Nodes(project, baseEnv(home), cleanup);
  try {
    console.log(
      `runs that wait on I/O (two ${TURN_MS} ms model turns and a tool call), closed loop of one client per run slot, ${RUNS_PER_CLIENT} runs each after ${WARMUP_PER_CLIENT} of warm-up:`,
    );

    // one process, at the capacity of one worker and of four
    const single: Record<number, LoadFigures> = {};
    let singleLat: Delivery = { total: [], toRedis: [], fromRedis: [], usage: '' };
    for (const c of [CONCURRENCY, 4 * CONCURRENCY]) {
      const dataDir = join(root, `single-${c}`);
      const s = await nodes.start(`serve`, ['serve', '--port', '0', '--concurrency', String(c), '--data-dir', dataDir]);
      single[c] = await measureLoad(`one process, --concurrency ${c}`, nodes, s.url!, c);
      if (c === 4 * CONCURRENCY) singleLat = await delivery(nodes, s.url!, s.url!, dataDir);
      await nodes.stop(s);
    }

    // several nodes: one API node, then 1, 2 and 4 workers of --concurrency 4
    const dataDir = join(root, 'shared');
    const cluster = {
      RUNTRAIL_REDIS_URL: REDIS_URL,
      RUNTRAIL_DATABASE_URL: DATABASE_URL,
      RUNTRAIL_DATABASE_SCHEMA: schema,
      RUNTRAIL_REDIS_PREFIX: prefix,
      RUNTRAIL_DATA_DIR: dataDir,
    };
    const api = await nodes.start('api', ['serve', '--role', 'api', '--port', '0'], cluster);
    const worker = (i: number) => nodes.start(`worker${i}`, ['worker', '--concurrency', String(CONCURRENCY), '--drain-s', '1'], cluster);
    const byWorkers: Record<number, LoadFigures> = {};
    let started = 0;
    for (const w of [1, 2, 4]) {
      const more: Array<Promise<Node>> = [];
      while (started < w) more.push(worker(++started));
      await Promise.all(more);
      byWorkers[w] = await measureLoad(`1 API node + ${w} worker${w > 1 ? 's' : ''} × ${CONCURRENCY}`, nodes, api.url!, w * CONCURRENCY);
    }
    const ratio = byWorkers[4].runsPerS / byWorkers[1].runsPerS;
    console.log(
      `  4 workers / 1 worker: ${ratio.toFixed(2)}× the runs/s (target ≥ 3.5×: ${ratio >= 3.5 ? 'met' : 'MISSED'}); 2 workers / 1: ${(byWorkers[2].runsPerS / byWorkers[1].runsPerS).toFixed(2)}×`,
    );
    console.log(
      `  against one process at the same capacity: 1 worker ${(byWorkers[1].runsPerS / single[CONCURRENCY].runsPerS).toFixed(2)}× its runs/s, 4 workers ${(byWorkers[4].runsPerS / single[4 * CONCURRENCY].runsPerS).toFixed(2)}×; first frame p50 ${(pct(byWorkers[1].firstFrame, 50) / pct(single[CONCURRENCY].firstFrame, 50)).toFixed(2)}× / ${(pct(byWorkers[4].firstFrame, 50) / pct(single[4 * CONCURRENCY].firstFrame, 50)).toFixed(2)}×`,
    );

    // a second API node: runs created on A, streamed from B
    const apiB = await nodes.start('apiB', ['serve', '--role', 'api', '--port', '0'], cluster);
    const d = await delivery(nodes, api.url!, apiB.url!, dataDir, { url: REDIS_URL, prefix });
    const lat = d.total;
    const p99 = pct(lat, 99);
    console.log(
      `delivery latency, event published → frame at an SSE client (${STREAM_ROUNDS} rounds of ${STREAM_RUNS} runs at once, ${DELTAS} deltas each ${DELTA_MS} ms apart):`,
    );
    const one = singleLat.total;
    console.log(
      `  one process (bus → SSE):                         p50 ${ms(pct(one, 50))}, p99 ${ms(pct(one, 99))} (${one.length} frames; ${singleLat.usage})`,
    );
    console.log(
      `  cross-node (worker → PostgreSQL → Redis → API B): p50 ${ms(pct(lat, 50))}, p99 ${ms(p99)}, max ${ms(Math.max(...lat))} (${lat.length} frames; ${d.usage}) → p99 ${(p99 / pct(one, 99)).toFixed(2)}× one process's (target p99 ≤ 20 ms: ${p99 <= 20 ? 'met' : 'MISSED'})`,
    );
    console.log(
      `    where it goes: publish → on the Redis Stream (batch wait, PostgreSQL commit, XADD) p50 ${ms(pct(d.toRedis, 50))}, p99 ${ms(pct(d.toRedis, 99))}; Redis → frame at the client on B p50 ${ms(pct(d.fromRedis, 50))}, p99 ${ms(pct(d.fromRedis, 99))}`,
    );
  } finally {
    await nodes.stopAll();
    nodes.detach();
    await cleanup();
  }
}
