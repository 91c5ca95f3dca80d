/**
 * A worker's presence: a file on the shared data dir, `cluster/<host>-<pid>.json`, with
 * the runs it holds, and a key in Redis with the same token, both renewed every few seconds.
 * `runtrail doctor` on any node compares the two (the data dir is shared when it sees every worker's
 * file); a worker that starts on a host ends the process groups its dead predecessors there left.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';

export interface PresenceFile {
  host: string;
  pid: number;
  token: string;
  started_at: string;
  beat_at: string;
  concurrency: number;
  running: string[];
}

export const PRESENCE_BEAT_MS = 5_000;
/** A presence key outlives three missed beats. */
const PRESENCE_TTL_S = 15;

export function clusterDir(dataDir: string): string {
  return join(dataDir, 'cluster');
}

export function presenceKey(prefix: string, name: string): string {
  return `${prefix}:workers:${name}`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPresence(file: string): PresenceFile | null {
  try {
    const v = JSON.parse(readFileSync(file, 'utf8')) as PresenceFile;
    return typeof v.host === 'string' && Number.isInteger(v.pid) && typeof v.token === 'string' ? v : null;
  } catch {
    return null;
  }
}

export class WorkerPresence {
  readonly name: string;
  private readonly file: string;
  private readonly state: PresenceFile;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly o: {
      dataDir: string;
      redis: Redis;
      prefix: string;
      concurrency: number;
      /** Ends the process groups a run's ledger records (the run folder's runtime/processes.json); the sentence saying what. */
      endRunLeftovers: (runId: string) => Promise<string>;
    },
  ) {
    const host = hostname();
    this.name = `${host}-${process.pid}`;
    this.file = join(clusterDir(o.dataDir), `${this.name}.json`);
    const now = new Date().toISOString();
    this.state = { host, pid: process.pid, token: randomUUID(), started_at: now, beat_at: now, concurrency: o.concurrency, running: [] };
  }

  /** Ends what dead workers of this host left running, then announces this one. */
  async start(): Promise<{ ended: string[] }> {
    mkdirSync(clusterDir(this.o.dataDir), { recursive: true });
    const ended = await endLeftoversOfDeadWorkers(this.o.dataDir, this.o.endRunLeftovers);
    this.beat();
    this.timer = setInterval(() => this.beat(), PRESENCE_BEAT_MS);
    this.timer.unref();
    return { ended };
  }

  /** The runs this worker holds: written at once (a kill -9 may follow the next spawn). */
  setRunning(runIds: string[]): void {
    this.state.running = runIds;
    this.writeFile();
  }

  private beat(): void {
    this.state.beat_at = new Date().toISOString();
    this.writeFile();
    void this.o.redis
      .set(
        presenceKey(this.o.prefix, this.name),
        JSON.stringify({ host: this.state.host, pid: this.state.pid, token: this.state.token, beat_at: this.state.beat_at }),
        'EX',
        PRESENCE_TTL_S,
      )
      .catch(() => undefined); // Redis away: the key comes back with the next beat
  }

  private writeFile(): void {
    try {
      const tmp = `${this.file}.tmp`;
      writeFileSync(tmp, `${JSON.stringify(this.state, null, 2)}\n`);
      renameSync(tmp, this.file);
    } catch {
      // a data dir that is away: doctor reports the missing file
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    rmSync(this.file, { force: true });
    await this.o.redis.del(presenceKey(this.o.prefix, this.name)).catch(() => undefined);
  }
}

/** Presence files of this host whose worker is gone: the process groups of their runs are ended. */
export async function endLeftoversOfDeadWorkers(dataDir: string, endRunLeftovers: (runId: string) => Promise<string>): Promise<string[]> {
  const dir = clusterDir(dataDir);
  const host = hostname();
  const lines: string[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return lines;
  }
  for (const n of names) {
    const p = readPresence(join(dir, n));
    if (!p || p.host !== host || p.pid === process.pid || alive(p.pid)) continue;
    for (const runId of p.running) {
      const what = await endRunLeftovers(runId);
      if (what) lines.push(`${runId}: ${what}`);
    }
    rmSync(join(dir, n), { force: true });
  }
  return lines;
}

/** What doctor compares: every worker Redis knows, and whether its file is on this node's data dir. */
export async function workersSeen(
  dataDir: string,
  redis: Redis,
  prefix: string,
): Promise<Array<{ name: string; beatAt: string; file: 'same' | 'missing' | 'different' }>> {
  const out: Array<{ name: string; beatAt: string; file: 'same' | 'missing' | 'different' }> = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', presenceKey(prefix, '*'), 'COUNT', 100);
    cursor = next;
    for (const key of keys) {
      const raw = await redis.get(key);
      if (!raw) continue;
      const v = JSON.parse(raw) as { token: string; beat_at: string };
      const name = key.slice(presenceKey(prefix, '').length);
      const file = readPresence(join(clusterDir(dataDir), `${name}.json`));
      out.push({ name, beatAt: v.beat_at, file: file === null ? 'missing' : file.token === v.token ? 'same' : 'different' });
    }
  } while (cursor !== '0');
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Whether the worker that owns a run (`ownerFile`, its run folder's owner record) is gone: dead on
 * this host, or its presence file silent for `staleMs` (missing, or its last beat that old). Works with Redis away.
 */
export function runOwnerGone(dataDir: string, ownerFile: string, staleMs = 60_000): boolean {
  let owner: { pid?: unknown; host?: unknown };
  let ownerAge: number;
  try {
    owner = JSON.parse(readFileSync(ownerFile, 'utf8')) as { pid?: unknown; host?: unknown };
    ownerAge = Date.now() - statSync(ownerFile).mtimeMs;
  } catch {
    return false; // nothing to go by: the stalled check decides
  }
  if (typeof owner.pid !== 'number' || typeof owner.host !== 'string') return false;
  if (owner.host === hostname() && !alive(owner.pid)) return true;
  const p = readPresence(join(clusterDir(dataDir), `${owner.host}-${owner.pid}.json`));
  if (!p) return ownerAge > staleMs;
  return Date.now() - Date.parse(p.beat_at) > staleMs;
}
