/**
 * Wall time and peak RSS of a command run as its own process. Under GNU time (`/usr/bin/time`,
 * Debian package `time`) the peak is the largest of the process and every child it waited for
 * (the kernel's ru_maxrss of wait4), so a compute skill's child process is covered: the max of
 * the tree's processes, not their sum. Without GNU time, node reports its own peak only.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const GNU_TIME = '/usr/bin/time';

export interface Measured {
  ms: number;
  /** peak resident set size, bytes */
  rss: number;
  /** what `rss` covers */
  scope: 'process tree (max of its processes)' | 'node process only';
  exitCode: number;
  stderrTail: string;
}

export function peakRssScope(): Measured['scope'] {
  return existsSync(GNU_TIME) ? 'process tree (max of its processes)' : 'node process only';
}

/** Runs `node args…` to its end. */
export async function measureNode(args: string[], opts: { cwd?: string } = {}): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'runtrail-rss-'));
  const out = join(dir, 'rss');
  const gnu = existsSync(GNU_TIME);
  let cmd = GNU_TIME;
  let argv = ['-f', '%M', '-o', out, process.execPath, ...args];
  if (!gnu) {
    // the node process writes its own peak (KiB, as GNU time does) when it exits
    const preload = join(dir, 'peak.cjs');
    writeFileSync(preload, `process.on('exit', () => require('fs').writeFileSync(${JSON.stringify(out)}, String(process.resourceUsage().maxRSS)));\n`);
    cmd = process.execPath;
    argv = ['--require', preload, ...args];
  }
  const t = performance.now();
  const child = spawn(cmd, argv, { cwd: opts.cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exitCode = await new Promise<number>((ok) => child.on('close', (c) => ok(c ?? 1)));
  const ms = performance.now() - t;
  const kb = Number(readFileSync(out, 'utf8').trim().split('\n').pop());
  rmSync(dir, { recursive: true, force: true });
  return { ms, rss: kb * 1024, scope: gnu ? 'process tree (max of its processes)' : 'node process only', exitCode, stderrTail: stderr };
}
