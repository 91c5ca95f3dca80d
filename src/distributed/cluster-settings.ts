/**
 * The variables of several nodes, read and checked without loading any service client:
 * RUNTRAIL_REDIS_URL and RUNTRAIL_DATABASE_URL both, or neither (one process).
 */
import { redactServiceUrl } from './service-url.js';

export type NodeRole = 'api' | 'worker' | 'all';
export const NODE_ROLES: readonly NodeRole[] = ['api', 'worker', 'all'];

export interface ClusterSettings {
  redisUrl: string;
  databaseUrl: string;
  /** RUNTRAIL_DATABASE_SCHEMA, default `public`. */
  schema: string;
  /** RUNTRAIL_REDIS_PREFIX, default `runtrail` (isolation is by the URL's database number; this splits further). */
  prefix: string;
  /** RUNTRAIL_STALLED_INTERVAL_MS (default 30,000) and RUNTRAIL_LOCK_DURATION_MS (default 30,000):
   *  a dead worker's runs are found within their sum. */
  stalledIntervalMs: number;
  lockDurationMs: number;
  /** RUNTRAIL_RECONCILE_MS: how often a node looks for queued runs the queue lost; default 10,000. */
  reconcileMs: number;
}

/** A variable that is set wrong: the command exits 2 with it. */
export class ClusterConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ClusterConfigError';
  }
}

function positiveInt(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const v = env[name];
  if (v === undefined || v === '') return fallback;
  if (!/^\d+$/.test(v.trim()) || Number(v) < 1) throw new ClusterConfigError(`${name} must be a whole number of milliseconds ≥ 1, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** The settings of several nodes, or null when neither service is configured (one process). */
export function clusterSettings(env: Record<string, string | undefined>): ClusterSettings | null {
  const redisUrl = env.RUNTRAIL_REDIS_URL?.trim() || '';
  const databaseUrl = env.RUNTRAIL_DATABASE_URL?.trim() || '';
  if (!redisUrl && !databaseUrl) return null;
  if (!redisUrl || !databaseUrl) {
    const [set, unset] = redisUrl ? ['RUNTRAIL_REDIS_URL', 'RUNTRAIL_DATABASE_URL'] : ['RUNTRAIL_DATABASE_URL', 'RUNTRAIL_REDIS_URL'];
    throw new ClusterConfigError(
      `${set} is set but ${unset} is not: several nodes need both (Redis for the queue and live events, PostgreSQL for runs and their events)`,
    );
  }
  if (!/^rediss?:\/\//.test(redisUrl))
    throw new ClusterConfigError(`RUNTRAIL_REDIS_URL must start with redis:// or rediss://, got ${JSON.stringify(redactServiceUrl(redisUrl))}`);
  if (!/^postgres(ql)?:\/\//.test(databaseUrl))
    throw new ClusterConfigError(`RUNTRAIL_DATABASE_URL must start with postgres:// or postgresql://, got ${JSON.stringify(redactServiceUrl(databaseUrl))}`);
  const schema = env.RUNTRAIL_DATABASE_SCHEMA?.trim() || 'public';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema))
    throw new ClusterConfigError(`RUNTRAIL_DATABASE_SCHEMA must be a lowercase SQL identifier, got ${JSON.stringify(schema)}`);
  const prefix = env.RUNTRAIL_REDIS_PREFIX?.trim() || 'runtrail';
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(prefix))
    throw new ClusterConfigError(`RUNTRAIL_REDIS_PREFIX may hold letters, digits, _ . - (at most 64), got ${JSON.stringify(prefix)}`);
  return {
    redisUrl,
    databaseUrl,
    schema,
    prefix,
    stalledIntervalMs: positiveInt(env, 'RUNTRAIL_STALLED_INTERVAL_MS', 30_000),
    lockDurationMs: positiveInt(env, 'RUNTRAIL_LOCK_DURATION_MS', 30_000),
    reconcileMs: positiveInt(env, 'RUNTRAIL_RECONCILE_MS', 10_000),
  };
}
