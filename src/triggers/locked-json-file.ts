/**
 * A small JSON file several processes on one data dir may change (a server and a CLI, two servers):
 * each change reads the file fresh, applies, and replaces it (tmp + rename, owner-only), under a lock
 * that is a directory (mkdir is atomic); a lock older than `staleMs` was left by a dead process and is
 * taken over. Within one process, the changes that came while the lock was held or awaited are applied
 * together, in order, in the next turn: one lock, one read, one write for all of them. Without this,
 * 100 schedules due at one instant made about 300 serial lock-read-write turns (claim, run started,
 * run ended): `npm run bench -- triggers` had their fires claimed 636 ms late at p50, 1938 ms at p99
 * (creating the same 100 runs directly: 197 / 660 ms); with the turns shared, 132 / 187 ms (baseline
 * 57 / 116 ms in that run), and 43 / 45 ms once a claim also returned the schedule (baseline 43 / 100).
 */
import { mkdir, readFile, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface PendingChange<T> {
  change: (value: T) => { result: unknown; changed: boolean };
  resolve: (result: unknown) => void;
  reject: (e: unknown) => void;
}

export class LockedJsonFile<T> {
  /** changes not yet applied, in the order they were asked for */
  private pending: PendingChange<T>[] = [];
  /** the turns applying `pending`, while there are any */
  private draining: Promise<void> | null = null;
  private tmpSeq = 0;

  constructor(
    readonly path: string,
    private readonly empty: () => T,
    private readonly opts: { staleMs?: number; waitMs?: number } = {},
  ) {}

  /** The file as it is now (empty when missing). */
  async read(): Promise<T> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as T;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return this.empty();
      throw new Error(`${this.path} cannot be read: ${(e as Error).message}`);
    }
  }

  /** When the file last changed (ms), or 0 when it does not exist: a cheap "did anyone write?". */
  async mtime(): Promise<number> {
    try {
      return (await stat(this.path)).mtimeMs;
    } catch {
      return 0;
    }
  }

  /**
   * Applies `change` to the current content under the lock, after the changes asked for before it.
   * It returns its result and whether the content changed (the file is written when any change of
   * the turn did). It must not throw for a valid value; one that throws is refused alone, so it must
   * throw before it changes anything. Resolves once the file holds the change.
   */
  update<R>(change: (value: T) => { result: R; changed: boolean }): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ change, resolve: resolve as (result: unknown) => void, reject });
      this.draining ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    while (this.pending.length) await this.turn();
    this.draining = null;
  }

  /** One lock, one read, every change waiting by then, one write; each caller answered after the lock is let go. */
  private async turn(): Promise<void> {
    const lock = `${this.path}.lock`;
    try {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      await this.acquire(lock);
    } catch (e) {
      for (const p of this.pending.splice(0)) p.reject(e);
      return;
    }
    // taken once the lock is held: what came while waiting for it goes in this turn too
    const batch = this.pending.splice(0);
    const outcomes: ({ ok: true; result: unknown } | { ok: false; error: unknown })[] = [];
    try {
      const value = await this.read();
      let changed = false;
      for (const p of batch) {
        try {
          const r = p.change(value);
          changed ||= r.changed;
          outcomes.push({ ok: true, result: r.result });
        } catch (error) {
          outcomes.push({ ok: false, error });
        }
      }
      if (changed) {
        const tmp = `${this.path}.${process.pid}.${++this.tmpSeq}.tmp`;
        await writeFile(tmp, JSON.stringify(value), { mode: 0o600 });
        await rename(tmp, this.path);
      }
    } catch (error) {
      // unreadable, or not written: no change of this turn holds
      outcomes.splice(0, outcomes.length, ...batch.map(() => ({ ok: false as const, error })));
    } finally {
      await rmdir(lock).catch(() => undefined);
    }
    batch.forEach((p, i) => {
      const o = outcomes[i];
      if (o.ok) p.resolve(o.result);
      else p.reject(o.error);
    });
  }

  private async acquire(lock: string): Promise<void> {
    const staleMs = this.opts.staleMs ?? 10_000;
    const end = Date.now() + (this.opts.waitMs ?? 15_000);
    for (let wait = 2; ; wait = Math.min(wait * 2, 50)) {
      try {
        await mkdir(lock, { mode: 0o700 });
        return;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      }
      const held = await stat(lock).catch(() => null);
      if (held && Date.now() - held.mtimeMs > staleMs) {
        // left by a process that died holding it
        await rmdir(lock).catch(() => undefined);
        continue;
      }
      if (Date.now() > end) throw new Error(`${this.path} is locked by another process (${lock}); remove the folder if no Runtrail is running`);
      await sleep(wait);
    }
  }
}
