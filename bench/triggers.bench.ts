/**
 * `npm run bench -- triggers`:
 *  1. fire-time accuracy: 100 schedules of one cron (every 5 s, on the second) fire together, three
 *     times; how late each fire was handled (its claim) and each run admitted (its created_at),
 *     p50/p99 ms. Baselines in the same process: 100 timers set for the same instant (what Node's
 *     timers give), and 100 runs created by one timer at that instant (what admitting 100 runs at
 *     once costs without schedules).
 *  2. runs/s of a webhook-heavy load: 300 runs, 8 at a time, each with a completion webhook to a
 *     receiver in a process of its own (answering 200), against the same load without webhooks,
 *     in alternating rounds. Goal: ≥ 0.95×. Beside it, when the last message was delivered.
 * The model answers at once (no tokens, no wait): what is measured is Runtrail's own work.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import http from 'node:http';
import { z } from 'zod';
import type { ModelProvider, ModelStreamPart } from '../src/providers/model-provider.js';
import { createTextOnlyPlugin } from '../src/plugins/text-only-plugin.js';
import { RunService } from '../src/runtime/service/run-service.js';
import { TriggerHost } from '../src/triggers/trigger-host.js';
import { triggerConfig, type TriggerConfig } from '../src/triggers/trigger-config.js';

const SCHEDULES = 100;
const FIRES = 3;
const LOAD_RUNS = 300;
const LOAD_CONCURRENCY = 8;
const ROUNDS = 3;
const self = fileURLToPath(import.meta.url);

class InstantModel implements ModelProvider {
  readonly provider = 'bench';
  readonly model = 'instant';
  async *stream(): AsyncIterable<ModelStreamPart> {
    yield { type: 'text-delta', text: 'ok' };
    yield { type: 'finish', reason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } };
  }
}

function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const fmt = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(1)} ms, p99 ${pct(xs, 99).toFixed(1)} ms (${xs.length} fires)`;
const median = (xs: number[]) => pct(xs, 50);

function stack(dataDir: string, config: TriggerConfig, concurrency: number): { service: RunService; triggers: TriggerHost } {
  const plugin = createTextOnlyPlugin({ name: 'talk', inputSchema: z.object({}).strict() });
  const triggers = new TriggerHost({ dataDir, agents: () => ['talk'], config: () => config });
  const service = new RunService({
    dataDir,
    agents: [plugin],
    env: {},
    providerResolver: () => new InstantModel(),
    observers: [triggers.observer],
    concurrency,
    maxQueue: 10_000,
    processRegistry: null,
  });
  return { service, triggers };
}

/** The next instant at a whole multiple of 5 s, at least `leadMs` away. */
function nextSlot(leadMs: number): number {
  return Math.ceil((Date.now() + leadMs) / 5000) * 5000;
}

async function timerBaseline(): Promise<number[]> {
  const late: number[] = [];
  for (let f = 0; f < FIRES; f++) {
    const at = nextSlot(1000);
    await Promise.all(Array.from({ length: SCHEDULES }, () => new Promise<void>((r) => setTimeout(() => (late.push(Date.now() - at), r()), at - Date.now()))));
  }
  return late;
}

async function createBaseline(dir: string): Promise<number[]> {
  const { service, triggers } = stack(join(dir, 'creates'), triggerConfig({}).config, SCHEDULES);
  await service.init();
  await triggers.start(service);
  const late: number[] = [];
  try {
    for (let f = 0; f < FIRES; f++) {
      const at = nextSlot(1000);
      await new Promise((r) => setTimeout(r, at - Date.now()));
      const runs = await Promise.all(Array.from({ length: SCHEDULES }, () => service.create({ plugin: 'talk', input: {} })));
      for (const r of runs) late.push(Date.parse(r.created_at) - at);
      await Promise.all(runs.map((r) => service.wait(r.run_id)));
    }
  } finally {
    await triggers.stop();
    await service.close();
  }
  return late;
}

async function scheduleAccuracy(dir: string): Promise<{ claims: number[]; runs: number[] }> {
  const { service, triggers } = stack(join(dir, 'schedules'), triggerConfig({}).config, SCHEDULES);
  await service.init();
  await triggers.start(service);
  try {
    const ids: string[] = [];
    for (let i = 0; i < SCHEDULES; i++) ids.push((await triggers.create({ agent: 'talk', cron: '*/5 * * * * *' })).schedule_id);
    const first = nextSlot(1500);
    // the fires before `first` (while the schedules were being made) are not counted
    await new Promise((r) => setTimeout(r, first + (FIRES - 1) * 5000 + 3000 - Date.now()));
    await triggers.scheduler.idle();
    const claims: number[] = [];
    const runs: number[] = [];
    for (const id of ids) {
      const s = await triggers.get(id);
      for (const f of s.runs) {
        const t = Date.parse(f.fire_time);
        if (t < first || !f.run_id) continue;
        claims.push(Date.parse(f.at) - t);
        const run = await service.get(f.run_id);
        if (run) runs.push(Date.parse(run.created_at) - t);
      }
    }
    return { claims, runs };
  } finally {
    await triggers.stop();
    await service.close();
  }
}

/** A receiver in a child process, so its work is not counted as Runtrail's; resolves with its URL. */
function startReceiver(): Promise<{ url: string; proc: ChildProcess; count(): Promise<number> }> {
  const proc = spawn(process.execPath, [self, '--receiver'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      if (!buf.includes('\n')) return;
      const url = (JSON.parse(buf.split('\n')[0]) as { url: string }).url;
      resolve({
        url,
        proc,
        count: () =>
          new Promise<number>((r, j) =>
            http
              .get(`${url}/count`, (res) => {
                let b = '';
                res.on('data', (c) => (b += c));
                res.on('end', () => r(Number(b)));
              })
              .on('error', j),
          ),
      });
    });
    proc.on('exit', (c) => reject(new Error(`receiver exited (${c})`)));
  });
}

function receiverChild(): void {
  let n = 0;
  const server = http.createServer((req, res) => {
    if (req.url === '/count') return void res.end(String(n));
    req.resume();
    req.on('end', () => {
      n++;
      res.writeHead(200).end();
    });
  });
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })}\n`));
}

async function load(dir: string, receiverUrl: string | null): Promise<{ runsPerS: number; deliveredAfterMs: number | null }> {
  const config = triggerConfig(
    receiverUrl
      ? { webhooks: { allow: [`${receiverUrl}/*`], every_run: [{ url: `${receiverUrl}/hook`, secret: `whsec_${Buffer.alloc(32, 3).toString('base64')}` }] } }
      : {},
  ).config;
  const { service, triggers } = stack(dir, config, LOAD_CONCURRENCY);
  await service.init();
  await triggers.start(service);
  try {
    // a few runs first: the code paths compiled, the files' folders made
    await Promise.all(Array.from({ length: 16 }, async () => service.wait((await service.create({ plugin: 'talk', input: {} })).run_id)));
    await triggers.webhooks.idle();
    const start = performance.now();
    let next = 0;
    const client = async () => {
      while (next < LOAD_RUNS) {
        next++;
        await service.wait((await service.create({ plugin: 'talk', input: {} })).run_id);
      }
    };
    await Promise.all(Array.from({ length: LOAD_CONCURRENCY }, client));
    const seconds = (performance.now() - start) / 1000;
    let deliveredAfterMs: number | null = null;
    if (receiverUrl) {
      await triggers.webhooks.idle();
      deliveredAfterMs = performance.now() - start - seconds * 1000;
    }
    return { runsPerS: LOAD_RUNS / seconds, deliveredAfterMs };
  } finally {
    await triggers.stop();
    await service.close();
  }
}

export async function run(): Promise<void> {
  if (process.argv.includes('--receiver')) return receiverChild();
  const dir = mkdtempSync(join(tmpdir(), 'runtrail-bench-triggers-'));
  try {
    const timers = await timerBaseline();
    const creates = await createBaseline(dir);
    const fired = await scheduleAccuracy(dir);
    console.log(`fire-time accuracy, ${SCHEDULES} schedules firing together, ${FIRES} times:`);
    console.log(`  baseline: ${SCHEDULES} timers for one instant          late ${fmt(timers)}`);
    console.log(`  baseline: ${SCHEDULES} runs created at one instant     admitted late ${fmt(creates)}`);
    console.log(`  schedules: fire claimed                     late ${fmt(fired.claims)}`);
    console.log(`  schedules: run admitted (created_at)        late ${fmt(fired.runs)}`);

    const receiver = await startReceiver();
    try {
      const plain: number[] = [];
      const hooked: number[] = [];
      const lag: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        plain.push((await load(join(dir, `plain-${i}`), null)).runsPerS);
        const h = await load(join(dir, `hooked-${i}`), receiver.url);
        hooked.push(h.runsPerS);
        if (h.deliveredAfterMs !== null) lag.push(h.deliveredAfterMs);
      }
      const received = await receiver.count();
      const ratio = median(hooked) / median(plain);
      console.log(`webhook-heavy load, ${LOAD_RUNS} runs ${LOAD_CONCURRENCY} at a time, ${ROUNDS} alternating rounds:`);
      console.log(`  without webhooks: ${plain.map((x) => x.toFixed(0)).join(' / ')} runs/s`);
      console.log(
        `  with a webhook each: ${hooked.map((x) => x.toFixed(0)).join(' / ')} runs/s; last delivery ${lag.map((x) => x.toFixed(0)).join(' / ')} ms after the last run ended; ${received} delivered`,
      );
      console.log(`  ratio (medians) ${ratio.toFixed(2)}× (goal ≥ 0.95×)`);
    } finally {
      receiver.proc.kill();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] === self) void run();
