/**
 * `runtrail doctor`: what this node needs, checked. One process: the data dir. Several nodes: the
 * variables, Redis, PostgreSQL (its schema made if missing), the workers Redis knows, and whether
 * each one's presence file is on this node's data dir — the data dir must be one folder every node
 * mounts, and this is how a node can tell.
 */
import { sandboxProbeChecks } from '../../sandbox/sandbox-probes.js';
import { runtrailDirs } from '../../sandbox/sandbox-paths.js';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ClusterConfigError, clusterSettings, type ClusterSettings } from '../../distributed/cluster-settings.js';
import { redactServiceUrl } from '../../distributed/service-url.js';
import { intOpt, parse } from '../args.js';
import { apiKeyChecks, definitionChecks, mcpChecks, sandboxCheck } from '../doctor-project-checks.js';
import { EXIT, UsageError, type CliDeps } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { dataDirOf, loadRegistry, projectDirOf } from '../project-context.js';
import { checkChannels } from '../../server/channel-host/check-channels.js';
import { hintCommand } from '../runtrail-command.js';

export interface DoctorCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
}

function checkDataDir(dataDir: string): DoctorCheck {
  try {
    mkdirSync(dataDir, { recursive: true });
    const probe = join(dataDir, `.doctor-${process.pid}`);
    writeFileSync(probe, 'ok');
    rmSync(probe);
    return { name: 'data dir', status: 'ok', detail: `${dataDir} is writable` };
  } catch (e) {
    return { name: 'data dir', status: 'fail', detail: `${dataDir} cannot be written: ${(e as Error).message}` };
  }
}

function checkNode(): DoctorCheck {
  const major = Number(process.versions.node.split('.')[0]);
  return major >= 20
    ? { name: 'node', status: 'ok', detail: `Node.js ${process.versions.node}` }
    : { name: 'node', status: 'fail', detail: `Node.js ${process.versions.node}: Runtrail needs 20 or later` };
}

async function clusterChecks(s: ClusterSettings, dataDir: string, hint: (rest: string) => string): Promise<DoctorCheck[]> {
  const out: DoctorCheck[] = [];
  const [{ checkRedis }, { PgRunStore }, { workersSeen, clusterDir }, { Redis }] = await Promise.all([
    import('../../distributed/cluster.js'),
    import('../../distributed/pg-run-store.js'),
    import('../../distributed/worker-presence.js'),
    import('ioredis'),
  ]);
  const redisShown = redactServiceUrl(s.redisUrl);
  let redisOk = false;
  try {
    await checkRedis(s.redisUrl);
    redisOk = true;
    out.push({ name: 'redis', status: 'ok', detail: `${redisShown} answers (key prefix ${s.prefix})` });
  } catch (e) {
    out.push({ name: 'redis', status: 'fail', detail: (e as Error).message });
  }
  try {
    const store = await PgRunStore.connect({ url: s.databaseUrl, schema: s.schema, fileLog: () => ({ append() {}, unwritten: () => [], close() {} }) });
    const counts = store.countByState();
    await store.close();
    const runs = Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
    out.push({ name: 'postgresql', status: 'ok', detail: `${redactServiceUrl(s.databaseUrl)} answers, schema ${s.schema} ready (${runs} runs)` });
  } catch (e) {
    out.push({ name: 'postgresql', status: 'fail', detail: (e as Error).message });
  }
  if (!redisOk) return out;
  const redis = new Redis(s.redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    const workers = await workersSeen(dataDir, redis, s.prefix);
    if (workers.length === 0) {
      out.push({
        name: 'workers',
        status: 'warn',
        detail: `no worker is running (start one with \`${hint('worker')}\`); the shared data dir is checked against running workers`,
      });
    }
    for (const w of workers) {
      const file = join(clusterDir(dataDir), `${w.name}.json`);
      if (w.file === 'same')
        out.push({ name: `worker ${w.name}`, status: 'ok', detail: `alive (beat ${w.beatAt}); its presence file is on this data dir: shared` });
      else {
        out.push({
          name: `worker ${w.name}`,
          status: 'fail',
          detail:
            w.file === 'missing'
              ? `alive in Redis, but ${file} is not on this node: RUNTRAIL_DATA_DIR must be one folder every node mounts (NFS or the like)`
              : `alive in Redis, but ${file} here is another worker's: this data dir is not the one that worker writes to`,
        });
      }
    }
  } finally {
    redis.disconnect();
  }
  return out;
}

export const doctorCommand: CliCommand = {
  name: 'doctor',
  usage: `  doctor              check what runs need: data dir, definitions (as validate), each MCP server
                      (connects, lists tools; --timeout-s N, default 10), the API keys of the configured
                      models (set or not, never shown), the sandbox, chat channels, and with several
                      nodes Redis, PostgreSQL, the workers and the shared data dir: --json; exit 1 on a failure
`,
  run(args, deps) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' }, 'timeout-s': { type: 'string' } });
    if (positionals.length) throw new UsageError(`doctor takes no arguments, got ${positionals[0]}`);
    const projectDir = projectDirOf(values, deps);
    const timeoutS = intOpt(values, 'timeout-s', 1) ?? 10;
    return doctor(values, dataDirOf(values, deps, projectDir), deps, projectDir, timeoutS * 1000);
  },
};

async function doctor(values: { json?: unknown }, dataDir: string, deps: CliDeps, projectDir: string, mcpTimeoutMs: number): Promise<number> {
  const checks: DoctorCheck[] = [checkNode(), checkDataDir(dataDir)];
  let settings: ClusterSettings | null = null;
  try {
    settings = clusterSettings(deps.env);
    checks.push({
      name: 'mode',
      status: 'ok',
      detail: settings ? 'several nodes (RUNTRAIL_REDIS_URL and RUNTRAIL_DATABASE_URL set)' : 'one process: run folders on the data dir, no services',
    });
  } catch (e) {
    if (!(e instanceof ClusterConfigError)) throw e;
    checks.push({ name: 'mode', status: 'fail', detail: e.message });
  }
  if (settings) checks.push(...(await clusterChecks(settings, dataDir, (rest) => hintCommand(deps, rest))));
  const registry = await loadRegistry(projectDir, deps);
  checks.push(...(await definitionChecks(registry, hintCommand(deps, 'validate'))));
  checks.push(...(await mcpChecks(registry, deps.env, mcpTimeoutMs)));
  checks.push(...apiKeyChecks(registry, deps.env));
  checks.push(sandboxCheck());
  // real attempts from inside a sandbox of config.json's settings: each must be refused
  checks.push(...(await sandboxProbeChecks(registry.config.sandbox, { projectDir, protectedDirs: runtrailDirs(projectDir, dataDir) })));
  // each chat channel of channels.json asked of its service (a wrong token, an API root that does not answer)
  checks.push(...(await checkChannels([...registry.channels.values()])));
  const ok = checks.every((c) => c.status !== 'fail');
  if (values.json) deps.stdout.write(`${JSON.stringify({ ok, checks })}\n`);
  else for (const c of checks) deps.stdout.write(`${c.status === 'ok' ? '✓' : c.status === 'warn' ? '!' : '✗'} ${c.name}: ${c.detail}\n`);
  return ok ? EXIT.ok : EXIT.failed;
}
