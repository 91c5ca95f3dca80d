/**
 * What tracing costs, as ratios measured in one process against a loopback OTLP/HTTP
 * receiver (it reads and drops each export). Three ways each, rounds interleaved (each round starting
 * with another way), best (SSE, tool calls) or median (engine runs) of the rounds:
 *   none   no telemetry code at all (the bench before tracing)
 *   off    startTelemetry() with no endpoint: what every run pays when tracing is not configured
 *   on     OTLP export on: the OpenTelemetry observer subscribed to the run's bus, batches POSTed
 * Wall time is printed, but the ratios are of this process's CPU time (server, client and collector all
 * live here), which other load on a shared machine disturbs far less than the clock.
 * SSE: 200,000 deltas through bus → bridge → SseAdapter → loopback HTTP, with a model call every
 * 1,000 deltas and a tool call every 2,000 (spans to export). Engine: offline feedbacklens runs through
 * RunService, and no-op tool calls through the ToolExecutor (one span each).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentEventBus } from '../src/events/agent-event-bus.js';
import { createEngineBridge } from '../src/events/engine-bridge.js';
import { runTraceContext } from '../src/events/trace-context.js';
import { SseAdapter } from '../src/channels/sse-adapter.js';
import { createFeedbackLensPlugin } from '../src/plugins/feedbacklens/feedbacklens-plugin.js';
import { RunService } from '../src/runtime/service/run-service.js';
import type { RunObserver } from '../src/runtime/run-service-types.js';
import { ToolExecutor } from '../src/runtime/loop/tool-executor.js';
import { startTelemetry, type Telemetry } from '../src/telemetry/otel-telemetry.js';
import type { AnyToolDefinition } from '../src/tools/tool.js';

type Mode = 'none' | 'off' | 'on';
const MODES: Mode[] = ['none', 'off', 'on'];
const N = 200_000;
const BATCH = 1_000;
const ROUNDS = 10;
const RUNS = 30;
const ROWS = 5_000;
const CALLS = 20_000;

/** Each round starts with another mode, so none pays for the garbage another left more often than the rest. */
const rotated = (round: number): Mode[] => MODES.map((_, i) => MODES[(i + round) % MODES.length]);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** A collector that takes every export and drops it. */
async function receiver(): Promise<{ url: string; bytes: () => number; close(): Promise<void> }> {
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (c: Buffer) => (bytes += c.length));
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bytes: () => bytes, close: () => new Promise((r) => server.close(() => r())) };
}

/** The observers a RunService gets in each mode (the same call serve and run make). */
async function observersFor(mode: Mode, endpoint: string): Promise<{ observers: RunObserver[]; telemetry: Telemetry | null }> {
  if (mode === 'none') return { observers: [], telemetry: null };
  const telemetry = await startTelemetry({ env: mode === 'on' ? { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint } : {} });
  return { observers: telemetry ? [telemetry.observer] : [], telemetry };
}

const TOKENS = ['The', ' quick', ' brown', ' fox', ' jumps', ' over', ' the', ' lazy', ' dog', '.', ' 世界', '\n'];
const drained = (res: ServerResponse) => (res.writableNeedDrain ? new Promise<void>((r) => res.once('drain', () => r())) : Promise.resolve());

/** deltas/s (wall) and the CPU ms this process spent (server and client are both here, the collector too). */
async function sseOnce(observers: RunObserver[]): Promise<{ eps: number; cpuMs: number }> {
  const handler = async (res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const runId = 'run_bench';
    const trace = runTraceContext();
    const bus = new AgentEventBus({ runId });
    for (const o of observers) o({ runId, plugin: 'bench', tenantId: null, conversationId: runId, claw: 'web', trace, bus });
    const bridge = createEngineBridge({ traceId: trace.traceId });
    const sse = new SseAdapter(null, { onFrame: (f) => res.write(f) });
    bus.subscribe((ev) => {
      const e = bridge.translate(ev);
      if (e) sse.emit(e);
    });
    bus.publish('run', { type: 'run.created', runId, plugin: 'bench', goal: 'g', conversationId: runId });
    let turn = 0;
    for (let i = 0; i < N; i += BATCH) {
      turn++;
      bus.publish('model', { phase: 'start', turn, attempt: 0, provider: 'bench', model: 'm' });
      for (let j = i; j < i + BATCH; j++) bus.publish('assistant', { text: '', delta: TOKENS[j % TOKENS.length] });
      bus.publish('model', {
        phase: 'end',
        turn,
        attempt: 0,
        provider: 'bench',
        model: 'm',
        finishReason: 'tool-calls',
        tokens: { input: 100, output: 50, cached_input: 0, cache_write: 0, reasoning: 0 },
        costUsd: null,
        startedAt: 0,
        latencyMs: 1,
        firstTokenMs: 1,
      });
      if (turn % 2 === 0) {
        bus.publish('tool', { phase: 'start', name: 'lookup', toolCallId: `c${turn}`, args: { q: 'x' } });
        bus.publish('tool', { phase: 'result', name: 'lookup', toolCallId: `c${turn}`, isError: false, result: 'ok' });
      }
      await drained(res);
    }
    bus.publish('run', { type: 'run.completed', status: 'completed', messageId: runId, conversationId: runId, content: '', usedSkills: [], usedMcp: [] });
    res.end();
  };
  const server = createServer((_req, res) => void handler(res).catch(() => res.destroy()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  try {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const frames = await new Promise<number>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path: '/', agent: false }, (res: IncomingMessage) => {
        let n = 0;
        let prev = false;
        res.on('data', (c: Buffer) => {
          for (let i = 0; i < c.length; i++) {
            const nl = c[i] === 10;
            if (nl && prev) n++;
            prev = nl;
          }
        });
        res.on('end', () => resolve(n));
        res.on('error', reject);
      }).on('error', reject);
    });
    const secs = Number(process.hrtime.bigint() - t0) / 1e9;
    const cpu = process.cpuUsage(c0);
    if (frames < N) throw new Error(`sse: the client saw ${frames} frames`);
    return { eps: N / secs, cpuMs: (cpu.user + cpu.system) / 1000 };
  } finally {
    await new Promise<void>((r) => server.close(() => r()));
  }
}

async function benchSse(endpoint: string): Promise<void> {
  const best: Record<Mode, number> = { none: 0, off: 0, on: 0 };
  const cpu: Record<Mode, number[]> = { none: [], off: [], on: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of rotated(round)) {
      const { observers, telemetry } = await observersFor(mode, endpoint);
      const r = await sseOnce(observers);
      best[mode] = Math.max(best[mode], r.eps);
      cpu[mode].push(r.cpuMs);
      await telemetry?.shutdown();
    }
  }
  const f = (v: number) => Math.round(v).toLocaleString('en-US');
  const c = { none: median(cpu.none), off: median(cpu.off), on: median(cpu.on) };
  console.log(`sse, ${N.toLocaleString('en-US')} deltas (+${N / BATCH} model calls, ${N / BATCH / 2} tool calls), ${ROUNDS} rounds`);
  console.log(
    `  wall, best: none ${f(best.none)}/s, off ${f(best.off)}/s, on ${f(best.on)}/s → on/off ${(best.on / best.off).toFixed(3)}x, off/none ${(best.off / best.none).toFixed(3)}x the throughput`,
  );
  console.log(`  CPU, median: none ${c.none.toFixed(0)} ms, off ${c.off.toFixed(0)} ms, on ${c.on.toFixed(0)} ms`);
  console.log(`  sse export on / off   = ${(c.on / c.off).toFixed(3)}x the CPU  (target <= 1.05x: at most 5% slower)`);
  console.log(`  sse export off / none = ${(c.off / c.none).toFixed(3)}x the CPU  (target: no measurable cost)`);
}

function csvOf(rows: number): string {
  const texts = [
    'Sync keeps failing and I lose edits',
    'Export to PDF cuts the last page',
    'Pricing is too expensive for a small team',
    'Onboarding was smooth, templates saved hours',
    'Search is slow',
    'The app crashes on large files',
  ];
  const lines = ['feedback_id,date,rating,channel,text'];
  for (let i = 1; i <= rows; i++)
    lines.push(`F${i},2026-06-${String(1 + (i % 28)).padStart(2, '0')},${1 + (i % 5)},email,"${texts[i % texts.length]} (#${i % 97})"`);
  return `${lines.join('\n')}\n`;
}

async function benchEngine(endpoint: string, dir: string): Promise<void> {
  const csv = join(dir, 'feedback.csv');
  writeFileSync(csv, csvOf(ROWS));
  const wall: Record<Mode, number[]> = { none: [], off: [], on: [] };
  const cpuRun: Record<Mode, number[]> = { none: [], off: [], on: [] };
  const services: Partial<Record<Mode, { service: RunService; telemetry: Telemetry | null }>> = {};
  for (const mode of MODES) {
    const { observers, telemetry } = await observersFor(mode, endpoint);
    services[mode] = {
      service: new RunService({
        dataDir: join(dir, `data-${mode}`),
        agents: [createFeedbackLensPlugin()],
        inputRoots: 'any',
        concurrency: 1,
        env: {},
        observers,
        processRegistry: null,
      }),
      telemetry,
    };
  }
  // warm-up, then the runs of the three modes interleaved
  for (const mode of MODES)
    await services[mode]!.service.wait((await services[mode]!.service.create({ plugin: 'feedbacklens', input: { csv_path: csv } })).run_id);
  for (let i = 0; i < RUNS; i++) {
    for (const mode of rotated(i)) {
      const s = services[mode]!.service;
      const t = performance.now();
      const c0 = process.cpuUsage();
      const st = await s.wait((await s.create({ plugin: 'feedbacklens', input: { csv_path: csv } })).run_id);
      const cu = process.cpuUsage(c0);
      wall[mode].push(performance.now() - t);
      cpuRun[mode].push((cu.user + cu.system) / 1000);
      if (st.status !== 'completed') throw new Error(`engine: a ${mode} run ended ${st.status}`);
    }
  }
  for (const mode of MODES) {
    await services[mode]!.service.close();
    await services[mode]!.telemetry?.shutdown();
  }
  const m = { none: median(wall.none), off: median(wall.off), on: median(wall.on) };
  const mc = { none: median(cpuRun.none), off: median(cpuRun.off), on: median(cpuRun.on) };
  console.log(`engine, offline feedbacklens on ${ROWS.toLocaleString('en-US')} rows, ${RUNS} runs each`);
  console.log(
    `  wall, median ms/run: none ${m.none.toFixed(1)}, off ${m.off.toFixed(1)}, on ${m.on.toFixed(1)} → on/off ${(m.on / m.off).toFixed(3)}x, off/none ${(m.off / m.none).toFixed(3)}x the time`,
  );
  const bc = { none: Math.min(...cpuRun.none), off: Math.min(...cpuRun.off), on: Math.min(...cpuRun.on) };
  console.log(
    `  CPU ms/run, median: none ${mc.none.toFixed(1)}, off ${mc.off.toFixed(1)}, on ${mc.on.toFixed(1)}; best: none ${bc.none.toFixed(1)}, off ${bc.off.toFixed(1)}, on ${bc.on.toFixed(1)}`,
  );
  console.log(`  engine runs, export on / off   = ${(mc.on / mc.off).toFixed(3)}x the CPU (median), ${(bc.on / bc.off).toFixed(3)}x (best)  (target <= 1.05x)`);
  console.log(
    `  engine runs, export off / none = ${(mc.off / mc.none).toFixed(3)}x the CPU (median), ${(bc.off / bc.none).toFixed(3)}x (best)  (target: no measurable cost)`,
  );

  // the tool-call path: one span per call
  const noop: AnyToolDefinition = {
    name: 'noop',
    description: 'does nothing',
    parameters: z.object({ n: z.number() }),
    execute: async () => ({ ok: true, content: 'ok' }),
  };
  const perCall: Record<Mode, number[]> = { none: [], off: [], on: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of rotated(round)) {
      const { observers, telemetry } = await observersFor(mode, endpoint);
      const runId = `run_tools_${mode}`;
      const bus = new AgentEventBus({ runId });
      for (const o of observers) o({ runId, plugin: 'bench', tenantId: null, conversationId: runId, claw: 'cli', trace: runTraceContext(), bus });
      bus.publish('run', { type: 'run.created', runId, plugin: 'bench', goal: 'g', conversationId: runId });
      const executor = new ToolExecutor({ tools: [noop], allowedTools: ['noop'], publish: (s, d) => void bus.publish(s, d) });
      for (let i = 0; i < 2000; i++) await executor.execute({ id: `w${i}`, name: 'noop', args: { n: i } });
      const t = performance.now();
      for (let i = 0; i < CALLS; i++) await executor.execute({ id: `c${i}`, name: 'noop', args: { n: i } });
      perCall[mode].push(((performance.now() - t) * 1000) / CALLS);
      bus.publish('run', { type: 'run.completed', status: 'completed', messageId: runId, conversationId: runId, content: '', usedSkills: [], usedMcp: [] });
      await telemetry?.shutdown();
    }
  }
  const c = { none: Math.min(...perCall.none), off: Math.min(...perCall.off), on: Math.min(...perCall.on) };
  console.log(
    `engine, ${CALLS.toLocaleString('en-US')} no-op tool calls through the ToolExecutor, best of ${ROUNDS}, µs/call: none ${c.none.toFixed(2)}, off ${c.off.toFixed(2)}, on ${c.on.toFixed(2)} (one span each)`,
  );
  console.log(`  tool calls, export on / off  = ${(c.on / c.off).toFixed(3)}x the time`);
  console.log(`  tool calls, export off / none = ${(c.off / c.none).toFixed(3)}x the time`);
}

export async function run(): Promise<void> {
  const collector = await receiver();
  const dir = mkdtempSync(join(tmpdir(), 'runtrail-bench-otel-'));
  try {
    await benchSse(collector.url);
    await benchEngine(collector.url, dir);
    console.log(`(the loopback collector received ${(collector.bytes() / 1e6).toFixed(1)} MB of OTLP/JSON)`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await collector.close();
  }
}
