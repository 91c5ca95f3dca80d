/**
 * Which process is at the other end of a TCP connection to this server, and whether it belongs to a
 * run (Linux): the connection's socket is found in /proc/net/tcp{,6} by its two ports, its inode in
 * the fd tables of the process table. A process belongs to a run when it lives in another pid
 * namespace (a sandbox), in one of this server's sandbox cgroups, or in a session this server started
 * for a run (what an elevated or unsandboxed command started). Other children of the server's process
 * are not a run's: a browser or tool that embeds the server and starts its own children decides as a
 * person. Used to refuse decisions a run would make about itself or other runs when the operator gave
 * it the host network.
 */
import { networkInterfaces } from 'node:os';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

export interface RunProcess {
  pid: number;
  /** How it was recognised, in words. */
  why: string;
}

/** Session leaders this process started for runs: every supervised child is one (detached, or a pty). */
const runSessions = new Set<number>();

/** `pid` leads a session started for a run; its descendants are the run's until it is forgotten. */
export function markRunSession(pid: number): void {
  runSessions.add(pid);
}

export function forgetRunSession(pid: number): void {
  runSessions.delete(pid);
}

function isLocalAddress(address: string): boolean {
  const a = address.replace(/^::ffff:/, '');
  if (a === '::1' || a.startsWith('127.')) return true;
  for (const list of Object.values(networkInterfaces())) for (const i of list ?? []) if (i.address === a) return true;
  return false;
}

/** Socket inodes of TCP connections whose local port is `clientPort` and remote port `serverPort`. */
function socketInodes(clientPort: number, serverPort: number): Set<string> {
  const out = new Set<string>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10) continue;
      const local = parseInt(f[1].split(':')[1] ?? '', 16);
      const remote = parseInt(f[2].split(':')[1] ?? '', 16);
      if (local === clientPort && remote === serverPort && f[9] !== '0') out.add(f[9]);
    }
  }
  return out;
}

function ownerOf(inodes: Set<string>): number | null {
  const wanted = new Set([...inodes].map((i) => `socket:[${i}]`));
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${name}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (wanted.has(readlinkSync(`/proc/${name}/fd/${fd}`))) return Number(name);
      } catch {
        /* closed meanwhile */
      }
    }
  }
  return null;
}

/** Fields of /proc/<pid>/stat after the command name: state, ppid, pgrp, session, … */
function statFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

function parentOf(pid: number): number | null {
  const f = statFields(pid);
  return f ? Number(f[1]) : null;
}

/** Why `pid` is one of a run's processes, or null. */
export function runProcessReason(pid: number, self = process.pid): string | null {
  if (pid === self) return null;
  try {
    if (readlinkSync(`/proc/${pid}/ns/pid`) !== readlinkSync(`/proc/${self}/ns/pid`)) return 'it runs in a sandbox (another pid namespace)';
  } catch {
    /* gone, or not ours to read */
  }
  try {
    if (/\/runtrail-\d+\/sandbox-/.test(readFileSync(`/proc/${pid}/cgroup`, 'utf8'))) return "it runs in a run's sandbox cgroup";
  } catch {
    /* gone */
  }
  const session = statFields(pid)?.[3];
  if (session !== undefined && runSessions.has(Number(session))) return 'it was started by this server for a run';
  // a process that left the run's session (setsid) is still found through its parents while they live
  for (let p: number | null = pid, hops = 0; p !== null && p > 1 && p !== self && hops < 64; p = parentOf(p), hops++) {
    if (runSessions.has(p)) return 'it was started by this server for a run';
  }
  return null;
}

/** The run's process behind a connection from `remoteAddress:remotePort` to our `localPort`, or null. */
export function runProcessBehind(remoteAddress: string | undefined, remotePort: number | undefined, localPort: number | undefined): RunProcess | null {
  if (process.platform !== 'linux' || !remoteAddress || !remotePort || !localPort || !isLocalAddress(remoteAddress)) return null;
  const inodes = socketInodes(remotePort, localPort);
  if (inodes.size === 0) return null;
  const pid = ownerOf(inodes);
  if (pid === null) return null;
  const why = runProcessReason(pid);
  return why ? { pid, why } : null;
}
