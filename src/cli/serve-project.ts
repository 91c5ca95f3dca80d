/**
 * `runtrail serve` and `runtrail worker`: a RunService over the project's registry and, for the API
 * role, the HTTP server in front of it; with --watch, agents, skills and plugins are re-read for the
 * next run when their files change. With RUNTRAIL_REDIS_URL and RUNTRAIL_DATABASE_URL the service
 * composes the shared queue, store and fan-out, and the role decides what this node does.
 */
import { sandboxStartLine } from '../sandbox/sandbox-description.js';
import { join } from 'node:path';
import { watchProject } from '../extensions/project-watcher.js';
import { defaultSkillsDir } from '../runtime/package-root.js';
import { LiveAgentSource } from '../runtime/agent-registry.js';
import { RunService, type RunServiceOptions } from '../runtime/service/run-service.js';
import { EventStore } from '../runtime/storage/event-store.js';
import { RunFolder } from '../runtime/storage/run-folder.js';
import { endLeftovers } from '../runtime/storage/interrupted-runs.js';
import { isRunId } from '../runtime/storage/run-id.js';
import { clusterSettings, type ClusterSettings } from '../distributed/cluster-settings.js';
import { redactServiceUrl } from '../distributed/service-url.js';
import type { Cluster } from '../distributed/cluster.js';
import type { WorkerPresence } from '../distributed/worker-presence.js';
import { UsageError, type CliOut, type ServeOptions } from './cli-io.js';
import { cliPlugins } from './cli-plugins.js';
import { loadRegistry, reportProblems } from './project-context.js';
import { configStamp, removeServeStamp, writeServeStamp } from './serve-stamp.js';
import { prepareMcp, stopMcp } from './mcp-lifecycle.js';
import { cliTelemetry, finishTelemetry } from './cli-telemetry.js';
import { startChannels } from '../server/channel-host/start-channels.js';
import type { ChatAnnouncer } from '../server/channel-host/types.js';

/** How long a stopping `serve` gives the tool calls in flight to finish before it leaves its runs (--drain-s). */
export const SERVE_DRAIN_S = 10;

export interface ServingNode {
  /** The HTTP server's URL; null for a worker (it serves no requests). */
  url: string | null;
  /** What this node is, for the line the CLI prints. */
  describe: string;
  /** Ctrl-C / SIGTERM: a worker drains (stops claiming, lets runs finish for --drain-s, interrupts the rest). */
  close(): Promise<void>;
}

/** The shared services of several nodes, connected, and this worker's presence (null for an API node). */
async function joinCluster(
  s: ClusterSettings,
  opts: ServeOptions,
  io: { stderr: CliOut },
): Promise<{ cluster: Cluster; presence: WorkerPresence | null; runOwnerGone: (dataDir: string, ownerFile: string) => boolean }> {
  const [{ connectCluster }, { WorkerPresence, runOwnerGone }] = await Promise.all([
    import('../distributed/cluster.js'),
    import('../distributed/worker-presence.js'),
  ]);
  const role = opts.role ?? 'all';
  let presence: WorkerPresence | null = null;
  const cluster = await connectCluster(s, {
    role,
    concurrency: opts.concurrency ?? 4,
    maxQueue: 100,
    fileLog: (_runId, root) => new EventStore(RunFolder.at(root).path('events')),
    onRunning: (ids) => presence?.setRunning(ids),
  });
  if (role !== 'api') {
    presence = new WorkerPresence({
      dataDir: opts.dataDir,
      redis: cluster.redis,
      prefix: s.prefix,
      concurrency: opts.concurrency ?? 4,
      endRunLeftovers: (runId) => (isRunId(runId) ? endLeftovers(join(opts.dataDir, 'runs', runId)) : Promise.resolve('')),
    });
    const { ended } = await presence.start();
    for (const line of ended) io.stderr.write(`runtrail: a worker that died on this host left processes: ${line}\n`);
  }
  return { cluster, presence, runOwnerGone };
}

export async function serveProject(opts: ServeOptions, io: { stderr: CliOut }): Promise<ServingNode> {
  const role = opts.role ?? 'all';
  const settings = clusterSettings(opts.env);
  if (!settings && role !== 'all') {
    throw new UsageError(
      `--role ${role} needs RUNTRAIL_REDIS_URL and RUNTRAIL_DATABASE_URL (several nodes); without them one process takes requests and runs them`,
    );
  }
  const skillsDir = opts.skillsDir ?? defaultSkillsDir();
  // shell_task hands whoever reaches the API a shell: offered only when asked for
  const builtins = await cliPlugins(skillsDir, { shellTask: opts.env.RUNTRAIL_ENABLE_SHELL_TASK === '1' });
  const load = () => loadRegistry(opts.projectDir, { env: opts.env, agents: builtins, skillsDir });
  let registry = await load();
  // config.json as this server read it (a CLI beside it compares, see serve-stamp.ts)
  let loadedConfig = configStamp(opts.projectDir, opts.env.HOME);
  // schedules and webhooks (croner, standardwebhooks) load with the server, not with every command
  const { projectTriggerProblems, projectTriggers } = await import('../triggers/project-triggers.js');
  const triggerProblems = () => projectTriggerProblems(registry);
  reportProblems(registry, { ...io, env: opts.env, cwd: opts.projectDir }, opts.strict === true, triggerProblems(), undefined, { startsRuns: true });
  io.stderr.write(`runtrail: ${sandboxStartLine(registry.config.sandbox)}\n`);
  await prepareMcp(registry, opts.dataDir, io.stderr);
  const source = new LiveAgentSource(registry);
  // traces when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set: batched, exported within about a second and at shutdown
  const telemetry = await cliTelemetry(opts.env, io.stderr, { announce: true });
  const joined = settings
    ? await joinCluster(settings, opts, io).catch(async (e: unknown) => {
        await finishTelemetry(telemetry, io.stderr);
        throw e;
      })
    : null;
  const shared: Partial<RunServiceOptions> = joined
    ? {
        queue: joined.cluster.queue,
        store: joined.cluster.store,
        fanout: joined.cluster.fanout,
        reconcileMs: joined.cluster.settings.reconcileMs,
        drainsOnSignal: role !== 'api',
        workerGone: async (runId: string) => joined.runOwnerGone(opts.dataDir, new RunFolder(join(opts.dataDir, 'runs'), runId).path('owner')),
      }
    : {
        ...(opts.concurrency ? { concurrency: opts.concurrency } : {}),
        // the commands of the calls in flight are not sent the stop signal: they get --drain-s to finish
        drainsOnSignal: (opts.drainS ?? SERVE_DRAIN_S) > 0,
      };
  let serverUrl: string | null = null;
  // several nodes keep schedules and webhooks in PostgreSQL, where a fire time is claimed once
  const stores = joined
    ? await (await import('../triggers/pg-trigger-store.js'))
        .connectPgTriggerStores({ url: joined.cluster.settings.databaseUrl, schema: joined.cluster.settings.schema })
        .catch(async (e: unknown) => {
          await joined.presence?.stop();
          await joined.cluster.close();
          await finishTelemetry(telemetry, io.stderr);
          throw e;
        })
    : undefined;
  // a schedule's `announce` goes to the chat channels this node runs (started below, after the service)
  let announcer: ChatAnnouncer | null = null;
  const triggers = projectTriggers(() => registry, {
    dataDir: opts.dataDir,
    baseUrl: () => serverUrl,
    announce: (target, runId) =>
      announcer ? announcer(target, runId) : Promise.resolve({ ok: false, error: 'this node runs no chat channels (they run where --role is all)' }),
    log: (line) => io.stderr.write(`runtrail: ${line}\n`),
    ...(stores ? { stores } : {}),
  });
  const service = new RunService({
    dataDir: opts.dataDir,
    agentSource: source,
    skillDirs: registry.skillDirs,
    defaults: () => registry.config,
    skillsDir,
    env: opts.env,
    // runs a killed server left behind go on from their checkpoints
    resumeOnStart: true,
    log: (line) => io.stderr.write(`runtrail: ${line}\n`),
    ...shared,
    observers: [...(telemetry ? [telemetry.observer] : []), triggers.observer],
  });
  await service.init();
  // chat channels start where requests are taken by one process (several API nodes would each poll the same bot)
  const channels = role === 'all' || opts.channelsOnly ? startChannels(registry, service, opts.dataDir, () => registry.list()) : null;
  announcer = channels?.announce ?? null;
  await triggers.start(service);
  const roots = [join(opts.projectDir, '.runtrail'), ...(opts.env.HOME ? [join(opts.env.HOME, '.runtrail')] : [])];
  const watcher = opts.watch
    ? watchProject(roots, async () => {
        const stamp = configStamp(opts.projectDir, opts.env.HOME);
        const next = await load();
        registry = next;
        loadedConfig = stamp;
        reportProblems(next, { ...io, env: opts.env, cwd: opts.projectDir }, false, triggerProblems());
        source.replace(next);
        await triggers.syncDeclared();
        io.stderr.write(`runtrail: definitions reloaded (${next.names().length} agents)\n`);
        if (serverUrl) writeServeStamp(opts.dataDir, { pid: process.pid, url: serverUrl, config: loadedConfig });
      })
    : null;
  const stop = async (server: { close(): Promise<void> } | null) => {
    watcher?.close();
    removeServeStamp(opts.dataDir);
    // schedules stop firing first; webhooks still owed are sent by the next start (they are on disk)
    await triggers.stop();
    // a worker stops claiming and lets its runs finish first; the API keeps streaming them meanwhile
    if (joined && role !== 'api') await service.drain((opts.drainS ?? 60) * 1000);
    await channels?.stop();
    await server?.close();
    // a server that stops (a deploy, Ctrl-C) does not throw work away: a run that can be resumed is
    // left to be, once the tool calls it has in flight finished (--drain-s at most), and its next start
    // (or another worker) takes it up; the others are cancelled
    await service.close(undefined, { leaveResumable: true, graceMs: joined ? 0 : (opts.drainS ?? SERVE_DRAIN_S) * 1000 });
    await joined?.presence?.stop();
    await joined?.cluster.close();
    await stopMcp(registry.mcpPool);
    await finishTelemetry(telemetry, io.stderr);
  };
  const where = settings ? ` (Redis ${redactServiceUrl(settings.redisUrl)}, PostgreSQL ${redactServiceUrl(settings.databaseUrl)})` : '';
  if (opts.channelsOnly) {
    const names = [...registry.channels.keys()];
    return {
      url: null,
      describe: `runtrail channels running: ${names.join(', ') || 'none configured (.runtrail/channels.json)'}${where}`,
      close: () => stop(null),
    };
  }
  if (role === 'worker') {
    return { url: null, describe: `runtrail worker claiming runs, concurrency ${opts.concurrency ?? 4}${where}`, close: () => stop(null) };
  }
  try {
    const { startServer } = await import('../server/start-server.js');
    const [{ httpLimitsFromConfig }, { uploadLimitsFromConfig }] = await Promise.all([import('../server/http-limits.js'), import('../server/upload-quota.js')]);
    const limits = { http: httpLimitsFromConfig(registry.config.http), uploads: uploadLimitsFromConfig(registry.config.uploads) };
    const server = await startServer({
      service,
      dataDir: opts.dataDir,
      skillsDir,
      host: opts.host,
      port: opts.port,
      env: opts.env,
      triggers,
      ...limits,
      ...(channels ? { channels } : {}),
    });
    serverUrl = server.url;
    // what this server loaded, for the CLI beside it to compare config.json with (serve-stamp.ts)
    writeServeStamp(opts.dataDir, { pid: process.pid, url: server.url, config: loadedConfig });
    const what = role === 'api' ? 'runtrail API node serving' : 'runtrail serving';
    return { url: server.url, describe: `${what} on ${server.url}${where}`, close: () => stop(server) };
  } catch (e) {
    await stop(null);
    throw e;
  }
}
