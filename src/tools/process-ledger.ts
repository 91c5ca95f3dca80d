/**
 * The process groups a run's sessions lead, on disk (runtime/processes.json), so that the children
 * of a Runtrail killed with SIGKILL (no handler runs) can still be ended by the next Runtrail
 * process on that data dir. Each entry keeps the leader's start time from /proc/<pid>/stat: a pid
 * the kernel has since given to another process never matches it, so it is never killed.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { maskSecretValues } from '../events/secret-values.js';
import { liveGroupMembers, terminateGroup } from './process-group.js';

export interface LedgerEntry {
  session_id: string;
  pid: number;
  pgid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks after boot); null where /proc is missing. */
  start_time: number | null;
  command: string;
  started_at: string;
}

/** Start time of `pid` in clock ticks after boot, or null when it is gone or there is no /proc. */
export function processStartTime(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    // after "pid (comm) ": state is field 3, so field 22 is index 19
    const n = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isFinite(n) ? n : null;
  } catch {
    return null;
  }
}

function readEntries(file: string): LedgerEntry[] {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as { processes?: unknown };
    return Array.isArray(v.processes) ? (v.processes as LedgerEntry[]).filter((e) => Number.isInteger(e?.pid) && Number.isInteger(e?.pgid) && e.pgid > 1) : [];
  } catch {
    return [];
  }
}

let tmpCounter = 0;

/** The ledger of one run: written synchronously (a SIGKILL can come right after a spawn). */
export class ProcessLedger {
  /** Read at the first change: most runs start no process, and their start need not look for a file
   *  that is not there (one failed open on the main thread per run). */
  private loaded: LedgerEntry[] | null = null;

  constructor(readonly file: string) {}

  private get entries(): LedgerEntry[] {
    this.loaded ??= readEntries(this.file);
    return this.loaded;
  }

  add(entry: Omit<LedgerEntry, 'start_time' | 'started_at'>): void {
    // the command line is only shown (when a later Runtrail ends the group): credentials in it are masked
    this.entries.push({ ...entry, command: maskSecretValues(entry.command), start_time: processStartTime(entry.pid), started_at: new Date().toISOString() });
    this.write();
  }

  remove(sessionId: string): void {
    const before = this.entries.length;
    this.loaded = this.entries.filter((e) => e.session_id !== sessionId);
    if (this.loaded.length !== before) this.write();
  }

  private write(): void {
    try {
      if (this.entries.length === 0) {
        rmSync(this.file, { force: true });
        return;
      }
      const tmp = `${this.file}.${process.pid}.${++tmpCounter}.tmp`;
      writeFileSync(tmp, `${JSON.stringify({ processes: this.entries }, null, 2)}\n`);
      renameSync(tmp, this.file);
    } catch {
      // a run folder that went away (or a full disk) must not fail the command itself
    }
  }
}

/** Members of `entry`'s group that are provably its: the same leader (by start time), or, once the
 *  leader is gone, members started after it while no other process holds the leader's pid. */
function leftoverMembers(entry: LedgerEntry): number[] {
  const members = liveGroupMembers(entry.pgid);
  if (members.length === 0) return [];
  const leaderStart = processStartTime(entry.pgid);
  if (entry.start_time === null) return []; // no /proc: nothing can be proven, nothing is killed
  if (leaderStart !== null && leaderStart !== entry.start_time) return []; // the pid was reused
  return members.filter((pid) => {
    const t = processStartTime(pid);
    return t !== null && t >= entry.start_time!;
  });
}

/**
 * Ends every recorded group a dead Runtrail left behind (TERM, KILL after `graceMs`), removes the
 * ledger and returns how many processes were ended.
 */
export async function endLeftoverProcesses(
  file: string,
  graceMs = 3_000,
): Promise<{ ended: number; commands: string[]; sessions: Array<Pick<LedgerEntry, 'session_id' | 'command'>> }> {
  if (!existsSync(file)) return { ended: 0, commands: [], sessions: [] };
  let ended = 0;
  const commands: string[] = [];
  const own = process.pid;
  const entries = readEntries(file);
  for (const entry of entries) {
    const mine = leftoverMembers(entry).filter((pid) => pid !== own);
    if (mine.length === 0 || entry.pgid === own) continue;
    ended += mine.length;
    commands.push(entry.command);
    await terminateGroup(entry.pgid, graceMs);
  }
  rmSync(file, { force: true });
  // every session the ledger held was running when its Runtrail died, whether its processes outlived it or not
  return { ended, commands, sessions: entries.map((e) => ({ session_id: e.session_id, command: e.command })) };
}
