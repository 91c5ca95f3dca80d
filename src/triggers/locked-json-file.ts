/**
 * A small JSON file several processes on one data dir may change (a server and a CLI, two servers):
 * each change reads the file fresh, applies, and replaces it (tmp + rename, owner-only), under a lock
 * that is a directory (mkdir is atomic); a lock older than `staleMs` was left by a dead process and is
 * taken over. Changes within one process are also chained, so they never race each other.
 */
import { mkdir, readFile, rename, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class LockedJsonFile<T> {
  private chain: Promise<unknown> = Promise.resolve();
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
   * Applies `change` to the current content under the lock. It returns its result and whether the
   * content changed (only then is the file written). Must not throw for a valid value.
   */
  update<R>(change: (value: T) => { result: R; changed: boolean }): Promise<R> {
    const next = this.chain.then(() => this.locked(change));
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async locked<R>(change: (value: T) => { result: R; changed: boolean }): Promise<R> {
    const lock = `${this.path}.lock`;
    await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    await this.acquire(lock);
    try {
      const value = await this.read();
      const { result, changed } = change(value);
      if (changed) {
        const tmp = `${this.path}.${process.pid}.${++this.tmpSeq}.tmp`;
        await writeFile(tmp, JSON.stringify(value), { mode: 0o600 });
        await rename(tmp, this.path);
      }
      return result;
    } finally {
      await rmdir(lock).catch(() => undefined);
    }
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
