/**
 * Several nodes: with RUNTRAIL_REDIS_URL and RUNTRAIL_DATABASE_URL set, a RunService
 * composes the PostgreSQL store, the Redis Streams fan-out and the BullMQ queue connected here.
 * Without them this module is never loaded: one process, its files, no services.
 */
import { Redis, type RedisOptions } from 'ioredis';
import type { RunEventLog } from '../runtime/storage/run-store.js';
import { BullRunQueue } from './bullmq-run-queue.js';
import { PgRunStore } from './pg-run-store.js';
import { RedisEventFanout } from './redis-event-fanout.js';
import { redactServiceUrl, ServiceUnavailableError } from './service-url.js';
import type { ClusterSettings, NodeRole } from './cluster-settings.js';

/** The connections of one node, and what a RunService composes. */
export interface Cluster {
  settings: ClusterSettings;
  store: PgRunStore;
  fanout: RedisEventFanout;
  queue: BullRunQueue;
  /** A general connection (presence, doctor). */
  redis: Redis;
  /** Quits every connection (after the RunService closed or drained). */
  close(): Promise<void>;
}

/** Connects once with no retry: a node that cannot reach Redis at start says so and exits. */
export async function checkRedis(url: string): Promise<void> {
  const probe = new Redis(url, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, connectTimeout: 5_000, enableOfflineQueue: false });
  // the socket's own error (ECONNREFUSED, ENOTFOUND, NOAUTH) says more than connect()'s "Connection is closed"
  let cause: Error | null = null;
  probe.on('error', (e: Error) => (cause ??= e));
  try {
    await probe.connect();
    await probe.ping();
  } catch (e) {
    throw new ServiceUnavailableError('Redis', redactServiceUrl(url), (cause ?? (e as Error)).message || 'connection refused');
  } finally {
    probe.disconnect();
  }
}

export async function connectCluster(
  s: ClusterSettings,
  o: {
    role: NodeRole;
    concurrency: number;
    maxQueue: number;
    /** The run folder's own events.jsonl, kept beside the database's copy. */
    fileLog: (runId: string, root: string) => RunEventLog;
    onRunning?: (runIds: string[]) => void;
  },
): Promise<Cluster> {
  await checkRedis(s.redisUrl);
  const shownUrl = redactServiceUrl(s.redisUrl);
  const conns: Redis[] = [];
  const open = (opts: RedisOptions): Redis => {
    const r = new Redis(s.redisUrl, opts);
    r.on('error', () => undefined); // reconnects by itself; calls report their own errors
    conns.push(r);
    return r;
  };
  // workers and followers wait for a Redis that restarts; the API's own calls fail fast instead
  const waiting: RedisOptions = { maxRetriesPerRequest: null };
  const failFast: RedisOptions = { maxRetriesPerRequest: 1, enableOfflineQueue: false };
  let fanout: RedisEventFanout | null = null;
  const store = await PgRunStore.connect({
    url: s.databaseUrl,
    schema: s.schema,
    fileLog: o.fileLog,
    onCommitted: (runId, events, lines) => fanout?.publishAll(runId, events, lines),
  }).catch(async (e: unknown) => {
    await Promise.all(conns.map((c) => c.quit().catch(() => undefined)));
    throw e;
  });
  fanout = new RedisEventFanout({ prefix: s.prefix, writer: open(waiting), reader: open(waiting), history: (runId, after) => store.readEvents(runId, after) });
  const redis = open(waiting);
  const queue = new BullRunQueue({
    connection: open(failFast),
    blockingConnection: { url: s.redisUrl, maxRetriesPerRequest: null },
    shownUrl,
    prefix: s.prefix,
    pub: open(failFast),
    sub: open(waiting),
    work: o.role !== 'api',
    concurrency: o.concurrency,
    maxQueue: o.maxQueue,
    stalledIntervalMs: s.stalledIntervalMs,
    lockDurationMs: s.lockDurationMs,
    ...(o.onRunning ? { onRunning: o.onRunning } : {}),
  });
  return {
    settings: s,
    store,
    fanout,
    queue,
    redis,
    close: async () => {
      await Promise.all(conns.map((c) => c.quit().catch(() => c.disconnect())));
    },
  };
}
