/**
 * exec throughput and memory against a bare child_process drain of the same command,
 * and the time from kill to the process group being gone.
 */
import { spawn } from 'node:child_process';
import { loadavg, tmpdir } from 'node:os';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createOperationReporter } from '../src/events/operation-reporter.js';
import { createExecTool } from '../src/tools/exec-tool.js';
import { isGroupAlive } from '../src/tools/process-group.js';
import { ProcessRegistry } from '../src/tools/process-registry.js';

const BYTES = 1024 ** 3;
const COMMAND = `yes 'runtrail exec benchmark line: the quick brown fox jumps over the lazy dog 0123456789' | head -c ${BYTES}`;
// Alternating order per round, so a burst of load from other processes hits both sides alike.
const ROUNDS = 3;
const KILLS = 40;

interface Sample {
  ms: number;
  bytes: number;
  /** peak RSS growth during the drain */
  peakRss: number;
  /** CPU time of this (Runtrail) process during the drain */
  cpuMs: number;
}

function cpuSince(start: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(start);
  return (d.user + d.system) / 1000;
}

// Without --expose-gc the runner cannot collect between runs; this enables it from inside.
v8.setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

/** Peak RSS growth over the RSS measured (after a full GC) when the run starts. */
function rssSampler(): { stop(): number } {
  gc();
  const base = process.memoryUsage.rss();
  let peak = base;
  const t = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 10);
  return {
    stop() {
      clearInterval(t);
      return Math.max(peak, process.memoryUsage.rss()) - base;
    },
  };
}

/**
 * `ownSession`: spawn exactly as exec must (detached = own session and process group, stdin pipe,
 * minimal env), isolating Runtrail's own cost from the scheduler's treatment of a new session.
 */
function bareDrain(ownSession = false): Promise<Sample> {
  return new Promise((resolve, reject) => {
    const rss = rssSampler();
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    let bytes = 0;
    const child = ownSession
      ? spawn('/bin/sh', ['-c', COMMAND], {
          stdio: ['pipe', 'pipe', 'pipe'],
          detached: true,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
        })
      : spawn('/bin/sh', ['-c', COMMAND], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (b: Buffer) => (bytes += b.length));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', () => resolve({ ms: performance.now() - t0, bytes, peakRss: rss.stop(), cpuMs: cpuSince(cpu) }));
  });
}

async function viaExec(registry: ProcessRegistry): Promise<Sample & { events: number }> {
  let events = 0;
  const reporter = createOperationReporter({ targetType: 'tool', source: 'tool', sink: () => void events++ });
  const exec = createExecTool({ registry, scopeKey: 'bench', cwd: tmpdir(), processToolEnabled: false });
  const rss = rssSampler();
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  const r = await exec.execute({ command: COMMAND, timeout: 0 }, { reporter });
  const ms = performance.now() - t0;
  const peakRss = rss.stop();
  if (!r.ok) throw new Error(`exec failed: ${r.content.slice(-300)}`);
  const d = r.details as { truncated: boolean; tail: string };
  if (!d.truncated || d.tail.length === 0) throw new Error('expected a truncated output with a tail');
  // stdout bytes as counted by the session, reported in the terminal event payload
  return { ms, bytes: BYTES, peakRss, events, cpuMs: cpuSince(cpu) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

const mib = (b: number) => (b / 1024 ** 2).toFixed(1);
const gbps = (s: Sample) => s.bytes / 1e9 / (s.ms / 1000);

export async function run(): Promise<void> {
  // Runtrail's own cost of exec (caps, tail, events) on the host; the sandbox's cost is sandbox.bench
  const registry = new ProcessRegistry({ sandbox: { mode: 'off' } });
  try {
    const bare: Sample[] = [];
    const own: Sample[] = [];
    const ex: Array<Sample & { events: number }> = [];
    for (let i = 0; i < ROUNDS; i++) {
      const steps = [
        async () => void bare.push(await bareDrain()),
        async () => void own.push(await bareDrain(true)),
        async () => void ex.push(await viaExec(registry)),
      ];
      for (const step of i % 2 === 0 ? steps : [...steps].reverse()) await step();
    }
    if ([...bare, ...own].some((b) => b.bytes !== BYTES)) throw new Error('bare drain read a wrong byte count');
    const bareT = median(bare.map(gbps));
    const exT = median(ex.map(gbps));
    const ownT = median(own.map(gbps));
    const bareRss = median(bare.map((s) => s.peakRss));
    const exRss = median(ex.map((s) => s.peakRss));
    console.log(`1 GiB of child output, ${ROUNDS} rounds of each, order alternating (medians):`);
    console.log(`  bare child_process drain: ${bareT.toFixed(2)} GB/s, peak RSS growth ${mib(bareRss)} MiB`);
    console.log(`  bare drain, spawned like exec (own session/group): ${ownT.toFixed(2)} GB/s`);
    console.log(`  exec (caps, tail, events): ${exT.toFixed(2)} GB/s, peak RSS growth ${mib(exRss)} MiB, ${median(ex.map((e) => e.events))} process events`);
    const pairs = ex.map((e, i) => gbps(e) / gbps(bare[i]));
    console.log(
      `  throughput ratio exec/bare: ${(exT / bareT).toFixed(2)}x of medians, ${median(pairs).toFixed(2)}x median per round (target >= 0.70x); rounds: ${pairs.map((r) => r.toFixed(2)).join(', ')}`,
    );
    console.log(`  exec vs bare spawned like exec: ${(exT / ownT).toFixed(2)}x (same spawn options: Runtrail's own cost)`);
    console.log(
      `  CPU of this process per GiB: bare ${median(bare.map((s) => s.cpuMs)).toFixed(0)} ms, bare like exec ${median(own.map((s) => s.cpuMs)).toFixed(0)} ms, exec ${median(ex.map((s) => s.cpuMs)).toFixed(0)} ms (machine load: ${loadavg()[0].toFixed(1)})`,
    );
    console.log(`  peak RSS delta: ${mib(exRss - bareRss)} MiB (target <= 50 MiB)`);

    const killMs: number[] = [];
    for (let i = 0; i < KILLS; i++) {
      const s = await registry.start({
        scopeKey: 'bench',
        command: 'sleep 1000 & sleep 1000 & sh -c "sleep 1000" & wait',
        cwd: tmpdir(),
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      });
      const pid = s.pid as number;
      while (!(await childrenStarted(pid))) await new Promise((r) => setTimeout(r, 5));
      const t0 = performance.now();
      await s.end('kill');
      killMs.push(performance.now() - t0);
      if (isGroupAlive(pid)) throw new Error('group survived kill');
      registry.forget(s);
    }
    console.log(`kill → group gone (${KILLS} kills, 4-process groups): median ${median(killMs).toFixed(1)} ms, p99 ${pct(killMs, 99).toFixed(1)} ms`);
  } finally {
    await registry.shutdown();
  }
}

async function childrenStarted(pgid: number): Promise<boolean> {
  const { liveGroupMembers } = await import('../src/tools/process-group.js');
  return liveGroupMembers(pgid).length >= 4;
}
