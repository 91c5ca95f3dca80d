/**
 * Schedules and completion webhooks of several nodes, in PostgreSQL (the schema of
 * RUNTRAIL_DATABASE_SCHEMA). A fire time is claimed by one transaction that moves the schedule's
 * `due_after` (only from before it, only for the version the node knows, only while enabled) and
 * inserts the fire under its primary key: one node wins, every other sees it taken. Webhook
 * messages are leased with FOR UPDATE SKIP LOCKED, so no two nodes send one at the same time.
 */
import pg from 'pg';
import type { ScheduleStore } from './schedule-store.js';
import type { RunWebhooks, WebhookStore } from './webhook-store.js';
import { FIRES_KEPT, type FireRecord, type Schedule, type StoredTarget, type WebhookMessage } from './types.js';

/** Fire records kept per schedule in the database (the API shows the newest FIRES_KEPT). */
const FIRES_STORED = 200;

const SCHEMA_SQL = (s: string) => `
CREATE SCHEMA IF NOT EXISTS ${s};
CREATE TABLE IF NOT EXISTS ${s}.runtrail_schedules (
  schedule_id text PRIMARY KEY,
  doc jsonb NOT NULL,
  version integer NOT NULL,
  enabled boolean NOT NULL,
  due_after text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE TABLE IF NOT EXISTS ${s}.runtrail_schedule_fires (
  schedule_id text NOT NULL,
  fire_time text NOT NULL,
  record jsonb NOT NULL,
  PRIMARY KEY (schedule_id, fire_time)
);
CREATE TABLE IF NOT EXISTS ${s}.runtrail_webhook_runs (
  run_id text PRIMARY KEY,
  targets jsonb NOT NULL,
  reported text[] NOT NULL DEFAULT '{}',
  ended boolean NOT NULL DEFAULT false
);
CREATE TABLE IF NOT EXISTS ${s}.runtrail_webhook_messages (
  webhook_id text PRIMARY KEY,
  run_id text NOT NULL,
  state text NOT NULL,
  next_attempt_at bigint,
  lease_owner text,
  lease_until bigint,
  doc jsonb NOT NULL
);
CREATE INDEX IF NOT EXISTS runtrail_webhook_messages_due ON ${s}.runtrail_webhook_messages (state, next_attempt_at);
CREATE INDEX IF NOT EXISTS runtrail_webhook_messages_run ON ${s}.runtrail_webhook_messages (run_id);`;

function ident(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new TypeError(`RUNTRAIL_DATABASE_SCHEMA must be a lowercase identifier, got ${JSON.stringify(schema)}`);
  return `"${schema}"`;
}

type StoredSchedule = Omit<Schedule, 'fires'>;

const ROLLBACK = Symbol('rollback');

interface Tables {
  schedules: string;
  fires: string;
  runs: string;
  messages: string;
}

/** Runs `fn` in a transaction; it returns ROLLBACK to undo (the result is then null). */
async function tx<R>(pool: pg.Pool, fn: (c: pg.PoolClient) => Promise<R | typeof ROLLBACK>): Promise<R | null> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const r = await fn(c);
    if (r === ROLLBACK) {
      await c.query('ROLLBACK');
      return null;
    }
    await c.query('COMMIT');
    return r;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}

/** Connects, creates the tables (idempotent; nodes starting at once wait for one another), and gives both stores over one pool. */
export async function connectPgTriggerStores(o: {
  url: string;
  schema?: string;
}): Promise<{ schedules: PgScheduleStore; webhooks: PgWebhookStore; shared: true }> {
  const schema = ident(o.schema ?? 'public');
  const pool = new pg.Pool({ connectionString: o.url, max: 5, connectionTimeoutMillis: 5_000 });
  pool.on('error', () => undefined); // an idle client that dies is replaced; queries report their own errors
  try {
    await tx(pool, async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`runtrail:triggers:${schema}`]);
      await c.query(SCHEMA_SQL(schema));
    });
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e;
  }
  const t: Tables = {
    schedules: `${schema}.runtrail_schedules`,
    fires: `${schema}.runtrail_schedule_fires`,
    runs: `${schema}.runtrail_webhook_runs`,
    messages: `${schema}.runtrail_webhook_messages`,
  };
  return { schedules: new PgScheduleStore(pool, t), webhooks: new PgWebhookStore(pool, t), shared: true };
}

/** A message as a row keeps it: the lease in its own columns. */
function messageOf(row: { doc: WebhookMessage; lease_owner: string | null; lease_until: string | null }): WebhookMessage {
  const m: WebhookMessage = { ...row.doc };
  delete m.lease_owner;
  delete m.lease_until;
  if (row.lease_owner) m.lease_owner = row.lease_owner;
  if (row.lease_until !== null) m.lease_until = Number(row.lease_until);
  return m;
}

function docOf(m: WebhookMessage): Omit<WebhookMessage, 'lease_owner' | 'lease_until'> {
  const { lease_owner: _o, lease_until: _u, ...doc } = m;
  return doc;
}

/** Schedules and their fires; closing it ends the pool both stores share. */
export class PgScheduleStore implements ScheduleStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
  ) {}

  private async firesOf(ids: string[]): Promise<Map<string, FireRecord[]>> {
    const r = await this.pool.query<{ schedule_id: string; record: FireRecord }>(
      `SELECT schedule_id, record FROM (SELECT schedule_id, record, row_number() OVER (PARTITION BY schedule_id ORDER BY fire_time DESC) AS n FROM ${this.t.fires} WHERE schedule_id = ANY($1)) f WHERE n <= $2 ORDER BY schedule_id, (record->>'fire_time') DESC`,
      [ids, FIRES_KEPT],
    );
    const out = new Map<string, FireRecord[]>();
    for (const row of r.rows) out.set(row.schedule_id, [...(out.get(row.schedule_id) ?? []), row.record]);
    return out;
  }

  async list(): Promise<Schedule[]> {
    const r = await this.pool.query<{ doc: StoredSchedule; due_after: string }>(
      `SELECT doc, due_after FROM ${this.t.schedules} ORDER BY doc->>'created_at', schedule_id`,
    );
    const fires = await this.firesOf(r.rows.map((x) => x.doc.schedule_id));
    return r.rows.map((x) => ({ ...x.doc, due_after: x.due_after, fires: fires.get(x.doc.schedule_id) ?? [] }));
  }

  async get(id: string): Promise<Schedule | null> {
    const r = await this.pool.query<{ doc: StoredSchedule; due_after: string }>(`SELECT doc, due_after FROM ${this.t.schedules} WHERE schedule_id = $1`, [id]);
    if (!r.rows[0]) return null;
    return { ...r.rows[0].doc, due_after: r.rows[0].due_after, fires: (await this.firesOf([id])).get(id) ?? [] };
  }

  async put(s: Schedule): Promise<void> {
    const { fires: _f, ...doc } = s;
    await this.pool.query(
      `INSERT INTO ${this.t.schedules} (schedule_id, doc, version, enabled, due_after) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (schedule_id) DO UPDATE SET doc = excluded.doc, version = excluded.version, enabled = excluded.enabled, due_after = excluded.due_after, changed_at = clock_timestamp()`,
      [s.schedule_id, JSON.stringify(doc), s.version, s.enabled, s.due_after],
    );
  }

  async remove(id: string): Promise<boolean> {
    const r = await this.pool.query(`DELETE FROM ${this.t.schedules} WHERE schedule_id = $1`, [id]);
    await this.pool.query(`DELETE FROM ${this.t.fires} WHERE schedule_id = $1`, [id]);
    return (r.rowCount ?? 0) > 0;
  }

  async claim(id: string, fireTime: string, version: number, manual: boolean, at: string): Promise<Schedule | null> {
    const record: FireRecord = { fire_time: fireTime, at, outcome: 'waiting', ...(manual ? { manual: true } : {}) };
    const won = await tx(this.pool, async (c) => {
      if (!manual) {
        const moved = await c.query(`UPDATE ${this.t.schedules} SET due_after = $3 WHERE schedule_id = $1 AND version = $2 AND enabled AND due_after < $3`, [
          id,
          version,
          fireTime,
        ]);
        if (!moved.rowCount) return ROLLBACK;
      }
      const inserted = await c.query(`INSERT INTO ${this.t.fires} (schedule_id, fire_time, record) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
        id,
        fireTime,
        JSON.stringify(record),
      ]);
      if (!inserted.rowCount) return ROLLBACK;
      return true;
    });
    if (won) {
      // the oldest records beyond what is kept go (a claim never needs them: due_after is past them)
      await this.pool
        .query(
          `DELETE FROM ${this.t.fires} WHERE schedule_id = $1 AND fire_time < (SELECT fire_time FROM ${this.t.fires} WHERE schedule_id = $1 ORDER BY fire_time DESC OFFSET $2 LIMIT 1)`,
          [id, FIRES_STORED - 1],
        )
        .catch(() => undefined);
    }
    return won === true ? this.get(id) : null;
  }

  async record(id: string, fire: FireRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${this.t.fires} (schedule_id, fire_time, record) VALUES ($1, $2, $3) ON CONFLICT (schedule_id, fire_time) DO UPDATE SET record = excluded.record`,
      [id, fire.fire_time, JSON.stringify(fire)],
    );
  }

  async setState(id: string, state: { failures: number; backoff_until: string | null }): Promise<void> {
    await this.pool.query(`UPDATE ${this.t.schedules} SET doc = doc || $2::jsonb, changed_at = clock_timestamp() WHERE schedule_id = $1`, [
      id,
      JSON.stringify(state),
    ]);
  }

  async stamp(): Promise<string> {
    const r = await this.pool.query<{ stamp: string }>(`SELECT count(*)::text || ':' || coalesce(max(changed_at)::text, '') AS stamp FROM ${this.t.schedules}`);
    return r.rows[0].stamp;
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

/** Completion webhooks: runs' destinations and leased messages. */
export class PgWebhookStore implements WebhookStore {
  constructor(
    private readonly pool: pg.Pool,
    private readonly t: Tables,
  ) {}

  async register(runId: string, targets: StoredTarget[]): Promise<void> {
    await this.pool.query(`INSERT INTO ${this.t.runs} (run_id, targets) VALUES ($1, $2) ON CONFLICT DO NOTHING`, [runId, JSON.stringify(targets)]);
  }

  async get(runId: string): Promise<RunWebhooks | null> {
    const r = await this.pool.query<{ targets: StoredTarget[]; reported: string[]; ended: boolean }>(
      `SELECT targets, reported, ended FROM ${this.t.runs} WHERE run_id = $1`,
      [runId],
    );
    if (!r.rows[0]) return null;
    const m = await this.pool.query<{ doc: WebhookMessage; lease_owner: string | null; lease_until: string | null }>(
      `SELECT doc, lease_owner, lease_until FROM ${this.t.messages} WHERE run_id = $1 ORDER BY doc->>'created_at', webhook_id`,
      [runId],
    );
    return { run_id: runId, ...r.rows[0], messages: m.rows.map(messageOf) };
  }

  async report(runId: string, key: string, messages: WebhookMessage[], ended: boolean): Promise<WebhookMessage[]> {
    const added = await tx(this.pool, async (c) => {
      const r = await c.query<{ reported: string[] }>(`SELECT reported FROM ${this.t.runs} WHERE run_id = $1 FOR UPDATE`, [runId]);
      if (!r.rows[0] || r.rows[0].reported.includes(key)) return ROLLBACK;
      await c.query(`UPDATE ${this.t.runs} SET reported = array_append(reported, $2), ended = ended OR $3 WHERE run_id = $1`, [runId, key, ended]);
      for (const m of messages) {
        await c.query(
          `INSERT INTO ${this.t.messages} (webhook_id, run_id, state, next_attempt_at, lease_owner, lease_until, doc) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
          [m.webhook_id, runId, m.state, m.next_attempt_at, m.lease_owner ?? null, m.lease_until ?? null, JSON.stringify(docOf(m))],
        );
      }
      return messages;
    });
    return added ?? [];
  }

  async openRuns(): Promise<string[]> {
    const r = await this.pool.query<{ run_id: string }>(`SELECT run_id FROM ${this.t.runs} WHERE NOT ended LIMIT 5000`);
    return r.rows.map((x) => x.run_id);
  }

  async lease(owner: string, dueBy: number, leaseUntil: number, limit: number, now: number): Promise<WebhookMessage[]> {
    const r = await this.pool.query<{ doc: WebhookMessage; lease_owner: string | null; lease_until: string | null }>(
      `UPDATE ${this.t.messages} SET lease_owner = $1, lease_until = $3
       WHERE webhook_id IN (
         SELECT webhook_id FROM ${this.t.messages}
         WHERE state = 'pending' AND next_attempt_at <= $2 AND (lease_owner IS NULL OR lease_owner = $1 OR lease_until < $5)
         ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED)
       RETURNING doc, lease_owner, lease_until`,
      [owner, dueBy, leaseUntil, limit, now],
    );
    return r.rows.map(messageOf);
  }

  async save(msg: WebhookMessage): Promise<void> {
    await this.pool.query(
      `UPDATE ${this.t.messages} SET state = $2, next_attempt_at = $3, lease_owner = $4, lease_until = $5, doc = $6 WHERE webhook_id = $1`,
      [msg.webhook_id, msg.state, msg.next_attempt_at, msg.lease_owner ?? null, msg.lease_until ?? null, JSON.stringify(docOf(msg))],
    );
  }

  async release(owner: string): Promise<void> {
    await this.pool.query(`UPDATE ${this.t.messages} SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1 AND state = 'pending'`, [owner]);
  }

  /** The pool is the schedule store's to end. */
  async close(): Promise<void> {}
}
