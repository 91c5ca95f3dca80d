/**
 * Checkpoints of several nodes: each run's checkpoint records in PostgreSQL (`runtrail_checkpoints`),
 * where the worker that takes up a dead worker's run reads them. The records of a burst are one
 * multi-row INSERT (one transaction: all of them or none), bursts are committed one after another
 * in the order they were appended, and the table's serial id keeps that order: what a reader gets
 * is always a whole prefix of what was appended. It keeps the lines the runtime made (the file's
 * checksummed form), so a damaged row is found as a damaged line would be.
 */
import type pg from 'pg';
import type { CheckpointLog } from '../runtime/checkpoint/checkpoint-log.js';
import type { CheckpointLineStore } from '../runtime/checkpoint/checkpoint-store.js';

/** The table, created with the run store's schema. */
export const CHECKPOINTS_SQL = (s: string) => `
CREATE TABLE IF NOT EXISTS ${s}.runtrail_checkpoints (
  id bigserial PRIMARY KEY,
  run_id text NOT NULL,
  line text NOT NULL
);
CREATE INDEX IF NOT EXISTS runtrail_checkpoints_run ON ${s}.runtrail_checkpoints (run_id, id);`;

/** At most this many records in one INSERT. */
const BATCH = 500;

export class PgCheckpointStore implements CheckpointLineStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly table: string,
    /** How long a commit is retried while the database is away before the log gives up. */
    private readonly retryMs = 60_000,
  ) {}

  open(runId: string): CheckpointLog<string> {
    // a commit is all or nothing: there is no torn record to cut off before a resumed attempt appends
    return new PgCheckpointLog(runId, this.pool, this.table, this.retryMs);
  }

  async read(runId: string): Promise<string[]> {
    const r = await this.pool.query<{ line: string }>(`SELECT line FROM ${this.table} WHERE run_id = $1 ORDER BY id`, [runId]);
    return r.rows.map((x) => x.line);
  }

  async note(runId: string, line: string): Promise<void> {
    await this.pool.query(`INSERT INTO ${this.table} (run_id, line) VALUES ($1, $2)`, [runId, line]);
  }

  where(runId: string): string {
    return `PostgreSQL ${this.table} (run ${runId})`;
  }

  async forget(runId: string): Promise<void> {
    await this.pool.query(`DELETE FROM ${this.table} WHERE run_id = $1`, [runId]);
  }
}

/** One live attempt's records on their way to the table. */
class PgCheckpointLog implements CheckpointLog<string> {
  /** lines appended and not yet committed, in order */
  private pending: string[] = [];
  /** the line queued by appendLast, not made yet */
  private last: (() => string) | null = null;
  private scheduled = false;
  private chain: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  private closed = false;

  constructor(
    private readonly runId: string,
    private readonly pool: pg.Pool,
    private readonly table: string,
    private readonly retryMs: number,
  ) {}

  /** Queues the record: the records of one synchronous burst are committed together, after the ones before. */
  append(line: string): void {
    if (this.closed || this.failure) return;
    this.settleLast();
    this.pending.push(line);
    this.queueCommit();
  }

  appendLast(make: () => string): void {
    if (this.closed || this.failure) return;
    this.last = make;
    this.queueCommit();
  }

  settleLast(): void {
    const make = this.last;
    if (!make) return;
    this.last = null;
    try {
      this.pending.push(make());
    } catch (e) {
      // a record that cannot be serialised is not written; durable() says why
      this.failure ??= e as Error;
    }
  }

  private queueCommit(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => this.schedule());
  }

  private schedule(): void {
    this.scheduled = false;
    this.settleLast();
    this.chain = this.chain.then(() => this.commit());
  }

  /** Commits what is pending, a batch per transaction; a database that stays away past `retryMs` ends the log
   *  (what was committed is a whole prefix: a later record never lands without the ones before it). */
  private async commit(): Promise<void> {
    while (this.pending.length && !this.failure) {
      const batch = this.pending.slice(0, BATCH);
      const values: string[] = [];
      const args: unknown[] = [];
      for (const line of batch) values.push(`($${args.push(this.runId)}, $${args.push(line)})`);
      const until = Date.now() + this.retryMs;
      for (let attempt = 0; ; attempt++) {
        try {
          await this.pool.query(`INSERT INTO ${this.table} (run_id, line) VALUES ${values.join(', ')}`, args);
          this.pending.splice(0, batch.length);
          break;
        } catch (e) {
          if (Date.now() >= until) {
            this.failure = e as Error;
            this.pending = [];
            break;
          }
          await new Promise((r) => setTimeout(r, Math.min(2_000, 25 * 2 ** Math.min(attempt, 7))));
        }
      }
    }
  }

  async durable(): Promise<void> {
    this.settleLast();
    if (this.pending.length && !this.scheduled) this.schedule();
    while (this.scheduled || this.pending.length) {
      if (this.scheduled) this.schedule();
      await this.chain;
      if (this.failure) break;
    }
    await this.chain;
    if (this.failure) throw this.failure;
  }

  async close(): Promise<void> {
    await this.durable().catch(() => undefined);
    this.closed = true;
  }
}
