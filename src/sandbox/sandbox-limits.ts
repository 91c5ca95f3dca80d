/**
 * The resource limits of one sandbox. The kernel does not enforce RLIMIT_NPROC for root, so the
 * process count (and memory of all processes together) is held by a cgroup of its own — the `pids`
 * and `memory` controllers of cgroup v1 where they are mounted, else cgroup v2 — which the first
 * process joins before it starts bwrap, so that everything inside is counted. CPU time and file size
 * are rlimits (enforced for every user). What is enforced where is said by `enforcement`.
 */
import { mkdirSync, readFileSync, readdirSync, rmdirSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DEFAULT_SANDBOX_LIMITS, type SandboxLimits } from './sandbox-policy.js';

const CGROUP_ROOT = '/sys/fs/cgroup';

/** Where a controller's cgroups are made for this server: under its own cgroup of that hierarchy. */
interface ControllerHome {
  controller: 'pids' | 'memory';
  version: 1 | 2;
  /** The folder new cgroups go in. */
  dir: string;
}

export interface LimitEnforcement {
  processes: string;
  memory: string;
  cpu_s: string;
  file_mb: string;
  disk_mb: string;
}

/** This process's cgroup path in each hierarchy (`/proc/self/cgroup`). */
function ownCgroups(): Map<string, string> {
  const out = new Map<string, string>();
  let text = '';
  try {
    text = readFileSync('/proc/self/cgroup', 'utf8');
  } catch {
    return out;
  }
  for (const line of text.trim().split('\n')) {
    const [, controllers, path] = line.split(':');
    if (controllers === undefined || path === undefined) continue;
    for (const c of controllers === '' ? ['(v2)'] : controllers.split(',')) out.set(c, path);
  }
  return out;
}

function writable(dir: string): boolean {
  const probe = join(dir, `runtrail-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return true;
  } catch {
    return false;
  }
}

function findHome(controller: 'pids' | 'memory', own: Map<string, string>): ControllerHome | null {
  const v1Mount = join(CGROUP_ROOT, controller);
  if (existsSync(join(v1Mount, 'cgroup.procs')) && own.has(controller)) {
    const dir = join(v1Mount, own.get(controller)!, `runtrail-${process.pid}`);
    try {
      mkdirSync(dir, { recursive: true });
      if (writable(dir)) return { controller, version: 1, dir };
    } catch {
      /* not ours to write */
    }
  }
  // cgroup v2: only where the controller is delegated to our subtree (a child of a cgroup with processes
  // cannot get controllers, so this works under systemd delegation, not in a plain container root)
  for (const mount of [join(CGROUP_ROOT, 'unified'), CGROUP_ROOT]) {
    if (!existsSync(join(mount, 'cgroup.controllers')) || !own.has('(v2)')) continue;
    const dir = join(mount, own.get('(v2)')!, `runtrail-${process.pid}`);
    try {
      mkdirSync(dir, { recursive: true });
      const available = readFileSync(join(dir, 'cgroup.controllers'), 'utf8');
      if (!available.split(/\s+/).includes(controller)) continue;
      writeFileSync(join(dir, 'cgroup.subtree_control'), `+${controller}`);
      if (writable(dir)) return { controller, version: 2, dir };
    } catch {
      /* not delegated */
    }
  }
  return null;
}

let homes: { pids: ControllerHome | null; memory: ControllerHome | null } | null = null;
function controllerHomes() {
  if (!homes) {
    const own = ownCgroups();
    homes = { pids: findHome('pids', own), memory: findHome('memory', own) };
    const made = [homes.pids, homes.memory].filter((h): h is ControllerHome => h !== null);
    for (const h of made) removeDeadHomes(dirname(h.dir));
    // this server's folders go with it (empty ones only: the kernel refuses to remove a cgroup with processes)
    process.once('exit', () => {
      for (const h of made) removeEmptyTree(h.dir);
    });
  }
  return homes;
}

/** Removes `dir`'s empty child cgroups, then `dir` itself if it is empty now. */
function removeEmptyTree(dir: string): void {
  try {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      try {
        rmdirSync(join(dir, e.name));
      } catch {
        /* still has processes */
      }
    }
    rmdirSync(dir);
  } catch {
    /* not empty, or gone */
  }
}

/** The folders of servers that are gone (a crash, a SIGKILL): removed when empty. */
function removeDeadHomes(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^runtrail-(\d+)$/.exec(name);
    if (!m || Number(m[1]) === process.pid) continue;
    try {
      process.kill(Number(m[1]), 0);
      continue; // that server still runs
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EPERM') continue;
    }
    removeEmptyTree(join(parent, name));
  }
}

/** What holds each limit on this machine, in words (printed by `runtrail sandbox check` and at start). */
export function limitEnforcement(): LimitEnforcement {
  const h = controllerHomes();
  const isRoot = process.getuid?.() === 0;
  return {
    processes: h.pids
      ? `pids cgroup (v${h.pids.version})`
      : isRoot
        ? 'NOT ENFORCED: no writable pids cgroup, and RLIMIT_NPROC does not bind root'
        : 'RLIMIT_NPROC (counts every process of this user)',
    memory: h.memory ? `memory cgroup (v${h.memory.version})` : 'RLIMIT_DATA per process (no writable memory cgroup)',
    cpu_s: 'RLIMIT_CPU per process',
    file_mb: 'RLIMIT_FSIZE per process',
    disk_mb: 'du of the writable places while processes run (stopped past the cap), each /tmp a tmpfs of that size, no file above it',
  };
}

/** One sandbox's cgroups: made before it starts, removed after it ends. */
export class SandboxCgroups {
  readonly dirs: string[] = [];

  constructor(readonly name: string) {}

  /** Makes the cgroups and sets their limits; returns the `cgroup.procs` files the first process joins. */
  create(limits: SandboxLimits): string[] {
    const h = controllerHomes();
    const procs: string[] = [];
    if (h.pids) {
      const dir = join(h.pids.dir, this.name);
      mkdirSync(dir);
      this.dirs.push(dir);
      writeFileSync(join(dir, 'pids.max'), String(limits.processes));
      procs.push(join(dir, 'cgroup.procs'));
    }
    if (h.memory) {
      const dir = join(h.memory.dir, this.name);
      mkdirSync(dir);
      this.dirs.push(dir);
      const bytes = String(limits.memory_mb * 1024 * 1024);
      writeFileSync(join(dir, h.memory.version === 1 ? 'memory.limit_in_bytes' : 'memory.max'), bytes);
      if (h.memory.version === 2) writeFileSync(join(dir, 'memory.swap.max'), '0');
      procs.push(join(dir, 'cgroup.procs'));
    }
    return procs;
  }

  /** The processes in the sandbox's pids cgroup (empty where there is none). */
  processes(): number[] {
    const dir = this.dirs.find((d) => d.includes('/pids/')) ?? this.dirs.find((d) => existsSync(join(d, 'pids.max')));
    if (!dir) return [];
    try {
      return readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  }

  /** Kills what is still in them (nothing, normally: the pid namespace died with its init) and removes them. */
  async remove(): Promise<void> {
    for (const dir of this.dirs) {
      for (let attempt = 0; attempt < 20; attempt++) {
        try {
          for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) {
            try {
              process.kill(Number(pid), 'SIGKILL');
            } catch {
              /* gone */
            }
          }
          rmdirSync(dir);
          break;
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') break;
          await new Promise((r) => setTimeout(r, 25));
        }
      }
    }
  }
}

/** Folders of sandboxes of this server that were left behind (a crash): for tests and cleanup. */
export function leftoverCgroups(): string[] {
  const h = controllerHomes();
  const out: string[] = [];
  for (const home of [h.pids, h.memory]) {
    if (!home) continue;
    try {
      for (const name of readdirSync(home.dir, { withFileTypes: true })) if (name.isDirectory()) out.push(join(home.dir, name.name));
    } catch {
      /* none */
    }
  }
  return out;
}

/**
 * The shell text the first process runs before it becomes bwrap: join the cgroups, set the rlimits.
 * dash counts RLIMIT_FSIZE in 512-byte blocks; RLIMIT_DATA in KiB.
 */
export function limitPrelude(procsFiles: string[], limits: SandboxLimits, memoryByCgroup: boolean): string {
  const join_ = procsFiles.map((f) => `echo $$ > '${f}' || exit 125; `).join('');
  const data = memoryByCgroup ? '' : `ulimit -d ${limits.memory_mb * 1024}; `;
  // no one file may exceed the run's whole disk cap either
  const fileMb = Math.min(limits.file_mb, diskCapMb(limits));
  return `${join_}ulimit -t ${limits.cpu_s}; ulimit -f ${fileMb * 2048}; ${data}exec "$@"`;
}

export function memoryByCgroup(): boolean {
  return controllerHomes().memory !== null;
}

/** The run's disk cap, MiB (a record written before the cap existed has none: the default). */
export function diskCapMb(limits: SandboxLimits): number {
  return limits.disk_mb ?? DEFAULT_SANDBOX_LIMITS.disk_mb;
}
