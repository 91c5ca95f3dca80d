/**
 * The check of a schedule as a person writes it (POST /api/schedules, PATCH, schedules.json, an
 * agent's `schedule:`): every field named in its issue, nothing accepted that could not fire.
 */
import { parseDuration } from './duration.js';
import { cronOf } from './schedule-timing.js';
import { checkWebhook } from './webhook-target.js';
import type { WebhookAllowList } from './webhook-allow.js';
import type { Checked, FieldIssue, ScheduleDefinition } from './types.js';

/** What a definition is checked against. */
export interface DefinitionContext {
  /** The agents that exist now. */
  agents(): string[];
  /** Issues of `input` against the agent's input schema (paths under `input`). */
  inputIssues?(agent: string, input: Record<string, unknown>): FieldIssue[];
  allow: WebhookAllowList;
  now(): number;
}

const KEYS = ['agent', 'goal', 'input', 'every', 'cron', 'at', 'tz', 'overlap', 'missed', 'webhook', 'announce', 'enabled'] as const;
const TIMING = ['every', 'cron', 'at'] as const;
export const MIN_EVERY_MS = 1000;
const MAX_EVERY_MS = 366 * 86_400_000;

/** Whether `tz` is a time zone this runtime knows (IANA names, and UTC). */
export function knownZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

function str(o: Record<string, unknown>, key: string, issues: FieldIssue[], prefix: string, max = 8000): string | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !v.trim()) {
    issues.push({ path: `${prefix}${key}`, message: 'must be a non-empty string' });
    return undefined;
  }
  if (v.length > max) {
    issues.push({ path: `${prefix}${key}`, message: `is ${v.length} characters; at most ${max}` });
    return undefined;
  }
  return v.trim();
}

function oneOf<T extends string>(o: Record<string, unknown>, key: string, values: readonly T[], issues: FieldIssue[], prefix: string): T | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || !values.includes(v as T)) {
    issues.push({ path: `${prefix}${key}`, message: `must be ${values.join(' or ')}, got ${JSON.stringify(v)}` });
    return undefined;
  }
  return v as T;
}

/**
 * A definition checked. `base`: the stored definition a PATCH changes (a timing field given replaces
 * the other two; `webhook: null` and `announce: null` remove them). `agent`: an agent's own
 * `schedule:` (the field is implied and refused). `pastAt`: whether an `at` that has passed is an issue.
 */
export function checkScheduleDefinition(
  raw: unknown,
  ctx: DefinitionContext,
  opts: { base?: ScheduleDefinition; agent?: string; prefix?: string; pastAt?: boolean } = {},
): Checked<ScheduleDefinition> {
  const prefix = opts.prefix ?? '';
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    return { ok: false, issues: [{ path: prefix.replace(/\.$/, '') || '(body)', message: 'must be an object { agent, every | cron | at, … }' }] };
  }
  const o = raw as Record<string, unknown>;
  const issues: FieldIssue[] = [];
  const known: readonly string[] = opts.agent ? KEYS.filter((k) => k !== 'agent') : KEYS;
  const extra = Object.keys(o).filter((k) => !known.includes(k));
  if (extra.length) issues.push({ path: prefix.replace(/\.$/, '') || '(body)', message: `unknown field(s): ${extra.join(', ')} (known: ${known.join(', ')})` });

  const base = opts.base;
  const d: Partial<ScheduleDefinition> = base ? { ...base } : { input: {}, tz: 'UTC', overlap: 'skip', missed: 'run_once', enabled: true };
  if (opts.agent) d.agent = opts.agent;

  const agent = opts.agent ? undefined : str(o, 'agent', issues, prefix, 100);
  if (agent !== undefined) d.agent = agent;
  if (!d.agent && !issues.some((i) => i.path === `${prefix}agent`)) issues.push({ path: `${prefix}agent`, message: 'required: the agent the schedule runs' });
  else if (d.agent && !ctx.agents().includes(d.agent))
    issues.push({ path: `${prefix}agent`, message: `unknown agent ${JSON.stringify(d.agent)} (agents: ${ctx.agents().join(', ') || 'none'})` });

  if (o.goal !== undefined) {
    const g = o.goal === null ? null : str(o, 'goal', issues, prefix);
    if (g === null) delete d.goal;
    else if (g !== undefined) d.goal = g;
  }
  if (o.input !== undefined) {
    if (!o.input || typeof o.input !== 'object' || Array.isArray(o.input))
      issues.push({ path: `${prefix}input`, message: "must be an object of the agent's inputs" });
    else d.input = o.input as Record<string, unknown>;
  }

  const given = TIMING.filter((k) => o[k] !== undefined && o[k] !== null);
  if (given.length > 1) issues.push({ path: `${prefix}${given[1]}`, message: `give one of every, cron or at (got ${given.join(' and ')})` });
  if (given.length === 1) {
    for (const k of TIMING) delete d[k];
    const k = given[0];
    const v = str(o, k, issues, prefix, 200);
    if (v !== undefined) d[k] = v;
  }
  if (!TIMING.some((k) => d[k] !== undefined) && !issues.some((i) => TIMING.some((k) => i.path === `${prefix}${k}`))) {
    issues.push({ path: `${prefix}every`, message: 'one of every ("30s", "15m", "1h"), cron ("0 6 * * 1-5") or at (an ISO time) is required' });
  }

  const tz = o.tz === undefined ? undefined : str(o, 'tz', issues, prefix, 100);
  if (tz !== undefined) {
    if (knownZone(tz)) d.tz = tz;
    else issues.push({ path: `${prefix}tz`, message: `unknown time zone ${JSON.stringify(tz)}; use an IANA name such as Europe/Berlin or America/New_York` });
  }
  const zoneOk = !issues.some((i) => i.path === `${prefix}tz`);

  if (d.every !== undefined) {
    const ms = parseDuration(d.every);
    if (ms === null) issues.push({ path: `${prefix}every`, message: `must be a duration such as "30s", "15m", "1h", got ${JSON.stringify(d.every)}` });
    else if (ms < MIN_EVERY_MS) issues.push({ path: `${prefix}every`, message: `must be at least 1s, got ${JSON.stringify(d.every)}` });
    else if (ms > MAX_EVERY_MS) issues.push({ path: `${prefix}every`, message: `must be at most 366d, got ${JSON.stringify(d.every)}` });
  }
  if (d.cron !== undefined && zoneOk) {
    try {
      if (cronOf(d.cron, d.tz ?? 'UTC').nextRun() === null) issues.push({ path: `${prefix}cron`, message: `${JSON.stringify(d.cron)} never fires` });
    } catch (e) {
      issues.push({
        path: `${prefix}cron`,
        message: `${JSON.stringify(d.cron)} is not a cron pattern of 5 or 6 fields: ${(e as Error).message.replace(/^CronPattern:\s*/, '')}`,
      });
    }
  }
  if (d.at !== undefined && zoneOk) {
    let next: Date | null = null;
    let bad = !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(d.at);
    if (!bad) {
      try {
        next = cronOf(d.at, d.tz ?? 'UTC').nextRun(new Date(ctx.now()));
      } catch {
        bad = true;
      }
    }
    if (bad)
      issues.push({
        path: `${prefix}at`,
        message: `must be an ISO time such as 2030-01-31T09:00:00Z (or without an offset, in tz), got ${JSON.stringify(d.at)}`,
      });
    else if (!next && opts.pastAt !== false) issues.push({ path: `${prefix}at`, message: `${d.at} has passed` });
  }

  const overlap = oneOf(o, 'overlap', ['skip', 'queue'] as const, issues, prefix);
  if (overlap) d.overlap = overlap;
  const missed = oneOf(o, 'missed', ['skip', 'run_once'] as const, issues, prefix);
  if (missed) d.missed = missed;
  if (o.enabled !== undefined) {
    if (typeof o.enabled === 'boolean') d.enabled = o.enabled;
    else issues.push({ path: `${prefix}enabled`, message: 'must be true or false' });
  }

  if (o.webhook === null) delete d.webhook;
  else if (o.webhook !== undefined) {
    const w = checkWebhook(o.webhook, ctx.allow, `${prefix}webhook`);
    if (w.ok) d.webhook = w.value;
    else issues.push(...w.issues);
  }
  if (o.announce === null) delete d.announce;
  else if (o.announce !== undefined) {
    const a = o.announce as Record<string, unknown> | null;
    // which channels exist is the server's to say when it announces (channels.json may change under --watch)
    if (!a || typeof a !== 'object' || Array.isArray(a)) issues.push({ path: `${prefix}announce`, message: 'must be an object { channel, chat }' });
    else {
      const ai: FieldIssue[] = [];
      const channel = str(a, 'channel', ai, `${prefix}announce.`, 100);
      const chat = str(a, 'chat', ai, `${prefix}announce.`, 300);
      const thread = str(a, 'thread', ai, `${prefix}announce.`, 300);
      if (channel === undefined && !ai.some((i) => i.path.endsWith('.channel')))
        ai.push({ path: `${prefix}announce.channel`, message: 'required: the chat channel (telegram, slack, feishu, …)' });
      if (chat === undefined && !ai.some((i) => i.path.endsWith('.chat')))
        ai.push({ path: `${prefix}announce.chat`, message: 'required: the chat to post to, as the channel names it' });
      const extraA = Object.keys(a).filter((k) => k !== 'channel' && k !== 'chat' && k !== 'thread');
      if (extraA.length) ai.push({ path: `${prefix}announce`, message: `unknown field(s): ${extraA.join(', ')}` });
      if (ai.length) issues.push(...ai);
      else d.announce = { channel: channel!, chat: chat!, ...(thread ? { thread } : {}) };
    }
  }

  if (d.agent && d.input && !issues.some((i) => i.path === `${prefix}agent` || i.path === `${prefix}input`)) {
    issues.push(...(ctx.inputIssues?.(d.agent, d.input) ?? []).map((i) => ({ ...i, path: `${prefix}${i.path}` })));
  }
  if (issues.length) return { ok: false, issues };
  return { ok: true, value: d as ScheduleDefinition };
}

/** The definition keys of a schedule, in a stable order (what a store keeps and a change compares). */
export function definitionOf(s: ScheduleDefinition): ScheduleDefinition {
  const out: ScheduleDefinition = { agent: s.agent, input: s.input, tz: s.tz, overlap: s.overlap, missed: s.missed, enabled: s.enabled };
  if (s.goal !== undefined) out.goal = s.goal;
  for (const k of TIMING) if (s[k] !== undefined) out[k] = s[k];
  if (s.webhook) out.webhook = s.webhook;
  if (s.announce) out.announce = s.announce;
  return out;
}
