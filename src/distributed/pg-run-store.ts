/**
 * The RunStore of several nodes: run records and every event in PostgreSQL. Events are
 * committed in batches — in seq order, one transaction (a multi-row INSERT) per batch — before anyone sees them (the
 * fan-out publishes a batch only after its commit); records and event lines keep the exact JSON the
 * run wrote, so a run replays byte for byte from here as from its events.jsonl. The run folders on
 * the shared data dir are written too (status, events.jsonl), so every file tool keeps working.
 */
import pg from 'pg';
import { isTerminalRunEvent, type AgentEvent, type RunStatus } from '../events/agent-event.js';
import type { RunEventLog, RunStore } from '../runtime/storage/run-store.js';
import type { RunListQuery, RunStatusFile } from '../runtime/run-service-types.js';
import type { RunWorkspace } from '../runtime/storage/run-workspace.js';
import { redactServiceUrl, ServiceUnavailableError } from './service-url.js';
import { CHECKPOINTS_SQL, PgCheckpointStore } from './pg-checkpoint-store.js';

const TERMINAL: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export interface PgRunStoreOptions {
  /** RUNTRAIL_DATABASE_URL */
  url: string;
  /** Tables live in this schema (created when missing); default `public`. */
  schema?: string;
  /** The run folder's own events.jsonl (kept beside the database copy). */
  fileLog: (runId: string, root: string) => RunEventLog;
  /** Called with each committed batch (and its JSON lines), in order: the fan-out makes it live. */
  onCommitted?: (runId: string, events: AgentEvent[], lines: string[]) => void;
  /** How long a batch gathers events before it is committed; default 0: a batch is what arrived while
   *  the previous commit was on its way (terminal events at once). */
  batchMs?: number;
  /** How long a status write is retried while the database is away; default 60 s. */
  saveRetryMs?: number;
}

const SCHEMA_SQL = (s: string) => `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.runtrail_runs (
  run_id text PRIMARY KEY,
  status text NOT NULL,
  plugin text NOT NULL,
  conversation_id text NOT NULL,
  record text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS runtrail_runs_conversation ON ${s}.runtrail_runs (conversation_id);
CREATE INDEX IF NOT EXISTS runtrail_runs_status ON ${s}.runtrail_runs (status);
ALTER TABLE ${s}.runtrail_runs ADD COLUMN IF NOT EXISTS attempt integer NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS ${s}.runtrail_events (
  run_id text NOT NULL,
  seq integer NOT NULL,
  line text NOT NULL,
  PRIMARY KEY (run_id, seq)
);
${CHECKPOINTS_SQL(s)}`;

/** An error of the connection (refused, reset, timed out, the server shutting down), not of a statement. */
export function isConnectionError(e: unknown): boolean {
  if (e instanceof pg.DatabaseError) return /^(08|57P)/.test(e.code ?? '');
  return e instanceof Error;
}

function ident(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new TypeError(`RUNTRAIL_DATABASE_SCHEMA must be a lowercase identifier, got ${JSON.stringify(schema)}`);
  return `"${schema}"`;
}

export class PgRunStore implements RunStore {
  readonly shared = true;
  private readonly t: { runs: string; events: string };
  /** Each run's checkpoint records, for the worker that takes it up after its own died. */
  readonly checkpoints: PgCheckpointStore;
  private counts: Partial<Record<RunStatus, number>> = {};
  private countTimer: NodeJS.Timeout | undefined;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly o: PgRunStoreOptions,
    schema: string,
  ) {
    this.t = { runs: `${schema}.runtrail_runs`, events: `${schema}.runtrail_events` };
    this.checkpoints = new PgCheckpointStore(pool, `${schema}.runtrail_checkpoints`, o.saveRetryMs ?? 60_000);
  }

  /** Connects and creates or migrates the schema (idempotent, safe when several nodes start at once). */
  static async connect(o: PgRunStoreOptions): Promise<PgRunStore> {
    const schema = ident(o.schema ?? 'public');
    const pool = new pg.Pool({ connectionString: o.url, max: 10, connectionTimeoutMillis: 5_000 });
    pool.on('error', () => undefined); // an idle client that dies is replaced; queries report their own errors
    try {
      const c = await pool.connect();
      try {
        await c.query('BEGIN');
        // one node creates the tables, the others wait for it
        await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`runtrail:schema:${schema}`]);
        await c.query(SCHEMA_SQL(schema));
        await c.query('COMMIT');
      } catch (e) {
        await c.query('ROLLBACK').catch(() => undefined);
        throw e;
      } finally {
        c.release();
      }
    } catch (e) {
      await pool.end().catch(() => undefined);
      throw new ServiceUnavailableError('PostgreSQL', redactServiceUrl(o.url), (e as Error).message);
    }
    const store = new PgRunStore(pool, o, schema);
    await store.refreshCounts();
    store.countTimer = setInterval(() => void store.refreshCounts().catch(() => undefined), 2_000);
    store.countTimer.unref();
    return store;
  }

  /** A query whose lost connection becomes ServiceUnavailableError (the API's 503). */
  private async query<R extends pg.QueryResultRow>(sql: string, args: unknown[] = []): Promise<pg.QueryResult<R>> {
    try {
      return await this.pool.query<R>(sql, args);
    } catch (e) {
      if (isConnectionError(e)) throw new ServiceUnavailableError('PostgreSQL', redactServiceUrl(this.o.url), (e as Error).message);
      throw e;
    }
  }

  /** Whether the database answers now (a create checks before it writes anything). */
  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async init(): Promise<void> {
    // the schema is made by connect(); interrupted runs are found by the queue's stalled check
  }

  private async refreshCounts(): Promise<void> {
    const r = await this.query<{ status: RunStatus; n: string }>(`SELECT status, count(*) AS n FROM ${this.t.runs} GROUP BY status`);
    this.counts = Object.fromEntries(r.rows.map((x) => [x.status, Number(x.n)]));
  }

  async get(runId: string): Promise<RunStatusFile | null> {
    const r = await this.query<{ record: string }>(`SELECT record FROM ${this.t.runs} WHERE run_id = $1`, [runId]);
    return r.rows[0] ? (JSON.parse(r.rows[0].record) as RunStatusFile) : null;
  }

  async list(q: RunListQuery): Promise<{ runs: RunStatusFile[]; total: number }> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (q.status) where.push(`status = $${args.push(q.status)}`);
    if (q.statuses) where.push(`status = ANY($${args.push([...q.statuses])})`);
    if (q.plugin) where.push(`plugin = $${args.push(q.plugin)}`);
    if (q.conversation) where.push(`conversation_id = $${args.push(q.conversation)}`);
    if (q.tenant !== undefined) where.push(`coalesce(record::jsonb ->> 'tenant_id', 'default') = $${args.push(q.tenant)}`);
    if (q.model) {
      const n = args.push(q.model);
      where.push(`((record::jsonb ->> 'model') = $${n} OR (record::jsonb ->> 'provider') || ':' || (record::jsonb ->> 'model') = $${n})`);
    }
    // the goal's words anywhere, as the user typed them (LIKE's own characters taken literally)
    if (q.goal) where.push(`(record::jsonb ->> 'goal') ILIKE '%' || $${args.push(q.goal.replace(/[\\%_]/g, (c) => `\\${c}`))} || '%'`);
    const w = where.length ? `WHERE ${where.join(' AND ')}` : '';
    const limit = Math.max(0, q.limit ?? 50);
    const offset = Math.max(0, q.offset ?? 0);
    const [rows, count] = await Promise.all([
      this.query<{ record: string }>(`SELECT record FROM ${this.t.runs} ${w} ORDER BY run_id DESC LIMIT ${limit} OFFSET ${offset}`, args),
      this.query<{ n: string }>(`SELECT count(*) AS n FROM ${this.t.runs} ${w}`, args),
    ]);
    return { runs: rows.rows.map((r) => JSON.parse(r.record) as RunStatusFile), total: Number(count.rows[0].n) };
  }

  async endedInConversation(conversationId: string, limit: number): Promise<RunStatusFile[]> {
    const r = await this.query<{ record: string }>(
      `SELECT record FROM ${this.t.runs} WHERE conversation_id = $1 AND status = ANY($2) ORDER BY run_id DESC LIMIT ${Math.max(0, limit)}`,
      [conversationId, TERMINAL],
    );
    return r.rows.map((x) => JSON.parse(x.record) as RunStatusFile).reverse();
  }

  /** Runs waiting for a worker longer than `olderThanMs` (the queue may have lost them: Redis flushed). */
  async queuedRuns(olderThanMs: number): Promise<string[]> {
    const r = await this.query<{ run_id: string }>(
      `SELECT run_id FROM ${this.t.runs} WHERE status = 'queued' AND updated_at < now() - ($1 || ' milliseconds')::interval`,
      [String(olderThanMs)],
    );
    return r.rows.map((x) => x.run_id);
  }

  async activeRuns(olderThanMs: number): Promise<string[]> {
    const r = await this.query<{ run_id: string }>(
      `SELECT run_id FROM ${this.t.runs} WHERE status <> 'queued' AND status <> ALL($2) AND updated_at < now() - ($1 || ' milliseconds')::interval`,
      [String(olderThanMs), TERMINAL],
    );
    return r.rows.map((x) => x.run_id);
  }

  note(): void {
    // the database is the index; counts are refreshed from it
  }

  /** Status records are retried while the database is away (for `saveRetryMs`): a worker's run is not
   *  left half-written by a restart of PostgreSQL. */
  async save(status: RunStatusFile, workspace: RunWorkspace): Promise<void> {
    const until = Date.now() + (this.o.saveRetryMs ?? 60_000);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.upsert(status);
        break;
      } catch (e) {
        if (!(e instanceof ServiceUnavailableError) || Date.now() >= until) throw e;
        await new Promise((r) => setTimeout(r, Math.min(5_000, 50 * 2 ** Math.min(attempt, 7))));
      }
    }
    await workspace.folder.writeStatus(status);
  }

  async forget(runId: string): Promise<void> {
    await this.checkpoints.forget(runId);
    await this.query(`DELETE FROM ${this.t.events} WHERE run_id = $1`, [runId]);
    await this.query(`DELETE FROM ${this.t.runs} WHERE run_id = $1`, [runId]);
    await this.refreshCounts();
  }

  private async upsert(status: RunStatusFile): Promise<void> {
    await this.query(
      `INSERT INTO ${this.t.runs} (run_id, status, plugin, conversation_id, record, updated_at) VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (run_id) DO UPDATE SET status = EXCLUDED.status, record = EXCLUDED.record, updated_at = now()
       WHERE ${this.t.runs}.status <> ALL($6) OR ${this.t.runs}.status = EXCLUDED.status`,
      [status.run_id, status.status, status.plugin, status.conversation_id, JSON.stringify(status), TERMINAL],
    );
  }

  /**
   * Takes a run that is not finished to `status` — exactly once across every node (a conditional
   * update); false when another node (or its worker) ended it first.
   */
  async claimTerminal(status: RunStatusFile): Promise<boolean> {
    const r = await this.query(`UPDATE ${this.t.runs} SET status = $2, record = $3, updated_at = now() WHERE run_id = $1 AND status <> ALL($4)`, [
      status.run_id,
      status.status,
      JSON.stringify(status),
      TERMINAL,
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  /**
   * Takes up attempt `attempt` of a run whose worker stopped — exactly once across every node (a
   * conditional update, as claimTerminal's); false when another node took it, or the run ended.
   */
  async claimResume(runId: string, attempt: number): Promise<boolean> {
    const r = await this.query(`UPDATE ${this.t.runs} SET attempt = $2, updated_at = now() WHERE run_id = $1 AND attempt < $2 AND status <> ALL($3)`, [
      runId,
      attempt,
      TERMINAL,
    ]);
    return (r.rowCount ?? 0) > 0;
  }

  async insertEvents(runId: string, events: AgentEvent[]): Promise<void> {
    for (let i = 0; i < events.length; i += 500) {
      const batch = events.slice(i, i + 500);
      const values: string[] = [];
      const args: unknown[] = [];
      for (const e of batch) values.push(`($${args.push(runId)}, $${args.push(e.seq)}, $${args.push(JSON.stringify(e))})`);
      await this.query(`INSERT INTO ${this.t.events} (run_id, seq, line) VALUES ${values.join(', ')} ON CONFLICT (run_id, seq) DO NOTHING`, args);
    }
  }

  openLog(runId: string, root: string): RunEventLog {
    return new PgEventLog(runId, this.o.fileLog(runId, root), this.pool, this.t.events, this.o.onCommitted, this.o.batchMs ?? 0);
  }

  async readEvents(runId: string, after: number): Promise<AgentEvent[]> {
    const r = await this.query<{ line: string }>(`SELECT line FROM ${this.t.events} WHERE run_id = $1 AND seq > $2 ORDER BY seq`, [runId, after]);
    return r.rows.map((x) => JSON.parse(x.line) as AgentEvent);
  }

  countByState(): Partial<Record<RunStatus, number>> {
    return { ...this.counts };
  }

  async close(): Promise<void> {
    clearInterval(this.countTimer);
    await this.pool.end().catch(() => undefined);
  }
}

/** A run's events: the run folder's file at once, the database in committed batches. */
class PgEventLog implements RunEventLog {
  private pending: Array<{ ev: AgentEvent; line: string }> = [];
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private timerMs = 0;
  private closed = false;
  private failures = 0;

  constructor(
    private readonly runId: string,
    private readonly file: RunEventLog,
    private readonly pool: pg.Pool,
    private readonly table: string,
    private readonly onCommitted: PgRunStoreOptions['onCommitted'],
    private readonly batchMs: number,
  ) {}

  append(event: AgentEvent): void {
    try {
      this.file.append(event);
    } finally {
      this.pending.push({ ev: event, line: JSON.stringify(event) });
      if (isTerminalRunEvent(event)) this.flushSoon(0);
      else this.flushSoon(this.batchMs);
    }
  }

  private flushSoon(ms: number): void {
    // a flush already due as soon or sooner takes this event too
    if (this.timer && this.timerMs <= ms) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerMs = ms;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.chain = this.chain.then(() => this.flush());
    }, ms);
  }

  /** One transaction per batch, in seq order; a failed commit keeps the batch and tries again (with backoff). */
  private async flush(): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending.slice(0, 500);
      const values: string[] = [];
      const args: unknown[] = [];
      for (const p of batch) values.push(`($${args.push(this.runId)}, $${args.push(p.ev.seq)}, $${args.push(p.line)})`);
      try {
        // one multi-row INSERT is one transaction of its own: all of the batch or none of it
        await this.pool.query(`INSERT INTO ${this.table} (run_id, seq, line) VALUES ${values.join(', ')} ON CONFLICT (run_id, seq) DO NOTHING`, args);
      } catch {
        // the database is away: nothing of the batch is visible; it is retried (the run goes on, readers wait)
        this.failures++;
        await new Promise((r) => setTimeout(r, Math.min(5_000, 50 * 2 ** Math.min(this.failures, 7))));
        continue;
      }
      this.failures = 0;
      this.pending.splice(0, batch.length);
      this.onCommitted?.(
        this.runId,
        batch.map((b) => b.ev),
        batch.map((b) => b.line),
      );
    }
  }

  unwritten(after = 0): AgentEvent[] {
    return this.pending.filter((p) => p.ev.seq > after).map((p) => p.ev);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.file.close();
    this.flushSoon(0);
  }

  async settled(): Promise<void> {
    // the timer's flush joins the chain when it fires: wait for it, then for the chain
    while (this.timer || this.pending.length) {
      await new Promise((r) => setTimeout(r, 1));
      await this.chain;
    }
    await this.chain;
  }
}
