/**
 * Triggers on one node: the scheduler and the webhook dispatcher over their stores, and what the
 * front doors ask of them (the schedules API, the CLI, a run's webhooks). Runs are started and read
 * through RunServiceApi only; the dispatcher hears runs as the service's observer.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { RunStatus } from '../events/agent-event.js';
import { RunRequestError } from '../runtime/run-request-error.js';
import type { RunObserver, RunServiceApi } from '../runtime/run-service-types.js';
import { systemClock, type Clock } from './clock.js';
import type { DeclaredSchedule } from './declared-schedules.js';
import { checkScheduleDefinition, definitionOf, type DefinitionContext } from './schedule-definition.js';
import { FileScheduleStore, type ScheduleStore } from './schedule-store.js';
import { Scheduler } from './scheduler.js';
import { DEFAULT_TRIGGER_CONFIG, type TriggerConfig } from './trigger-config.js';
import { displayUrl, WebhookDispatcher, WebhookDispatcherError } from './webhook-dispatcher.js';
import { checkWebhook } from './webhook-target.js';
import { FileWebhookStore, type WebhookStore } from './webhook-store.js';
import type { AnnounceTarget, FieldIssue, FireRecord, RunWebhook, Schedule, ScheduleDefinition } from './types.js';

export interface TriggerStores {
  schedules: ScheduleStore;
  webhooks: WebhookStore;
  /** several nodes share them (runs may be created and run elsewhere) */
  shared: boolean;
}

/** Posts a finished run's answer to a chat; chat channels provide it (their ChatAnnouncer has this shape). */
export type Announcer = (target: AnnounceTarget, runId: string) => Promise<{ ok: true } | { ok: false; error: string }>;

export interface TriggerHostOptions {
  dataDir: string;
  /** the agents that exist now, and the issues of an input for one */
  agents: () => string[];
  inputIssues?: (agent: string, input: Record<string, unknown>) => FieldIssue[];
  /**
   * Refuses (RunRequestError) an input whose files the runs it starts could not be given: outside the
   * firing service's input roots, missing, unusable. A schedule is checked as a run request is.
   */
  checkInputFiles?: (agent: string, input: Record<string, unknown>) => Promise<void>;
  /** config.json's trigger keys, checked (read at each use: `serve --watch` may change them) */
  config?: () => TriggerConfig;
  /** the project's declared schedules (read at start and at each sync) */
  declared?: () => DeclaredSchedule[];
  /** default: files in the data dir */
  stores?: TriggerStores;
  clock?: Clock;
  /** the server's own URL, for links in webhook bodies */
  baseUrl?: () => string | null;
  announce?: Announcer;
  log?: (line: string) => void;
  /** tests: how often stores are re-read and swept */
  refreshMs?: number;
  sweepMs?: number;
}

/** A schedule as the API shows it: no secrets, its next fire time, its recent fires. */
export interface ScheduleView extends Omit<ScheduleDefinition, 'webhook'> {
  schedule_id: string;
  source: string;
  webhook?: { url: string; signed: boolean };
  created_at: string;
  updated_at: string;
  next_run_at: string | null;
  last_run: FireRecord | null;
  runs: FireRecord[];
  backoff: { failures: number; until: string } | null;
  /** the latest fire that went wrong: a run that could not start, or one that failed */
  last_failure: FireRecord | null;
  /** completion webhooks of its recent runs that failed, or are being retried after a failed attempt */
  webhook_failures: WebhookFailure[];
}

/** A webhook message of a schedule's run that has not gone through, with its last attempt's error. */
export interface WebhookFailure {
  run_id: string;
  webhook_id: string;
  type: string;
  url: string;
  state: 'pending' | 'failed';
  attempts: number;
  error: string;
  next_attempt_at: string | null;
}

/** How many of a schedule's latest runs are searched for failing webhooks. */
const WEBHOOK_RUNS_SHOWN = 5;

const TERMINAL: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

function invalid(issues: FieldIssue[]): never {
  throw new RunRequestError('invalid_request', `invalid schedule: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
}

export class TriggerHost {
  readonly webhooks: WebhookDispatcher;
  readonly scheduler: Scheduler;
  private readonly stores: TriggerStores;
  private readonly clock: Clock;
  private service: RunServiceApi | null = null;
  private announceNoted = false;
  private stopped = false;

  constructor(private readonly o: TriggerHostOptions) {
    this.clock = o.clock ?? systemClock;
    this.stores = o.stores ?? { schedules: new FileScheduleStore(o.dataDir), webhooks: new FileWebhookStore(o.dataDir), shared: false };
    const runs = {
      get: (id: string) => this.runService().get(id),
      wait: (id: string) => this.runService().wait(id),
      pendingApprovals: (id: string) => this.runService().pendingApprovals?.(id) ?? [],
    };
    this.webhooks = new WebhookDispatcher({
      store: this.stores.webhooks,
      runs,
      config: () => this.config(),
      clock: this.clock,
      owner: `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`,
      runsDir: join(o.dataDir, 'runs'),
      shared: this.stores.shared,
      ...(o.baseUrl ? { baseUrl: o.baseUrl } : {}),
      ...(o.sweepMs ? { sweepMs: o.sweepMs } : {}),
      ...(o.log ? { log: o.log } : {}),
    });
    this.scheduler = new Scheduler({
      store: this.stores.schedules,
      clock: this.clock,
      missedWindowMs: this.config().missedWindowMs,
      ...(o.refreshMs ? { refreshMs: o.refreshMs } : {}),
      ...(o.log ? { log: o.log } : {}),
      runs: {
        start: (s, fireTime) => this.startScheduledRun(s, fireTime),
        status: async (id) => (await this.runService().get(id))?.status ?? null,
        wait: async (id) => (await this.runService().wait(id)).status,
      },
    });
  }

  /** Give it to the RunService ({ observers }): webhooks hear every run. */
  get observer(): RunObserver {
    return this.webhooks.observer;
  }

  config(): TriggerConfig {
    return this.o.config?.() ?? DEFAULT_TRIGGER_CONFIG;
  }

  private runService(): RunServiceApi {
    if (!this.service) throw new Error('triggers are not started (no run service)');
    return this.service;
  }

  /** Starts firing and delivering for `service` (which was built with this host's observer). */
  async start(service: RunServiceApi): Promise<void> {
    this.service = service;
    await this.syncDeclared();
    await this.webhooks.start();
    await this.scheduler.start();
  }

  /** Delivers the webhooks of runs this process starts, and fires nothing (a CLI running one schedule now). */
  async attach(service: RunServiceApi): Promise<void> {
    this.service = service;
    await this.webhooks.start({ sweep: false });
  }

  /** Waits (at most `ms`) for the webhook attempts under way. */
  async settle(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.webhooks.idle(), new Promise<void>((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.scheduler.stop();
    await this.webhooks.stop();
    await this.stores.schedules.close();
    await this.stores.webhooks.close();
  }

  private definitionContext(): DefinitionContext {
    return {
      agents: this.o.agents,
      ...(this.o.inputIssues ? { inputIssues: this.o.inputIssues } : {}),
      allow: this.config().allow,
      now: () => this.clock.now(),
    };
  }

  /** A webhook of a request (POST /api/runs, /api/chat), checked; a 400 naming the field when wrong. */
  checkWebhook(raw: unknown): RunWebhook {
    const c = checkWebhook(raw, this.config().allow);
    if (!c.ok)
      throw new RunRequestError('invalid_request', `invalid webhook: ${c.issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues: c.issues });
    return c.value;
  }

  /** The project's declared schedules into the store: new ones added, changed ones replaced, gone ones removed. */
  async syncDeclared(): Promise<void> {
    const declared = this.o.declared?.() ?? [];
    const store = this.stores.schedules;
    const now = new Date(this.clock.now()).toISOString();
    const have = await store.list();
    for (const d of declared) {
      const old = have.find((s) => s.schedule_id === d.id);
      if (old && old.source.kind === 'file' && JSON.stringify(definitionOf(old)) === JSON.stringify(definitionOf(d.definition))) continue;
      if (old && old.source.kind === 'api') {
        this.o.log?.(`schedules: ${d.file} declares "${d.id}", the name of a schedule made through the API; not scheduled`);
        continue;
      }
      await store.put({
        ...definitionOf(d.definition),
        schedule_id: d.id,
        source: { kind: 'file', file: d.file },
        created_at: old?.created_at ?? now,
        updated_at: now,
        version: (old?.version ?? 0) + 1,
        due_after: now,
        failures: old?.failures ?? 0,
        backoff_until: old?.backoff_until ?? null,
        fires: old?.fires ?? [],
      });
    }
    for (const s of have) if (s.source.kind === 'file' && !declared.some((d) => d.id === s.schedule_id)) await store.remove(s.schedule_id);
    if (this.service) await this.scheduler.reload();
  }

  // ---- the schedules API ----

  async create(body: unknown): Promise<ScheduleView> {
    const c = checkScheduleDefinition(body, this.definitionContext());
    if (!c.ok) invalid(c.issues);
    await this.o.checkInputFiles?.(c.value.agent, c.value.input);
    const now = new Date(this.clock.now()).toISOString();
    const s: Schedule = {
      ...definitionOf(c.value),
      schedule_id: `sch_${randomBytes(9).toString('base64url').replace(/[-_]/g, 'x')}`,
      source: { kind: 'api' },
      created_at: now,
      updated_at: now,
      version: 1,
      due_after: now,
      failures: 0,
      backoff_until: null,
      fires: [],
    };
    this.noteAnnounce(s);
    await this.stores.schedules.put(s);
    await this.scheduler.reload();
    return this.view(s);
  }

  async list(): Promise<ScheduleView[]> {
    return Promise.all((await this.stores.schedules.list()).map((s) => this.view(s)));
  }

  async get(id: string): Promise<ScheduleView> {
    return this.view(await this.require(id));
  }

  private async require(id: string): Promise<Schedule> {
    const s = await this.stores.schedules.get(id);
    if (!s) throw new RunRequestError('not_found', `no schedule ${JSON.stringify(id)}`);
    return s;
  }

  /** Pause, resume (`{ enabled }`), or change. A declared schedule is paused and resumed here, changed in its file. */
  async update(id: string, body: unknown): Promise<ScheduleView> {
    const s = await this.require(id);
    if (body && typeof body === 'object' && !Array.isArray(body) && s.source.kind === 'file') {
      const keys = Object.keys(body);
      if (keys.some((k) => k !== 'enabled')) {
        throw new RunRequestError(
          'wrong_state',
          `schedule ${id} is declared in ${s.source.file}: change it there (only { "enabled": true | false } is taken here)`,
          { issues: [{ path: keys.find((k) => k !== 'enabled')!, message: `declared in ${s.source.file}` }] },
        );
      }
    }
    const c = checkScheduleDefinition(body, this.definitionContext(), { base: definitionOf(s) });
    if (!c.ok) invalid(c.issues);
    if (c.value.enabled) await this.o.checkInputFiles?.(c.value.agent, c.value.input);
    const next = definitionOf(c.value);
    const now = new Date(this.clock.now()).toISOString();
    const timing = (d: ScheduleDefinition) => JSON.stringify([d.every, d.cron, d.at, d.tz]);
    const timingChanged = timing(s) !== timing(next);
    const resumed = next.enabled && !s.enabled;
    const updated: Schedule = {
      ...s,
      ...next,
      // a new timing or a resume counts from now: what passed while paused is not missed
      ...(timingChanged || resumed ? { due_after: now } : {}),
      ...(resumed ? { failures: 0, backoff_until: null } : {}),
      updated_at: now,
      version: s.version + 1,
    };
    for (const k of ['every', 'cron', 'at', 'goal', 'webhook', 'announce'] as const) if (!(k in next)) delete updated[k];
    this.noteAnnounce(updated);
    await this.stores.schedules.put(updated);
    await this.scheduler.reload();
    return this.view(updated);
  }

  async remove(id: string): Promise<void> {
    const s = await this.require(id);
    if (s.source.kind === 'file')
      throw new RunRequestError('wrong_state', `schedule ${id} is declared in ${s.source.file}: remove it there (or pause it with { "enabled": false })`);
    await this.stores.schedules.remove(id);
    await this.scheduler.reload();
  }

  /** Starts a run of the schedule now. */
  async runNow(id: string): Promise<FireRecord> {
    await this.require(id);
    return this.scheduler.fireNow(id);
  }

  async view(s: Schedule): Promise<ScheduleView> {
    const { webhook, version: _v, due_after: _d, failures, backoff_until, fires, source, ...rest } = s;
    const next = this.scheduler.nextRunAt(s);
    return {
      ...rest,
      source: source.kind === 'api' ? 'api' : source.file,
      ...(webhook ? { webhook: { url: displayUrl(webhook.url), signed: Boolean(webhook.secret) } } : {}),
      next_run_at: next === null ? null : new Date(next).toISOString(),
      last_run: fires.find((f) => f.run_id) ?? null,
      runs: fires,
      backoff: backoff_until && backoff_until > new Date(this.clock.now()).toISOString() ? { failures, until: backoff_until } : null,
      last_failure: fires.find((f) => f.outcome === 'not_started' || f.run_status === 'failed') ?? null,
      webhook_failures: await this.webhookFailures(fires),
    };
  }

  /** The webhook messages of the latest runs that have not gone through after an attempt, newest run first. */
  private async webhookFailures(fires: FireRecord[]): Promise<WebhookFailure[]> {
    const runIds = [...new Set(fires.flatMap((f) => (f.run_id ? [f.run_id] : [])))].slice(0, WEBHOOK_RUNS_SHOWN);
    const out: WebhookFailure[] = [];
    for (const runId of runIds) {
      const v = await this.webhooks.view(runId);
      for (const m of v.messages) {
        if (m.state === 'delivered' || m.attempts === 0) continue;
        const last = v.attempts.filter((a) => a.webhook_id === m.webhook_id).at(-1);
        out.push({
          run_id: runId,
          webhook_id: m.webhook_id,
          type: m.type,
          url: last?.url ?? v.targets[m.target]?.url ?? '',
          state: m.state,
          attempts: m.attempts,
          error: last?.error ?? (last?.http_status !== undefined ? `HTTP ${last.http_status}` : 'no attempt recorded'),
          next_attempt_at: m.next_attempt_at === null ? null : new Date(m.next_attempt_at).toISOString(),
        });
      }
    }
    return out;
  }

  // ---- runs a schedule starts ----

  private async startScheduledRun(s: Schedule, fireTime: string): Promise<string> {
    const status = await this.runService().create(
      { plugin: s.agent, input: s.input, ...(s.goal ? { goal: s.goal } : {}) },
      { claw: 'schedule', trigger: { type: 'schedule', schedule_id: s.schedule_id, fire_time: fireTime }, ...(s.webhook ? { webhook: s.webhook } : {}) },
    );
    if (s.announce) void this.announceWhenDone(s.announce, status.run_id);
    return status.run_id;
  }

  private async announceWhenDone(target: AnnounceTarget, runId: string): Promise<void> {
    const run = await this.runService()
      .wait(runId)
      .catch(() => null);
    if (!run || !TERMINAL.includes(run.status) || !this.o.announce) return;
    const r = await this.o.announce(target, runId).catch((e: unknown) => ({ ok: false as const, error: (e as Error).message }));
    if (!r.ok) this.o.log?.(`schedules: announcing run ${runId} to ${target.channel} ${target.chat} failed: ${r.error}`);
  }

  private noteAnnounce(s: Schedule): void {
    if (!s.announce || this.o.announce || this.announceNoted) return;
    this.announceNoted = true;
    this.o.log?.(`schedules: announce is kept, but this server has no chat channels to post answers to (schedule ${s.schedule_id})`);
  }
}

/** A request error of the dispatcher (redeliver) as the API answers it. */
export function webhookRequestError(e: unknown): never {
  if (e instanceof WebhookDispatcherError) throw new RunRequestError(e.code, e.message);
  throw e;
}
