/**
 * The audit log: `<dataDir>/tenants/audit.jsonl`, append-only, one JSON object a line, each carrying
 * `seq` and `prev`, the SHA-256 of the line before it (64 zeros for the first). `audit.head` holds
 * the last line's seq and hash, so an edit of the last line or a cut of the end is found too.
 * Appends from several processes on one data dir are serialised by a lock folder (mkdir is atomic).
 * `verify` names the first line that was edited or removed. Secrets never enter it: actors are named
 * by user and key id.
 */
import { createHash } from 'node:crypto';
import { appendFile, mkdir, open, readFile, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const GENESIS = '0'.repeat(64);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface AuditActor {
  tenant: string;
  user: string;
  key_id: string | null;
}

/** What happened, as the caller describes it; time, seq and prev are the log's. */
export interface AuditEvent {
  action: string;
  actor: AuditActor | null;
  /** the tenant the action concerns */
  tenant: string | null;
  ip?: string;
  request_id?: string;
  target?: string;
  outcome?: string;
  before?: unknown;
  after?: unknown;
}

export interface AuditLine extends AuditEvent {
  seq: number;
  time: string;
  prev: string;
}

export interface AuditProblem {
  /** 1-based line number in the file */
  line: number;
  message: string;
}

function sha(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function auditPaths(dataDir: string): { log: string; head: string; lock: string } {
  const dir = join(dataDir, 'tenants');
  return { log: join(dir, 'audit.jsonl'), head: join(dir, 'audit.head'), lock: join(dir, 'audit.lock') };
}

export class AuditLog {
  private chain: Promise<unknown> = Promise.resolve();
  private readonly paths: ReturnType<typeof auditPaths>;

  constructor(
    readonly dataDir: string,
    private readonly now: () => number = Date.now,
  ) {
    this.paths = auditPaths(dataDir);
  }

  /** Appends one event; resolves once it is on disk. Appends of this process go in order. */
  append(ev: AuditEvent): Promise<AuditLine> {
    const next = this.chain.then(() => this.locked(() => this.appendNow(ev)));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async appendNow(ev: AuditEvent): Promise<AuditLine> {
    const head = await this.readHead();
    const line: AuditLine = { seq: head.seq + 1, time: new Date(this.now()).toISOString(), ...dropUndefined(ev), prev: head.hash };
    const text = JSON.stringify(line);
    await appendFile(this.paths.log, `${text}\n`, { mode: 0o600 });
    const tmp = `${this.paths.head}.${process.pid}.tmp`;
    await writeFile(tmp, JSON.stringify({ seq: line.seq, hash: sha(text) }), { mode: 0o600 });
    await rename(tmp, this.paths.head);
    return line;
  }

  private async readHead(): Promise<{ seq: number; hash: string }> {
    try {
      const h = JSON.parse(await readFile(this.paths.head, 'utf8')) as { seq: number; hash: string };
      if (Number.isInteger(h.seq) && typeof h.hash === 'string') return h;
    } catch {
      // no head yet: a new log
    }
    return { seq: 0, hash: GENESIS };
  }

  private async locked<R>(fn: () => Promise<R>): Promise<R> {
    await mkdir(join(this.dataDir, 'tenants'), { recursive: true, mode: 0o700 });
    const end = Date.now() + 15_000;
    for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
      try {
        await mkdir(this.paths.lock);
        break;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const st = await stat(this.paths.lock).catch(() => null);
        // a lock left by a process that died mid-append
        if (st && Date.now() - st.mtimeMs > 10_000) await rmdir(this.paths.lock).catch(() => undefined);
        else if (Date.now() > end) throw new Error(`the audit log is locked (${this.paths.lock}); is another process stuck?`);
        else await sleep(wait);
      }
    }
    try {
      return await fn();
    } finally {
      await rmdir(this.paths.lock).catch(() => undefined);
    }
  }

  /** Every line, oldest first, kept by `filter`. */
  async read(filter: (l: AuditLine) => boolean = () => true): Promise<AuditLine[]> {
    const text = await readFile(this.paths.log, 'utf8').catch((e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') return '';
      throw e;
    });
    const out: AuditLine[] = [];
    for (const raw of text.split('\n')) {
      if (!raw) continue;
      try {
        const l = JSON.parse(raw) as AuditLine;
        if (filter(l)) out.push(l);
      } catch {
        // an unreadable line is verify's to name
      }
    }
    return out;
  }

  /** The first problem of the chain (an edited, removed or unreadable line), or null when it holds. */
  async verify(): Promise<{ lines: number; problem: AuditProblem | null }> {
    const fh = await open(this.paths.log, 'r').catch(() => null);
    const text = fh ? await fh.readFile('utf8').finally(() => fh.close()) : '';
    const lines = text.split('\n');
    if (lines[lines.length - 1] === '') lines.pop();
    let prevHash = GENESIS;
    let prevSeq = 0;
    for (let i = 0; i < lines.length; i++) {
      const n = i + 1;
      let l: AuditLine;
      try {
        l = JSON.parse(lines[i]) as AuditLine;
      } catch {
        return { lines: lines.length, problem: { line: n, message: `line ${n} is not JSON: it was edited` } };
      }
      if (l.seq !== prevSeq + 1) {
        const gone = l.seq - prevSeq - 1;
        return {
          lines: lines.length,
          problem: {
            line: n,
            message: `line ${n} has seq ${l.seq} after seq ${prevSeq}: ${gone > 0 ? `${gone} line(s) (seq ${prevSeq + 1}${gone > 1 ? `..${l.seq - 1}` : ''}) were removed before it` : 'lines were reordered or copied'}`,
          },
        };
      }
      if (l.prev !== prevHash) {
        return { lines: lines.length, problem: { line: n - 1, message: `line ${n - 1} (seq ${prevSeq}) was edited: line ${n} holds a different hash of it` } };
      }
      prevHash = sha(lines[i]);
      prevSeq = l.seq;
    }
    const head = await this.readHead();
    if (head.seq !== prevSeq) {
      return {
        lines: lines.length,
        problem: {
          line: lines.length + 1,
          message: `the log ends at seq ${prevSeq} but ${head.seq} were written: line(s) seq ${prevSeq + 1}..${head.seq} were removed from its end`,
        },
      };
    }
    if (head.hash !== prevHash) {
      return { lines: lines.length, problem: { line: lines.length, message: `line ${lines.length} (seq ${prevSeq}), the last, was edited` } };
    }
    return { lines: lines.length, problem: null };
  }
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}
