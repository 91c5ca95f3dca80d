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

async function waitGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  let delay = 2;
  for (;;) {
    if (!isGroupAlive(pgid)) return true;
    const left = deadline - Date.now();
    if (left <= 0) return false;
    await sleep(Math.min(delay, left));
    delay = Math.min(delay * 2, 50);
  }
}

/** SIGTERM to the group, SIGKILL after `graceMs` if anything is left; resolves when the group is gone. */
export async function terminateGroup(pgid: number, graceMs: number): Promise<'gone' | 'term' | 'kill'> {
  if (!isGroupAlive(pgid)) return 'gone';
  signalGroup(pgid, 'SIGTERM');
  if (await waitGone(pgid, graceMs)) return 'term';
  signalGroup(pgid, 'SIGKILL');
  await waitGone(pgid, 5_000);
  return 'kill';
}
