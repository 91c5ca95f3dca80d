/** Liveness and termination of a child's process group: the unit "no orphans" is about. */
import { readdirSync, readFileSync } from 'node:fs';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Members of group `pgid` that still run (zombies excluded: they hold no resources, only a pid slot). */
export function liveGroupMembers(pgid: number): number[] {
  if (process.platform !== 'linux') {
    try {
      process.kill(-pgid, 0);
      return [pgid];
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === 'EPERM' ? [pgid] : [];
    }
  }
  // Fast path: no member at all, not even a zombie.
  try {
    process.kill(-pgid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return [];
  }
  // Some inits (containers, microVMs) never reap orphans, so kill(-pgid, 0) keeps succeeding on zombies.
  const live: number[] = [];
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'latin1');
    } catch {
      continue; // exited while we looked
    }
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // rest: state ppid pgrp ...
    if (Number(rest[2]) === pgid && rest[0] !== 'Z' && rest[0] !== 'X') live.push(Number(name));
  }
  return live;
}

export function isGroupAlive(pgid: number): boolean {
  return liveGroupMembers(pgid).length > 0;
}

export function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * A child and the group it leads. Right after spawn the child may not have called setsid() yet:
 * its group does not exist then, and only a signal to its own pid reaches it. So until its exit
 * has been seen, the leader counts as alive and is signalled by pid as well as by group.
 */
export interface ProcessTree {
  pgid: number;
  /** True until the leader's exit has been observed (waitpid); then only the group matters. */
  leaderRunning(): boolean;
  /**
   * A sandboxed tree: the processes running inside (the leader is bubblewrap, which would end them
   * all at once if it were sent the signal). A polite signal goes to these only, so that what runs
   * inside gets its grace; SIGKILL goes to the group as well.
   */
  insideMembers?(): number[];
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** The signal to the group, and to the leader itself while it may not lead its group yet. */
export function signalTree(tree: ProcessTree, signal: NodeJS.Signals): void {
  if (tree.insideMembers && signal !== 'SIGKILL') {
    const inside = tree.insideMembers().filter((pid) => pid !== tree.pgid);
    // before the command inside exists nothing has run yet: ending bubblewrap itself loses nothing
    if (inside.length > 0) {
      for (const pid of inside) signalPid(pid, signal);
      return;
    }
  }
  signalGroup(tree.pgid, signal);
  if (tree.leaderRunning()) signalPid(tree.pgid, signal);
}

function treeAlive(tree: ProcessTree): boolean {
  return tree.leaderRunning() || isGroupAlive(tree.pgid);
}

async function waitTreeGone(tree: ProcessTree, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  let delay = 2;
  for (;;) {
    if (!treeAlive(tree)) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await sleep(Math.min(delay, left));
    delay = Math.min(delay * 2, 50);
  }
}

/** SIGTERM to the tree, SIGKILL after `graceMs` if anything is left; resolves when leader and group are gone. */
export async function terminateTree(tree: ProcessTree, graceMs: number): Promise<'gone' | 'term' | 'kill'> {
  if (!treeAlive(tree)) return 'gone';
  signalTree(tree, 'SIGTERM');
  if (await waitTreeGone(tree, graceMs)) return 'term';
  signalTree(tree, 'SIGKILL');
  await waitTreeGone(tree, 5_000);
  return 'kill';
}

/** SIGTERM to the group, SIGKILL after `graceMs` if anything is left; resolves when the group is gone. */
export function terminateGroup(pgid: number, graceMs: number): Promise<'gone' | 'term' | 'kill'> {
  return terminateTree({ pgid, leaderRunning: () => false }, graceMs);
}
