/**
 * `runtrail schedules list|add|pause|resume|rm|run`: the schedules of the data dir (PostgreSQL with
 * several nodes), changed where a running server reads them (it notices within a few seconds).
 * `run` starts the schedule's run now, in this process, and follows it as `runtrail run` does.
 */
import { checkPluginInput } from '../../runtime/plugin-input.js';
import { staleServerNotice } from '../serve-stamp.js';
import { RunRequestError } from '../../runtime/run-request-error.js';
import { clusterSettings } from '../../distributed/cluster-settings.js';
import type { ScheduleView, TriggerHost } from '../../triggers/trigger-host.js';
import { parse, type Values } from '../args.js';
import { coerceInput, parseInputJson, parseInputPairs } from '../build-input.js';
import { EXIT, UsageError, type CliDeps } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { exitFor, printSummary } from '../follow-run.js';
import { projectContext, serviceFor, type ProjectContext } from '../project-context.js';
import { createWireWriter } from '../wire-output.js';
import { hintCommand } from '../runtrail-command.js';

const SUBCOMMANDS = ['list', 'add', 'pause', 'resume', 'rm', 'run'] as const;

const OPTIONS = {
  json: { type: 'boolean' },
  every: { type: 'string' },
  cron: { type: 'string' },
  at: { type: 'string' },
  tz: { type: 'string' },
  goal: { type: 'string' },
  input: { type: 'string', multiple: true },
  'input-json': { type: 'string' },
  overlap: { type: 'string' },
  missed: { type: 'string' },
  webhook: { type: 'string' },
  'webhook-secret': { type: 'string' },
  paused: { type: 'boolean' },
} as const;

export const schedulesCommand: CliCommand = {
  name: 'schedules',
  usage: `  schedules list      the schedules (a server fires them): next and last runs; --json
  schedules add <agent>  --every 30s|15m|1h | --cron "0 6 * * 1-5" | --at ISO-TIME, --tz ZONE,
                      --goal TEXT, --input key=value, --input-json JSON|@file, --overlap skip|queue,
                      --missed skip|run_once, --webhook URL, --webhook-secret whsec_…, --paused
  schedules pause|resume|rm <id>    stop and restart its firing; remove it
  schedules run <id>  start its run now, here, and follow it
`,
  async run(args, deps) {
    const [sub, ...rest] = args;
    if (!SUBCOMMANDS.includes(sub as (typeof SUBCOMMANDS)[number]))
      throw new UsageError(`schedules needs one of ${SUBCOMMANDS.join(', ')}${sub ? `, got "${sub}"` : ''}`);
    const { values, positionals } = parse(rest, OPTIONS);
    const ctx = await projectContext(values, deps);
    const host = await triggersOf(ctx, deps);
    try {
      const code = await subcommand(sub as (typeof SUBCOMMANDS)[number], host, ctx, values, positionals, deps);
      // a schedule a running server fires is fired with the settings that server loaded
      const notice = sub === 'add' || sub === 'resume' ? staleServerNotice(ctx.dataDir, ctx.projectDir, deps.env.HOME) : null;
      if (notice) deps.stderr.write(`runtrail: ${notice}\n`);
      return code;
    } catch (e) {
      if (!(e instanceof RunRequestError)) throw e;
      // a refused schedule: each wrong field on its own line
      const issues = e.details.issues ?? [];
      deps.stderr.write(`runtrail: ${issues.length ? issues.map((i) => `${i.path}: ${i.message}`).join('\nruntrail: ') : e.message}\n`);
      return EXIT.usage;
    } finally {
      await host.stop();
    }
  },
};

async function triggersOf(ctx: ProjectContext, deps: CliDeps): Promise<TriggerHost> {
  const { projectTriggers } = await import('../../triggers/project-triggers.js');
  const settings = clusterSettings(deps.env);
  const stores = settings
    ? await (await import('../../triggers/pg-trigger-store.js')).connectPgTriggerStores({ url: settings.databaseUrl, schema: settings.schema })
    : undefined;
  const host = projectTriggers(() => ctx.registry, {
    dataDir: ctx.dataDir,
    cwd: deps.cwd,
    log: (l) => deps.stderr.write(`runtrail: ${l}\n`),
    ...(stores ? { stores } : {}),
  });
  // what the project declares is listed (and fired by a server) like the rest
  await host.syncDeclared();
  return host;
}

function one(deps: Pick<CliDeps, 'cwd' | 'env'>, positionals: string[], what: string): string {
  if (positionals.length !== 1) throw new UsageError(`schedules ${what} needs one schedule id (${hintCommand(deps, 'schedules list')} shows them)`);
  return positionals[0];
}

function timing(s: ScheduleView): string {
  const t = s.every ? `every ${s.every}` : s.cron ? `cron "${s.cron}"` : `at ${s.at}`;
  return s.tz === 'UTC' ? t : `${t} (${s.tz})`;
}

function line(s: ScheduleView): string {
  const last = s.last_run ? `last ${s.last_run.run_id} ${s.last_run.run_status ?? 'running'}` : 'no run yet';
  const state = s.enabled ? (s.backoff ? `backing off until ${s.backoff.until}` : `next ${s.next_run_at ?? 'none'}`) : 'paused';
  return `${s.schedule_id}  ${s.agent}  ${timing(s)}  ${state}  ${last}${s.source === 'api' ? '' : `  (${s.source})`}\n${problemLines(s)}`;
}

/** What went wrong lately, under the schedule's line: its last failed fire and the webhooks that are not getting through. */
function problemLines(s: ScheduleView): string {
  let out = '';
  const f = s.last_failure;
  if (f) {
    const what = f.run_id ? `run ${f.run_id} ${f.run_status}` : 'no run started';
    out += `  last failure (fire time ${f.fire_time}): ${what}${f.detail ? `: ${f.detail}` : ''}\n`;
  }
  for (const w of s.webhook_failures) {
    const next = w.state === 'pending' ? (w.next_attempt_at ? `, retrying at ${w.next_attempt_at}` : ', retrying') : ', given up';
    out += `  webhook ${w.type} of ${w.run_id} to ${w.url}: ${w.attempts} failed attempt(s), last: ${w.error}${next}\n`;
  }
  return out;
}

async function subcommand(
  sub: (typeof SUBCOMMANDS)[number],
  host: TriggerHost,
  ctx: ProjectContext,
  values: Values,
  positionals: string[],
  deps: CliDeps,
): Promise<number> {
  const out = (s: ScheduleView) => deps.stdout.write(values.json ? `${JSON.stringify(s)}\n` : line(s));
  switch (sub) {
    case 'list': {
      const all = await host.list();
      if (values.json) deps.stdout.write(`${JSON.stringify({ schedules: all })}\n`);
      else if (!all.length) deps.stdout.write(`no schedules (${hintCommand(deps, 'schedules add <agent> --every 1h')})\n`);
      else for (const s of all) out(s);
      return EXIT.ok;
    }
    case 'add': {
      const agent = one(deps, positionals, 'add <agent>');
      out(await host.create(addBody(agent, ctx, values, deps)));
      return EXIT.ok;
    }
    case 'pause':
    case 'resume':
      out(await host.update(one(deps, positionals, sub), { enabled: sub === 'resume' }));
      return EXIT.ok;
    case 'rm': {
      const id = one(deps, positionals, 'rm');
      await host.remove(id);
      deps.stdout.write(`removed ${id}\n`);
      return EXIT.ok;
    }
    case 'run':
      return runNow(one(deps, positionals, 'run'), host, ctx, deps);
  }
}

/** The body `add` sends, as POST /api/schedules takes it. */
function addBody(agent: string, ctx: ProjectContext, values: Values, deps: CliDeps): Record<string, unknown> {
  let input: Record<string, unknown> = typeof values['input-json'] === 'string' ? parseInputJson(values['input-json'], deps.cwd) : {};
  const pairs = parseInputPairs((values.input as string[] | undefined) ?? []);
  input = { ...input, ...pairs };
  const plugin = ctx.registry.get(agent);
  if (plugin)
    input = coerceInput(input, new Set(Object.keys(pairs)), (v) => {
      const r = checkPluginInput(plugin, v);
      return r.ok ? [] : r.issues;
    });
  const str = (k: string) => (typeof values[k] === 'string' ? (values[k] as string) : undefined);
  const webhook = str('webhook');
  if (!webhook && str('webhook-secret')) throw new UsageError('--webhook-secret needs --webhook URL');
  return {
    agent,
    input,
    ...Object.fromEntries((['every', 'cron', 'at', 'tz', 'goal', 'overlap', 'missed'] as const).flatMap((k) => (str(k) !== undefined ? [[k, str(k)]] : []))),
    ...(webhook ? { webhook: { url: webhook, ...(str('webhook-secret') ? { secret: str('webhook-secret') } : {}) } } : {}),
    ...(values.paused ? { enabled: false } : {}),
  };
}

/** The schedule's run, started now in this process and followed to its end. */
async function runNow(id: string, host: TriggerHost, ctx: ProjectContext, deps: CliDeps): Promise<number> {
  const service = serviceFor(ctx, deps, [host.observer]);
  // this process delivers the run's webhooks while it runs; what is left is a server's to send
  await host.attach(service);
  try {
    const fire = await host.runNow(id);
    const runId = fire.run_id!;
    deps.stdout.write(`▶ ${runId} · schedule ${id} · fire time ${fire.fire_time}\n`);
    const writer = createWireWriter('text', runId, deps.stdout, { showReasoning: false });
    const off = deps.onInterrupt?.(() => void service.cancel(runId).catch(() => undefined));
    try {
      for await (const ev of service.events(runId)) writer.write(ev);
    } finally {
      off?.();
    }
    const final = await service.wait(runId);
    printSummary(final, service.runsDir, deps.stdout);
    await host.settle(15_000);
    return exitFor(final.status);
  } finally {
    await host.stop();
    await service.close();
  }
}
