/**
 * The native launcher every sandbox starts through (native/sandbox-launch.c, built by
 * scripts/ensure-sandbox-launcher.mjs): where it is, and how bubblewrap's options reach it. The
 * options — the command's whole environment among them — go in a file only this server's user can
 * read, which the launcher removes as it opens it: nothing the model chose is in a host process's
 * environment or command line, and host processes start with LAUNCH_ENV alone.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The environment of the host-side steps (the limits prelude, the launcher, bubblewrap). */
export const LAUNCH_ENV: Readonly<Record<string, string>> = Object.freeze({ PATH: '/usr/sbin:/usr/bin:/sbin:/bin' });

export const LAUNCHER_NAME = 'runtrail-sandbox-launch';

/** The folder holding Runtrail's package.json (src/ under vitest, dist/ when built). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      if ((JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === 'runtrail') return dir;
    } catch {
      /* not here */
    }
    const parent = dirname(dir);
    if (parent === dir) return process.cwd();
    dir = parent;
  }
}

/** RUNTRAIL_SANDBOX_LAUNCHER, else `native/build/runtrail-sandbox-launch` in the package. */
export function launcherPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.RUNTRAIL_SANDBOX_LAUNCHER || join(packageRoot(), 'native', 'build', LAUNCHER_NAME);
}

export function launcherBuilt(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

let argsDir: string | null = null;

/** A folder of this process's own (0700), on a memory file system where there is one. */
function launchArgsDir(): string {
  if (argsDir && existsSync(argsDir)) return argsDir;
  const base = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
  let dir: string;
  try {
    dir = mkdtempSync(join(base, 'runtrail-launch-'));
  } catch {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-launch-'));
  }
  argsDir = dir;
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes bubblewrap's options (NUL-separated, owner-only) for one launch; returns the file. */
export function writeLaunchArgs(options: readonly string[]): string {
  const bad = options.find((o) => o.includes('\0'));
  if (bad !== undefined) throw new Error(`a sandbox option contains a NUL byte: ${JSON.stringify(bad.slice(0, 60))}`);
  const file = join(launchArgsDir(), randomBytes(9).toString('hex'));
  writeFileSync(file, options.map((o) => `${o}\0`).join(''), { mode: 0o600, flag: 'wx' });
  return file;
}

/** `--clearenv` and one `--setenv` per variable: the command's environment, set inside only. */
export function insideEnvOptions(env: Record<string, string>): string[] {
  const out = ['--clearenv'];
  for (const [k, v] of Object.entries(env)) out.push('--setenv', k, v);
  return out;
}
