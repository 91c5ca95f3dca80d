/**
 * Completion webhooks, end to end. As a RunObserver it learns of each run with destinations (its own
 * webhook, config.json's `webhooks.every_run`) and hears its bus: a wait for approval and the end each
 * become one message per destination, recorded in the store before the first attempt. Attempts run
 * on timers, apart from the run (a receiver that never answers holds up nothing); each is a line of
 * the run's runtime/webhooks.jsonl; a failure is retried per `webhooks.retry` until it gives up. A
 * sweep finds what no bus told of (runs ended while no Runtrail ran, or on another node) and
 * messages whose sender went away (their lease ran out), so deliveries survive restarts.
 */
import { appendFile, readFile } from 'node:fs/promises';
import { isTerminalRunEvent, type RunStatus } from '../events/agent-event.js';
import { maskSecretValues } from '../events/secret-values.js';
import { RunFolder } from '../runtime/storage/run-folder.js';
import type { StepApproval } from '../events/engine-event.js';
import type { ObservedRun, RunObserver, RunStatusFile } from '../runtime/run-service-types.js';
import type { Clock } from './clock.js';
import type { TriggerConfig } from './trigger-config.js';
import { messagesFor, messageType, runLinksFor, webhookBody, type ReportKey } from './webhook-message.js';
import { webhookRetryDelay } from './webhook-retry.js';
import { sendWebhook, type SendRequest, type SendResult } from './webhook-sender.js';
import type { WebhookStore } from './webhook-store.js';
import type { StoredTarget, WebhookAttemptLine, WebhookMessage } from './types.js';

/** What deliveries need of the run service. */
export interface WebhookRuns {
  get(runId: string): Promise<RunStatusFile | null>;
  /** Resolves once the run has ended and written its files. */
  wait(runId: string): Promise<RunStatusFile>;
  pendingApprovals?(runId: string): StepApproval[];
}

export interface WebhookDispatcherOptions {
  store: WebhookStore;
  runs: WebhookRuns;
  config: () => TriggerConfig;
  clock: Clock;
  /** this process, as leases name it */
  owner: string;
  /** the data dir's runs/ (each run's runtime/webhooks.jsonl) */
  runsDir: string;
  /** the server's own URL, for links when config.json names no public_url */
  baseUrl?: () => string | null;
  /** how text is masked before it leaves; default the event log's masking */
  mask?: (text: string) => string;
  /** runs may be created on other nodes: a run's destinations are looked up in the store */
  shared?: boolean;
  /** how often open runs and abandoned messages are looked for; default 10 s */
  sweepMs?: number;
  send?: (r: SendRequest & { signal?: AbortSignal }) => Promise<SendResult>;
  log?: (line: string) => void;
}

/** How long past its next attempt a message stays leased to the process holding it. */
const LEASE_MARGIN_MS = 15_000;
const TERMINAL: readonly RunStatus[] = ['completed', 'failed', 'cancelled'];

export class WebhookDispatcherError extends Error {
  constructor(
    readonly code: 'not_found' | 'wrong_state',
    message: string,
  ) {
    super(message);
  }
}

/** A destination as attempt lines and the API show it: no credentials, no query. */
export function displayUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? '?…' : ''}`;
  } catch {
    return '(not a URL)';
  }
}

export class WebhookDispatcher {
  private readonly timers = new Map<string, () => void>();
  /** messages this process holds: waiting on a timer or in an attempt (a sweep must not take them twice) */
  private readonly held = new Set<string>();
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly abort = new AbortController();
  private sweeper: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly o: WebhookDispatcherOptions) {}

  /** Give it to the RunService ({ observers }). */
  readonly observer: RunObserver = (run) => {
    try {
      this.observe(run);
    } catch (e) {
      this.o.log?.(`webhooks: run ${run.runId}: ${(e as Error).message}`);
    }
  };

  private observe(run: ObservedRun): void {
    if (this.stopped) return;
    const targets: StoredTarget[] = [];
    if (run.webhook) targets.push({ ...run.webhook, source: 'run' });
    // config.json's destinations hear of the runs people start, not of the subagents those start
    if (!run.parent) for (const t of this.o.config().everyRun) targets.push({ ...t, source: 'config' });
    if (!targets.length && !this.o.shared) return;
    const registered = targets.length ? this.o.store.register(run.runId, targets) : Promise.resolve();
    this.track(registered);
    run.bus.subscribe((e) => {
      if (e.stream !== 'run') return;
      if (e.data.type === 'run.state' && e.data.to === 'awaiting_approval') this.track(registered.then(() => this.report(run.runId, `approval:${e.seq}`)));
      else if (isTerminalRunEvent(e)) this.track(registered.then(() => this.report(run.runId, 'end')));
    });
  }

  /** Delivers from now on; `sweep: false` only delivers what this process reports (a CLI's own run). */
  async start(opts: { sweep?: boolean } = {}): Promise<void> {
    this.stopped = false;
    if (opts.sweep === false) return;
    await this.sweep();
    this.sweeper = setInterval(() => this.track(this.sweep()), this.o.sweepMs ?? 10_000);
    this.sweeper.unref();
  }

  /** Stops attempts (one under way is cut and not counted) and hands this process's messages back. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    this.abort.abort();
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
    this.held.clear();
    await this.o.store.release(this.o.owner).catch((e: unknown) => this.o.log?.(`webhooks: ${(e as Error).message}`));
  }

  /** Resolves when nothing is under way (reports written, attempts ended). */
  async idle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight]);
  }

  private track(p: Promise<unknown>): void {
    const t = p.catch((e: unknown) => this.o.log?.(`webhooks: ${(e as Error).message}`)).finally(() => this.inflight.delete(t));
    this.inflight.add(t);
  }

  /** Runs that ended unseen get their end reported; messages nobody holds are taken up. */
  private async sweep(): Promise<void> {
    if (this.stopped) return;
    for (const runId of await this.o.store.openRuns()) {
      const s = await this.o.runs.get(runId);
      if (s && TERMINAL.includes(s.status)) await this.report(runId, 'end');
    }
    const now = this.o.clock.now();
    const within = this.o.sweepMs ?? 10_000;
    for (const m of await this.o.store.lease(this.o.owner, now + within, now + within + LEASE_MARGIN_MS, 500, now)) this.schedule(m);
  }

  /** One run event made into messages (once, whoever reports it first) and their first attempts. */
  private async report(runId: string, key: ReportKey): Promise<void> {
    if (this.stopped) return;
    const doc = await this.o.store.get(runId);
    if (!doc?.targets.length || doc.reported.includes(key)) return;
    const status = key === 'end' ? await this.o.runs.wait(runId) : await this.o.runs.get(runId);
    if (!status) return;
    const cfg = this.o.config();
    const now = this.o.clock.now();
    const type = key === 'end' ? messageType(status) : 'run.awaiting_approval';
    const mask = this.o.mask ?? maskSecretValues;
    const approvals = key === 'end' ? [] : (this.o.runs.pendingApprovals?.(runId) ?? []);
    const data = approvals.length ? { ...status, pending_approvals: approvals } : status;
    const base = cfg.publicUrl ?? this.o.baseUrl?.() ?? null;
    const text = webhookBody(type, data as RunStatusFile, runLinksFor(runId, base), now, mask);
    const messages = messagesFor(runId, key, doc.targets, { type, text }, now, cfg.retry.forMs).map((m) => ({
      ...m,
      lease_owner: this.o.owner,
      lease_until: now + LEASE_MARGIN_MS,
    }));
    for (const m of await this.o.store.report(runId, key, messages, key === 'end')) this.schedule(m);
  }

  private schedule(m: WebhookMessage): void {
    if (this.stopped || this.held.has(m.webhook_id) || m.next_attempt_at === null) return;
    this.held.add(m.webhook_id);
    const wait = Math.max(0, m.next_attempt_at - this.o.clock.now());
    this.timers.set(
      m.webhook_id,
      this.o.clock.setTimeout(() => {
        this.timers.delete(m.webhook_id);
        this.track(this.attempt(m).finally(() => this.timers.has(m.webhook_id) || this.held.delete(m.webhook_id)));
      }, wait),
    );
  }

  private async attempt(m: WebhookMessage): Promise<void> {
    if (this.stopped) return;
    const doc = await this.o.store.get(m.run_id);
    const target = doc?.targets[m.target];
    const cfg = this.o.config();
    const now = this.o.clock.now();
    let result: SendResult;
    let final = false;
    if (!target) {
      result = { ok: false, error: 'its destination is no longer recorded', durationMs: 0 };
      final = true;
    } else {
      const match = cfg.allow.match(new URL(target.url));
      if (!match.allowed) {
        result = { ok: false, error: `no longer allowed by webhooks.allow in config.json (allowed: ${cfg.allow.describe()})`, durationMs: 0 };
        final = true;
      } else {
        const send = this.o.send ?? sendWebhook;
        result = await send({
          url: target.url,
          secret: target.secret,
          webhookId: m.webhook_id,
          body: m.body,
          timeoutMs: cfg.timeoutMs,
          anyAddress: match.exactHost,
          now,
          signal: this.abort.signal,
        });
        // cut by stop(): not an attempt; the message is taken up again when its lease runs out
        if (this.stopped) return;
      }
    }
    const attempt = m.attempts + 1;
    const after = this.o.clock.now();
    const delay = webhookRetryDelay(attempt, cfg.retry);
    const outcome: WebhookAttemptLine['outcome'] = result.ok ? 'delivered' : final || after + delay > m.give_up_at ? 'failed' : 'retry';
    const next: WebhookMessage = {
      ...m,
      attempts: attempt,
      state: outcome === 'retry' ? 'pending' : outcome,
      next_attempt_at: outcome === 'retry' ? after + delay : null,
      lease_owner: this.o.owner,
      lease_until: outcome === 'retry' ? after + delay + LEASE_MARGIN_MS : after,
    };
    delete next.redelivery;
    const line: WebhookAttemptLine = {
      webhook_id: m.webhook_id,
      type: m.type,
      url: target ? displayUrl(target.url) : '(unknown)',
      attempt,
      at: new Date(now).toISOString(),
      ...(result.address ? { address: result.address } : {}),
      ...(result.httpStatus ? { http_status: result.httpStatus } : {}),
      ...(result.error ? { error: (this.o.mask ?? maskSecretValues)(result.error) } : {}),
      duration_ms: result.durationMs,
      outcome,
      ...(next.next_attempt_at ? { next_attempt_at: new Date(next.next_attempt_at).toISOString() } : {}),
      ...(m.redelivery ? { redelivery: true } : {}),
    };
    await appendFile(new RunFolder(this.o.runsDir, m.run_id).path('webhooks'), `${JSON.stringify(line)}\n`, { mode: 0o600 }).catch(() => undefined);
    await this.o.store.save(next);
    if (outcome === 'failed') this.o.log?.(`webhooks: run ${m.run_id}: ${m.type} to ${line.url} gave up after ${attempt} attempt(s): ${line.error ?? ''}`);
    if (outcome === 'retry') {
      this.held.delete(m.webhook_id);
      this.schedule(next);
    }
  }

  /** The run's end message(s) sent again (the same webhook-id, a new timestamp and signature). */
  async redeliver(runId: string): Promise<WebhookMessage[]> {
    let doc = await this.o.store.get(runId);
    if (!doc?.targets.length) throw new WebhookDispatcherError('not_found', `run ${runId} has no webhooks`);
    if (!doc.reported.includes('end')) {
      const s = await this.o.runs.get(runId);
      if (!s || !TERMINAL.includes(s.status))
        throw new WebhookDispatcherError('wrong_state', `run ${runId} has not ended${s ? ` (it is ${s.status})` : ''}: its end is sent when it ends`);
      await this.report(runId, 'end');
      doc = (await this.o.store.get(runId)) ?? doc;
    }
    const cfg = this.o.config();
    const now = this.o.clock.now();
    const out: WebhookMessage[] = [];
    for (const m of doc.messages.filter((x) => x.type !== 'run.awaiting_approval')) {
      this.timers.get(m.webhook_id)?.();
      this.timers.delete(m.webhook_id);
      this.held.delete(m.webhook_id);
      const again: WebhookMessage = {
        ...m,
        state: 'pending',
        next_attempt_at: now,
        give_up_at: now + cfg.retry.forMs,
        lease_owner: this.o.owner,
        lease_until: now + LEASE_MARGIN_MS,
        redelivery: true,
      };
      await this.o.store.save(again);
      this.schedule(again);
      out.push(again);
    }
    return out;
  }

  /** What the run's page shows: destinations (no secrets), messages, and every attempt. */
  async view(runId: string): Promise<{
    targets: Array<{ url: string; source: string; signed: boolean }>;
    messages: Array<Omit<WebhookMessage, 'body' | 'lease_owner' | 'lease_until'>>;
    attempts: WebhookAttemptLine[];
  }> {
    const doc = await this.o.store.get(runId);
    const text = await readFile(new RunFolder(this.o.runsDir, runId).path('webhooks'), 'utf8').catch(() => '');
    const attempts = text
      .split('\n')
      .filter(Boolean)
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as WebhookAttemptLine];
        } catch {
          return [];
        }
      });
    return {
      targets: (doc?.targets ?? []).map((t) => ({ url: displayUrl(t.url), source: t.source, signed: Boolean(t.secret) })),
      messages: (doc?.messages ?? []).map(({ body: _b, lease_owner: _o, lease_until: _u, ...m }) => m),
      attempts,
    };
  }
}
