/**
 * A run's disk budget: how much its processes may add, all together, to the places they write on the
 * host (its workspace, its workdirs, the policy's `write` paths). What those places hold when the
 * run's first process starts is the baseline; while any of its processes live, `du` (allocated
 * blocks, so sparse and preallocated files count as what they take; symlinks not followed; hard
 * links once) measures them again, in a child process so a tree of a million small files never
 * holds the server's own threads, at least every WATCH_MIN_MS and no more often than twice the last
 * measurement took. Past the cap the run's processes are stopped and told why, and a new one is
 * refused until the run is back under it. Each file is bounded at once by RLIMIT_FSIZE (at most
 * the cap), and the private /tmp of each sandbox is a tmpfs of the cap's size, so what overshoots
 * between two measurements is bounded by what the processes can write in that time.
 */
import { execFile } from 'node:child_process';

const WATCH_MIN_MS = 200;
const DU_TIMEOUT_MS = 60_000;

/** Allocated bytes under `roots` (each path once), as `du` counts them; null when du could not answer. */
export function allocatedBytes(roots: string[]): Promise<number | null> {
  if (roots.length === 0) return Promise.resolve(0);
  return new Promise((resolve) => {
    execFile(
      'du',
      ['-s', '-P', '--block-size=1', '--total', '--', ...roots],
      { timeout: DU_TIMEOUT_MS, maxBuffer: 1 << 20, env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' } },
      (_err, stdout) => {
        // a folder du may not read (a run's 000 folder) is skipped with a message; the total still comes
        const total = /^(\d+)\s+total$/m.exec(String(stdout));
        resolve(total ? Number(total[1]) : null);
      },
    );
  });
}

export class DiskCapExceeded extends Error {
  readonly code = 'sandbox_disk_cap';
}

export interface DiskBudgetOptions {
  capBytes: number;
  /** Called once each time the run goes over the cap, with what it added. */
  onOver: (message: string) => void;
  /** Where the cap is set, in the operator's words (for the message). */
  setting?: string;
  measure?: (roots: string[]) => Promise<number | null>;
}

export class DiskBudget {
  private readonly roots = new Set<string>();
  private baseline = 0;
  private started = false;
  private live = 0;
  private timer: NodeJS.Timeout | null = null;
  private measuring: Promise<number | null> | null = null;
  private lastAdded = 0;
  private over = false;

  constructor(private readonly o: DiskBudgetOptions) {}

  /** Adds places to watch; their content now joins the baseline. */
  async watch(roots: string[]): Promise<void> {
    const fresh = roots.filter((r) => !this.roots.has(r));
    if (fresh.length === 0 && this.started) return;
    const before = fresh.length ? ((await (this.o.measure ?? allocatedBytes)(fresh)) ?? 0) : 0;
    for (const r of fresh) this.roots.add(r);
    this.baseline += before;
    this.started = true;
  }

  private message(added: number): string {
    const mib = (n: number) => (n / 1024 / 1024).toFixed(1);
    return `the run's processes wrote ${mib(added)} MiB to its workspace and workdirs, over its disk cap of ${mib(this.o.capBytes)} MiB (${this.o.setting ?? 'sandbox.limits.disk_mb'}); its processes were stopped and no more start while it is over (the operator raises the cap in config.json)`;
  }

  /** Measures now (one measurement at a time); what the run added since its baseline. */
  private async added(): Promise<number | null> {
    this.measuring ??= (this.o.measure ?? allocatedBytes)([...this.roots]).finally(() => {
      this.measuring = null;
    });
    const now = await this.measuring;
    return now === null ? null : Math.max(0, now - this.baseline);
  }

  /** Before a process starts: refused while the run is over its cap (measured again first). */
  async admit(): Promise<void> {
    if (!this.over) return;
    const added = await this.added();
    if (added !== null && added > this.o.capBytes) throw new DiskCapExceeded(this.message(added));
    this.over = false;
  }

  /** A process of the run started: measured until the last one ends. Returns what to call when it ends. */
  track(): () => void {
    this.live++;
    if (!this.timer) this.schedule(0);
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.live--;
    };
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.tick(), ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const t0 = Date.now();
    const added = await this.added();
    if (added !== null) {
      this.lastAdded = added;
      if (added > this.o.capBytes && !this.over) {
        this.over = true;
        this.o.onOver(this.message(added));
      } else if (added <= this.o.capBytes) this.over = false;
    }
    if (this.live > 0) this.schedule(Math.max(WATCH_MIN_MS, 2 * (Date.now() - t0)));
    else this.timer = null;
  }

  /** What the run had added at the last measurement (bytes). */
  get addedBytes(): number {
    return this.lastAdded;
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
