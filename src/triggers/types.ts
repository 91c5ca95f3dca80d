/**
 * The map of src/triggers: runs that start themselves (schedules) and runs that report back
 * (completion webhooks). Triggers use the runtime only through RunServiceApi and its observers.
 */
import type { RunStatus, RunTrigger } from '../events/agent-event.js';
import type { RunWebhook } from '../runtime/run-service-types.js';

export type { RunTrigger, RunWebhook };

/** An issue with one field of a request or a file, as the API's 400 and `validate` show it. */
export interface FieldIssue {
  path: string;
  message: string;
}

/** Checked or not: a value, or the issues that name what is wrong. */
export type Checked<T> = { ok: true; value: T } | { ok: false; issues: FieldIssue[] };

/** Where a chat channel should post the run's answer. */
export interface AnnounceTarget {
  channel: string;
  chat: string;
  /** a thread inside the chat (Slack thread_ts, a Telegram topic) */
  thread?: string;
}

export type OverlapPolicy = 'skip' | 'queue';
export type MissedPolicy = 'skip' | 'run_once';

/** What a schedule is, as a person writes it (POST /api/schedules, schedules.json, an agent's `schedule:`). */
export interface ScheduleDefinition {
  agent: string;
  goal?: string;
  input: Record<string, unknown>;
  /** exactly one of every, cron, at */
  every?: string;
  cron?: string;
  at?: string;
  /** IANA zone of `cron` (and of an `at` without an offset); default UTC */
  tz: string;
  overlap: OverlapPolicy;
  missed: MissedPolicy;
  webhook?: RunWebhook;
  announce?: AnnounceTarget;
  enabled: boolean;
}

/** Where a schedule was declared: through the API, or in a project file (changed there, paused here). */
export type ScheduleSource = { kind: 'api' } | { kind: 'file'; file: string };

/** What happened at one fire time. */
export interface FireRecord {
  fire_time: string;
  /** when this node handled it */
  at: string;
  outcome: 'started' | 'skipped' | 'not_started' | 'waiting';
  /** why a fire was skipped: the previous run was live, it passed while no Runtrail ran, the schedule backs off */
  reason?: 'overlap' | 'missed' | 'backoff';
  detail?: string;
  run_id?: string;
  /** the run's end, once known */
  run_status?: RunStatus;
  /** a fire started by hand (POST /api/schedules/:id/run) */
  manual?: boolean;
}

/** A schedule as stored: its definition and the state its fires leave. */
export interface Schedule extends ScheduleDefinition {
  schedule_id: string;
  source: ScheduleSource;
  created_at: string;
  updated_at: string;
  /** bumped by every change of the definition or of `enabled`: a claim made for an older version fails */
  version: number;
  /** fire times after this instant are due (creation, resume, a change, the last fire) */
  due_after: string;
  /** consecutive runs that failed (or could not start) */
  failures: number;
  /** fire times before this are skipped while the schedule backs off */
  backoff_until: string | null;
  /** newest first, at most FIRES_KEPT */
  fires: FireRecord[];
}

export const FIRES_KEPT = 20;

/** A completion webhook's message: one per run event reported (an approval wait, the end) and destination. */
export type WebhookEventType = 'run.awaiting_approval' | 'run.completed' | 'run.failed' | 'run.cancelled' | 'run.interrupted';

export interface WebhookMessage {
  /** the Standard Webhooks `webhook-id`, kept across retries and redeliveries */
  webhook_id: string;
  run_id: string;
  type: WebhookEventType;
  /** index into the run's targets */
  target: number;
  /** the JSON body, masked, as signed */
  body: string;
  created_at: string;
  attempts: number;
  state: 'pending' | 'delivered' | 'failed';
  /** ms since the epoch; null once final */
  next_attempt_at: number | null;
  /** attempts stop after this instant (ms) */
  give_up_at: number;
  /** a node delivering it holds it until then (ms), so no other node sends it at the same time */
  lease_until?: number;
  lease_owner?: string;
  /** the next attempt is a redelivery a person asked for */
  redelivery?: boolean;
}

/** One line of a run's runtime/webhooks.jsonl. */
export interface WebhookAttemptLine {
  webhook_id: string;
  type: WebhookEventType;
  /** the destination, credentials masked */
  url: string;
  attempt: number;
  at: string;
  /** the address connected to (after the DNS check), when one was */
  address?: string;
  /** the receiver's HTTP status, when it answered */
  http_status?: number;
  error?: string;
  duration_ms: number;
  outcome: 'delivered' | 'retry' | 'failed';
  next_attempt_at?: string;
  redelivery?: boolean;
}

/** A run's completion-webhook destinations: its own (request, schedule) and the config's for every run. */
export interface StoredTarget extends RunWebhook {
  source: 'run' | 'config';
}
