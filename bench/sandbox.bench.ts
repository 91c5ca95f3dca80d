/**
 * What the sandbox costs: `exec "true"` sandboxed against the same exec unsandboxed (p50 and p99 of
 * the added milliseconds; goal ≤ 15 ms at p50); at the process level, a sandboxed `true` (limits
 * prelude, launcher, bwrap) against a bare `bwrap … true` and `sh -c true` (goal: ≤ 2 ms p50 over bare
 * bwrap); and a 1 GiB output drain sandboxed against unsandboxed (goal ≥ 0.9×). The sides alternate
 * in one run, so load from elsewhere hits them alike.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { launchSandboxed } from '../src/sandbox/sandbox-launch.js';
import { bwrapPath } from '../src/sandbox/sandbox-support.js';
import { resolveSandboxPolicy } from '../src/sandbox/sandbox-policy.js';
import { limitEnforcement } from '../src/sandbox/sandbox-limits.js';
import { sandboxSupport } from '../src/sandbox/sandbox-support.js';
import { createExecTool } from '../src/tools/exec-tool.js';
import { ProcessRegistry } from '../src/tools/process-registry.js';

const STARTS = 200;
const DRAIN_ROUNDS = 3;
const BYTES = 1024 ** 3;
const DRAIN = `yes 'runtrail sandbox benchmark line: the quick brown fox jumps over the lazy dog 0123456789' | head -c ${BYTES}`;

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

async function timed(exec: ReturnType<typeof createExecTool>, command: string): Promise<number> {
  const t0 = performance.now();
  const r = await exec.execute({ command, timeout: 0 });
  const ms = performance.now() - t0;
  if (!r.ok) throw new Error(`exec failed: ${r.content.slice(-300)}`);
  return ms;
}

/** Milliseconds from spawn to exit of one process, which must exit 0. */
function spawned(file: string, args: string[], env: Record<string, string> = { PATH: '/usr/bin:/bin' }): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${file} exited ${code}`))));
  });
}

/** `true` three ways, alternating: sh, bare bubblewrap, the whole sandbox launch. */
async function processStarts(): Promise<void> {
  const policy = resolveSandboxPolicy(undefined, undefined);
  if (policy.mode !== 'on') throw new Error('the default policy must be on');
  const ws = mkdtempSync(join(tmpdir(), 'runtrail-bench-sbx-'));
  const bare = [
    '--unshare-user',
    '--unshare-pid',
    '--unshare-net',
    '--unshare-ipc',
    '--unshare-uts',
    '--die-with-parent',
    '--ro-bind',
    '/',
    '/',
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    'true',
  ];
  const boxed = async () => {
    const t0 = performance.now();
    const launch = await launchSandboxed(policy, { file: 'true', args: [], cwd: ws, writable: [ws] });
    try {
      await spawned(launch.file, launch.args, launch.env);
    } finally {
      await launch.cleanup();
    }
    return performance.now() - t0;
  };
  const sh: number[] = [];
  const bw: number[] = [];
  const sb: number[] = [];
  try {
    for (let i = 0; i < 5; i++) await boxed();
    for (let i = 0; i < STARTS; i++) {
      const steps = [
        async () => void sh.push(await spawned('/bin/sh', ['-c', 'true'])),
        async () => void bw.push(await spawned(bwrapPath(), bare)),
        async () => void sb.push(await boxed()),
      ];
      for (const step of i % 2 === 0 ? steps : [...steps].reverse()) await step();
    }
  } finally {
    rmSync(ws, { recursive: true, force: true });
  }
  console.log(`process starts of "true", ${STARTS} of each, alternating:`);
  console.log(`  sh -c true:        p50 ${pct(sh, 50).toFixed(2)} ms, p99 ${pct(sh, 99).toFixed(2)} ms`);
  console.log(`  bare bwrap … true: p50 ${pct(bw, 50).toFixed(2)} ms, p99 ${pct(bw, 99).toFixed(2)} ms`);
  console.log(
    `  sandboxed true:    p50 ${pct(sb, 50).toFixed(2)} ms, p99 ${pct(sb, 99).toFixed(2)} ms (cgroups, prelude, launcher: user, keyring, seccomp; bwrap)`,
  );
  console.log(
    `  added over bare bwrap: p50 ${(pct(sb, 50) - pct(bw, 50)).toFixed(2)} ms (goal <= 2 ms); over sh: p50 ${(pct(sb, 50) - pct(sh, 50)).toFixed(2)} ms`,
  );
}

export async function run(): Promise<void> {
  const support = sandboxSupport();
  if (!support.ok) throw new Error(`the sandbox cannot start here: ${support.reason}`);
  const host = new ProcessRegistry({ sandbox: { mode: 'off' } });
  const boxed = new ProcessRegistry({ sandbox: resolveSandboxPolicy(undefined, undefined) });
  const execHost = createExecTool({ registry: host, scopeKey: 'bench', cwd: tmpdir(), processToolEnabled: false });
  const execBoxed = createExecTool({ registry: boxed, scopeKey: 'bench', cwd: tmpdir(), processToolEnabled: false });
  try {
    // warm both paths (module loads, the sandbox support check, cgroup homes)
    for (let i = 0; i < 5; i++) {
      await timed(execHost, 'true');
      await timed(execBoxed, 'true');
    }
    const off: number[] = [];
    const on: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      if (i % 2 === 0) {
        off.push(await timed(execHost, 'true'));
        on.push(await timed(execBoxed, 'true'));
      } else {
        on.push(await timed(execBoxed, 'true'));
        off.push(await timed(execHost, 'true'));
      }
    }
    const added50 = pct(on, 50) - pct(off, 50);
    const added99 = pct(on, 99) - pct(off, 99);
    console.log(`exec "true", ${STARTS} of each, alternating (limits: processes by ${limitEnforcement().processes}):`);
    console.log(`  unsandboxed: p50 ${pct(off, 50).toFixed(1)} ms, p99 ${pct(off, 99).toFixed(1)} ms`);
    console.log(`  sandboxed:   p50 ${pct(on, 50).toFixed(1)} ms, p99 ${pct(on, 99).toFixed(1)} ms`);
    console.log(`  added by the sandbox: p50 ${added50.toFixed(1)} ms (goal <= 15 ms), p99 ${added99.toFixed(1)} ms`);
    await processStarts();

    const drainOff: number[] = [];
    const drainOn: number[] = [];
    for (let i = 0; i < DRAIN_ROUNDS; i++) {
      const steps = [async () => void drainOff.push(await timed(execHost, DRAIN)), async () => void drainOn.push(await timed(execBoxed, DRAIN))];
      for (const step of i % 2 === 0 ? steps : [...steps].reverse()) await step();
    }
    const gbps = (ms: number) => BYTES / 1e9 / (ms / 1000);
    const ratios = drainOn.map((ms, i) => gbps(ms) / gbps(drainOff[i]));
    console.log(`1 GiB output drain, ${DRAIN_ROUNDS} rounds of each, order alternating (medians; machine load ${loadavg()[0].toFixed(1)}):`);
    console.log(`  unsandboxed ${gbps(pct(drainOff, 50)).toFixed(2)} GB/s, sandboxed ${gbps(pct(drainOn, 50)).toFixed(2)} GB/s`);
    console.log(
      `  throughput ratio sandboxed/unsandboxed: ${(gbps(pct(drainOn, 50)) / gbps(pct(drainOff, 50))).toFixed(2)}x of medians, ${pct(ratios, 50).toFixed(2)}x median per round (goal >= 0.90x); rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')}`,
    );
  } finally {
    await host.shutdown();
    await boxed.shutdown();
  }
}
