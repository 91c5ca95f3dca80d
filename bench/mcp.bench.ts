/**
 * MCP figures, against the reference server-everything started from node_modules:
 *  1. 1,000 `echo` calls through a Runtrail run (script model: 10 turns of 100 calls, which the loop
 *     runs side by side as the tool is read-only) against the same 10 batches of 100 concurrent calls
 *     through a bare SDK `Client` on the same server (program over stdio; the very same server
 *     instance over Streamable HTTP): time per call and the ratio (target ≤ 1.15×);
 *     Where the time goes: the same calls straight to the MCP tool's handler (Runtrail's MCP layer:
 *     its transport, result conversion), and through the ToolExecutor with both tool events appended
 *     to an events.jsonl (what every tool call costs in Runtrail, MCP or not);
 *  2. 200 calls one per model turn (each call its own turn) against 200 sequential bare calls;
 *  3. first-call latency including the server's spawn: a run's create → first echo result with a cold
 *     pool, against a bare Client's spawn + initialize + first call.
 * After warm-up runs on both sides, rounds alternate Runtrail and bare so load from other processes
 * hits both alike; medians are shown.
 * Beside the ratio, the CPU each side's main thread and the server's main thread spend per call in the
 * same windows (/proc/<pid>/schedstat, nanoseconds): the calls of a turn overlap with the server's work,
 * so a side can go no faster than the busier of the two main threads.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { AgentEvent } from '../src/events/agent-event.js';
import { AgentEventBus } from '../src/events/agent-event-bus.js';
import { fetchOnOwnSignal } from '../src/mcp/fetch-on-own-signal.js';
import { parseServerDefinition } from '../src/mcp/mcp-config.js';
import { McpToolSource } from '../src/mcp/mcp-tool-source.js';
import { EventStore } from '../src/runtime/storage/event-store.js';
import { ToolExecutor } from '../src/runtime/loop/tool-executor.js';
import { ExtensionRegistry } from '../src/extensions/extension-registry.js';
import { McpServerPool } from '../src/mcp/mcp-server-pool.js';
import { runtrailPackageRoot } from '../src/runtime/package-root.js';
import { RunService } from '../src/runtime/service/run-service.js';

const EVERYTHING = join(runtrailPackageRoot(), 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const CALLS = 1_000;
const BATCH = 100;
const SEQUENTIAL = 200;
const ROUNDS = 7;
/** Runs (and bare batches) before measuring: the JIT needs a few thousand calls on both sides. */
const WARMUP = 3;
const COLD = 5;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** CPU time of a process's main thread so far, in µs (its first schedstat field is in ns); NaN where unreadable. */
function mainThreadCpuUs(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    return Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return NaN;
  }
}

/** The same two clocks read at the start and the end of a window. */
interface CpuWindow {
  own: number;
  server: number;
}

function cpuNow(serverPid: number | undefined): CpuWindow {
  return { own: mainThreadCpuUs(process.pid), server: mainThreadCpuUs(serverPid) };
}

function cpuSpent(from: CpuWindow, to: CpuWindow): CpuWindow {
  return { own: to.own - from.own, server: to.server - from.server };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** A run's tool calls as the bus sees them, timed with performance.now() (event ts are whole ms). */
interface Timing {
  created: number;
  firstStart: number;
  firstResult: number;
  lastResult: number;
  results: number;
  failed: number;
  /** Main-thread CPU from the first tool start to the last result: Runtrail's and the server's. */
  cpuAtStart?: CpuWindow;
  cpu?: CpuWindow;
}

class Bench {
  readonly pool = new McpServerPool({ killGraceMs: 1_000 });
  private readonly timings = new Map<string, Timing>();
  private service!: RunService;

  /** `serverPid`: the server's, for the CPU figures, when it was started apart (HTTP); else the pool's stdio server. */
  constructor(
    readonly dir: string,
    private serverPid?: number,
  ) {}

  /** Looked up once, outside the event path: the pool keeps the one server for all the bench's runs. */
  private poolServerPid(): number | undefined {
    this.serverPid ??= this.pool.list().find((e) => e.server === 'everything')?.pid;
    return this.serverPid;
  }

  async init(mcp: Record<string, unknown>): Promise<void> {
    const files: Record<string, string> = {
      '.runtrail/mcp.json': JSON.stringify({ mcpServers: { everything: mcp } }),
      '.runtrail/agents/echoer.md':
        '---\nname: echoer\ndescription: echoes through MCP\ntools: ["mcp__everything__echo"]\nmcpServers: [everything]\nlimits: { max_iterations: 200, max_tool_calls: 1000 }\n---\nEcho.\n',
      'batches.json': JSON.stringify([
        ...Array.from({ length: CALLS / BATCH }, (_, t) => ({
          toolCalls: Array.from({ length: BATCH }, (_, i) => ({ name: 'mcp__everything__echo', args: { message: `m${t * BATCH + i}` } })),
        })),
        { text: 'done' },
      ]),
      'one-by-one.json': JSON.stringify([
        ...Array.from({ length: SEQUENTIAL - 1 }, (_, i) => ({ toolCalls: [{ name: 'mcp__everything__echo', args: { message: `s${i}` } }] })),
        { text: 'done' },
      ]),
      'first.json': JSON.stringify([{ toolCalls: [{ name: 'mcp__everything__echo', args: { message: 'first' } }] }, { text: 'done' }]),
    };
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(join(this.dir, rel, '..'), { recursive: true });
      writeFileSync(join(this.dir, rel), text);
    }
    const registry = await ExtensionRegistry.load({
      projectDir: this.dir,
      builtins: [],
      builtinSkillsDir: join(this.dir, 'none'),
      env: process.env,
      mcpPool: this.pool,
    });
    const errors = registry.problems.filter((p) => p.level === 'error');
    if (errors.length) throw new Error(`bench project: ${JSON.stringify(errors)}`);
    this.service = new RunService({
      dataDir: join(this.dir, 'data'),
      agentSource: registry,
      skillDirs: registry.skillDirs,
      inputRoots: 'any',
      env: {},
      cwd: this.dir,
      processRegistry: null,
      observers: [
        ({ runId, bus }) => {
          const t: Timing = { created: performance.now(), firstStart: 0, firstResult: 0, lastResult: 0, results: 0, failed: 0 };
          this.timings.set(runId, t);
          bus.subscribe((ev: AgentEvent) => {
            if (ev.stream !== 'tool') return;
            const now = performance.now();
            if (ev.data.phase === 'start' && !t.firstStart) {
              t.firstStart = now;
              t.cpuAtStart = cpuNow(this.serverPid);
            }
            if (ev.data.phase === 'result') {
              if (!t.firstResult) t.firstResult = now;
              t.lastResult = now;
              t.results++;
              if (ev.data.isError) t.failed++;
              if (t.results === CALLS && t.cpuAtStart) t.cpu = cpuSpent(t.cpuAtStart, cpuNow(this.serverPid));
            }
          });
        },
      ],
    });
  }

  /** A run of `script`; returns its timing, with the wall time from create to its end. */
  async run(script: string): Promise<Timing & { wall: number }> {
    const t0 = performance.now();
    const created = await this.service.create({ plugin: 'echoer', model: `script:${script}` });
    const st = await this.service.wait(created.run_id);
    const wall = performance.now() - t0;
    this.poolServerPid(); // the first run started it; the runs after it read its CPU
    if (st.status !== 'completed') throw new Error(`bench run ${created.run_id} ${st.status}: ${st.diagnosis?.summary ?? ''}`);
    const t = this.timings.get(created.run_id)!;
    this.timings.delete(created.run_id);
    return { ...t, created: t0, wall };
  }

  async close(): Promise<void> {
    await this.service.close();
    await this.pool.shutdown();
  }
}

async function bareBatches(c: Client, cpu?: CpuWindow[], serverPid?: number): Promise<number> {
  const from = cpuNow(serverPid);
  const t = performance.now();
  for (let b = 0; b < CALLS / BATCH; b++)
    await Promise.all(Array.from({ length: BATCH }, (_, i) => c.callTool({ name: 'echo', arguments: { message: `m${b * BATCH + i}` } })));
  const ms = performance.now() - t;
  cpu?.push(cpuSpent(from, cpuNow(serverPid)));
  return ms;
}

async function bareSequential(c: Client): Promise<number> {
  const t = performance.now();
  for (let i = 0; i < SEQUENTIAL; i++) await c.callTool({ name: 'echo', arguments: { message: `s${i}` } });
  return performance.now() - t;
}

async function connectBare(make: () => Transport): Promise<Client> {
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(make());
  return c;
}

/** 10 batches of 100 concurrent calls of `call`; ms. */
async function batches(call: (i: number) => Promise<unknown>): Promise<number> {
  const t = performance.now();
  for (let b = 0; b < CALLS / BATCH; b++) await Promise.all(Array.from({ length: BATCH }, (_, i) => call(b * BATCH + i)));
  return performance.now() - t;
}

/** The MCP tool's own handler, and the ToolExecutor with events on disk, against the bare Client. */
async function layers(label: string, def: Record<string, unknown>, bare: Client, dir: string): Promise<void> {
  const pool = new McpServerPool({ killGraceMs: 1_000 });
  const cfg = parseServerDefinition('everything', def, { file: 'bench', at: 'mcpServers', env: process.env, baseDir: dir }, []);
  if (!cfg) throw new Error('bench definition');
  const source = new McpToolSource({ server: cfg, grants: ['mcp__everything__echo'], pool });
  const [echo] = await source.open(new AbortController().signal);
  const bus = new AgentEventBus({ runId: 'run_bench' });
  const store = new EventStore(join(dir, 'events.jsonl'));
  bus.subscribe((e) => store.append(e));
  const executor = new ToolExecutor({ tools: [], allowedTools: source.grants, sources: [source], publish: (st, d) => void bus.publish(st, d) });
  await executor.openSources();
  const viaBare = (i: number) => bare.callTool({ name: 'echo', arguments: { message: `m${i}` } });
  // as the executor hands it: a signal of its own per call (for cancellation) and the call id
  const viaHandler = (i: number) => echo.execute({ message: `m${i}` }, { signal: new AbortController().signal, toolCallId: `c${i}` });
  const viaExecutor = (i: number) => executor.execute({ id: `c${i}`, name: 'mcp__everything__echo', args: { message: `m${i}` } });
  const sides = [viaBare, viaHandler, viaExecutor];
  for (let w = 0; w < WARMUP + 2; w++) for (const f of sides) await batches(f);
  const ms: number[][] = [[], [], []];
  const cpu: number[][] = [[], [], []];
  for (let r = 0; r < ROUNDS; r++) {
    // rotate the order each round
    for (let k = 0; k < sides.length; k++) {
      const j = (k + r) % sides.length;
      const from = mainThreadCpuUs(process.pid);
      ms[j].push(await batches(sides[j]));
      cpu[j].push(mainThreadCpuUs(process.pid) - from);
    }
  }
  store.close();
  await source.close();
  await pool.shutdown();
  const [b, h, x] = ms.map((m) => (median(m) * 1000) / CALLS);
  console.log(
    `${label}: the same 1,000 calls, where the time goes: bare SDK Client ${b.toFixed(1)} µs/call; the MCP tool handler (Runtrail's MCP layer) ${h.toFixed(1)} µs/call → ${(h / b).toFixed(2)}×; through the ToolExecutor with both tool events in events.jsonl ${x.toFixed(1)} µs/call → ${(x / b).toFixed(2)}×`,
  );
  const [cb, ch, cx] = cpu.map((c) => median(c) / CALLS);
  console.log(
    `  main-thread CPU per call (median): bare SDK Client ${cb.toFixed(1)} µs, the MCP tool handler ${ch.toFixed(1)} µs, through the ToolExecutor with both events ${cx.toFixed(1)} µs`,
  );
}

async function throughput(label: string, bench: Bench, bare: Client, bareServerPid: number | undefined): Promise<void> {
  for (let i = 0; i < WARMUP; i++) {
    await bench.run('batches.json');
    await bench.run('one-by-one.json');
    await bareBatches(bare);
    await bareSequential(bare);
  }
  const rt: number[] = [];
  const bb: number[] = [];
  const rs: number[] = [];
  const bs: number[] = [];
  const rtCpu: CpuWindow[] = [];
  const bbCpu: CpuWindow[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const runFirst = r % 2 === 0;
    if (!runFirst) bb.push(await bareBatches(bare, bbCpu, bareServerPid));
    const run = await bench.run('batches.json');
    if (run.results !== CALLS || run.failed) throw new Error(`bench run: ${run.results} results, ${run.failed} failed`);
    rt.push(run.lastResult - run.firstStart);
    if (run.cpu) rtCpu.push(run.cpu);
    if (runFirst) bb.push(await bareBatches(bare, bbCpu, bareServerPid));
    if (!runFirst) bs.push(await bareSequential(bare));
    const seq = await bench.run('one-by-one.json');
    if (seq.results !== SEQUENTIAL - 1 || seq.failed) throw new Error(`bench sequential run: ${seq.results} results`);
    rs.push(seq.lastResult - seq.firstStart);
    if (runFirst) bs.push(await bareSequential(bare));
  }
  const perCall = (ms: number, n: number) => (ms * 1000) / n;
  const r = perCall(median(rt), CALLS);
  const b = perCall(median(bb), CALLS);
  console.log(
    `${label}: ${CALLS.toLocaleString('en')} echo calls in ${CALLS / BATCH} turns of ${BATCH} (${ROUNDS} rounds, median): Runtrail run ${r.toFixed(1)} µs/call, bare SDK Client ${b.toFixed(1)} µs/call → ${(r / b).toFixed(2)}× (target ≤ 1.15×)`,
  );
  const cpuPerCall = (ws: CpuWindow[], k: keyof CpuWindow) => median(ws.map((w) => w[k])) / CALLS;
  const fmt = (us: number) => (Number.isNaN(us) ? 'n/a' : `${us.toFixed(1)}`);
  console.log(
    `  main-thread CPU per call in those windows (median): Runtrail ${fmt(cpuPerCall(rtCpu, 'own'))} µs with its server at ${fmt(cpuPerCall(rtCpu, 'server'))} µs; ` +
      `bare Client ${fmt(cpuPerCall(bbCpu, 'own'))} µs with its server at ${fmt(cpuPerCall(bbCpu, 'server'))} µs (neither side can go faster than its busier thread)`,
  );
  const rq = perCall(median(rs), SEQUENTIAL - 1);
  const bq = perCall(median(bs), SEQUENTIAL);
  console.log(
    `  one call per model turn (${SEQUENTIAL - 1} turns): Runtrail ${rq.toFixed(1)} µs/call (a script model turn, the call, its events), bare sequential ${bq.toFixed(1)} µs/call → ${(rq / bq).toFixed(2)}×`,
  );
}

async function firstCall(label: string, makeBench: () => Promise<Bench>, bareFirst: () => Promise<number>): Promise<void> {
  const rt: number[] = [];
  const bt: number[] = [];
  for (let i = 0; i < COLD; i++) {
    const bench = await makeBench(); // a cold pool: the run spawns the server
    const run = await bench.run('first.json');
    rt.push(run.firstResult - run.created);
    await bench.close();
    bt.push(await bareFirst());
  }
  console.log(
    `${label}: first call including the server's start (${COLD} cold starts, median): Runtrail run create → first echo result ${median(rt).toFixed(1)} ms, bare Client spawn + initialize + call ${median(bt).toFixed(1)} ms → +${(median(rt) - median(bt)).toFixed(1)} ms (${(median(rt) / median(bt)).toFixed(2)}×)`,
  );
}

export async function run(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'runtrail-bench-mcp-'));
  const dirs: string[] = [];
  const newDir = () => {
    const d = join(root, `p${dirs.length}`);
    mkdirSync(d);
    dirs.push(d);
    return d;
  };
  const stdioDef = { command: process.execPath, args: [EVERYTHING, 'stdio'] };
  const stdioBare = () => new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' });
  try {
    // stdio: the same server program (a stdio server serves one client)
    const bench = new Bench(newDir());
    await bench.init(stdioDef);
    const bare = await connectBare(stdioBare);
    // the bare Client's own server: its transport's child
    await throughput('stdio', bench, bare, (bare.transport as StdioClientTransport | undefined)?.pid ?? undefined);
    await layers('stdio', stdioDef, bare, bench.dir);
    await bare.close();
    await bench.close();
    await firstCall(
      'stdio',
      async () => {
        const b = new Bench(newDir());
        await b.init(stdioDef);
        return b;
      },
      async () => {
        const t = performance.now();
        const c = await connectBare(stdioBare);
        await c.callTool({ name: 'echo', arguments: { message: 'first' } });
        const ms = performance.now() - t;
        await c.close();
        return ms;
      },
    );

    // Streamable HTTP: one server instance, a session for each client
    const port = await freePort();
    const srv = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
    // a bench ended early (Ctrl-C, a closed pipe) must not leave the server behind
    const killServer = () => void srv.kill('SIGKILL');
    process.once('exit', killServer);
    let err = '';
    srv.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
    for (let i = 0; i < 200 && !/listening on port/i.test(err); i++) await new Promise((r) => setTimeout(r, 50));
    try {
      const url = `http://127.0.0.1:${port}/mcp`;
      const hb = new Bench(newDir(), srv.pid);
      await hb.init({ type: 'http', url });
      // the bare Client fetches as Runtrail's connection does, each request on a signal of its own: with
      // the SDK's default fetch every call leaves an abort listener on the transport's one signal
      const hbare = await connectBare(() => new StreamableHTTPClientTransport(new URL(url), { fetch: fetchOnOwnSignal }));
      await throughput('streamable http (the same server instance)', hb, hbare, srv.pid);
      await layers('streamable http', { type: 'http', url }, hbare, hb.dir);
      await hbare.close();
      await hb.close();
    } finally {
      killServer();
      process.off('exit', killServer);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
