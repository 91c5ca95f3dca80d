/**
 * `runtrail/distributed`: the services of several nodes, a subpath of its own so that
 * importing `runtrail` never loads a PostgreSQL or Redis client.
 */
export { clusterSettings, ClusterConfigError, NODE_ROLES, type ClusterSettings, type NodeRole } from './cluster-settings.js';
export { connectCluster, checkRedis, type Cluster } from './cluster.js';
export { PgRunStore, type PgRunStoreOptions } from './pg-run-store.js';
export { RedisEventFanout, type RedisEventFanoutOptions } from './redis-event-fanout.js';
export { BullRunQueue, type BullRunQueueOptions } from './bullmq-run-queue.js';
export { WorkerPresence, workersSeen, type PresenceFile } from './worker-presence.js';
export { ServiceUnavailableError, redactServiceUrl } from './service-url.js';
