/**
 * Test helpers for several nodes: the real PostgreSQL and Redis on loopback (each test file its own
 * schema and key prefix, removed afterwards), Runtrail nodes as separate processes of the built CLI,
 * a Redis of a test's own (to restart it), and a TCP proxy in front of PostgreSQL (to lose it).
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { runtrailPackageRoot } from '../../src/runtime/package-root.js';
import { expect } from 'vitest';
import { getJson, postJson } from '../server/helpers.js';
import { eventually, liveProcesses, sleep } from '../tools/helpers.js';

export const MAIN = join(runtrailPackageRoot(), 'dist', 'src', 'cli', 'main.js');
export const PG_URL = process.env.RUNTRAIL_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_URL = process.env.RUNTRAIL_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** Why the services cannot be used (null when they can). CI sets RUNTRAIL_REQUIRE_SERVICES=1: then it is an error. */
export async function servicesDown(): Promise<string | null> {
  let why: string | null = null;
  const c = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2_000 });
  try {
    await c.connect();
    await c.query('SELECT 1');
  } catch (e) {
    why = `PostgreSQL at ${PG_URL}: ${(e as Error).message}`;
  } finally {
    await c.end().catch(() => undefined);
  }
  const r = new Redis(REDIS_URL, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    await r.ping();
  } catch (e) {
    why ??= `Redis at ${REDIS_URL}: ${(e as Error).message}`;
  } finally {
    r.disconnect();
  }
  if (why && process.env.RUNTRAIL_REQUIRE_SERVICES === '1') throw new Error(`the services the tests need are down: ${why}`);
  if (why) console.warn(`skipping tests of several nodes: ${why}`);
  return why;
}

export function uniqueName(tag: string): string {
  return `rt_${tag}_${process.pid}_${Math.floor(Math.random() * 1e6)}`;
}

/** The event lines PostgreSQL holds for a run, in seq order, as one text. */
export async function pgLines(schema: string, runId: string): Promise<string[]> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    const r = await c.query<{ line: string }>(`SELECT line FROM "${schema}".runtrail_events WHERE run_id = $1 ORDER BY seq`, [runId]);
    return r.rows.map((x) => x.line);
  } finally {
    await c.end();
  }
}

/** Drops a test's schema and deletes its Redis keys. */
export async function removeIsolation(schema: string, prefix: string, redisUrl = REDIS_URL): Promise<void> {
  const c = new pg.Client({ connectionString: PG_URL });
  await c.connect();
  try {
    await c.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await c.end();
  }
  const r = new Redis(redisUrl, { lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 1 });
  r.on('error', () => undefined);
  try {
    await r.connect();
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 500);
      cursor = next;
      if (keys.length) await r.del(...keys);
    } while (cursor !== '0');
  } catch {
    // a test's own Redis may be gone already
  } finally {
    r.disconnect();
  }
}

export interface NodeProcess {
  child: ChildProcess;
  /** The API node's URL (null for a worker). */
  url: string | null;
  out(): string;
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
}

/** A cluster of Runtrail processes on one shared data dir, one schema and one key prefix. */
export class TestCluster {
  readonly dir = mkdtempSync(join(tmpdir(), 'runtrail-cluster-'));
  readonly dataDir = join(this.dir, 'data');
  readonly schema = uniqueName('s');
  readonly prefix = uniqueName('p');
  readonly nodes: NodeProcess[] = [];
  /** Markers of commands the runs start (their leftovers are ended at cleanup). */
  readonly markers: string[] = [];

  constructor(
    private readonly extraEnv: Record<string, string> = {},
    readonly redisUrl = REDIS_URL,
    readonly databaseUrl = PG_URL,
  ) {}

  env(more: Record<string, string> = {}): NodeJS.ProcessEnv {
    const clean: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('RUNTRAIL_') && !k.startsWith('OTEL_')) clean[k] = v;
    return {
      ...clean,
      NO_COLOR: '1',
      RUNTRAIL_REDIS_URL: this.redisUrl,
      RUNTRAIL_DATABASE_URL: this.databaseUrl,
      RUNTRAIL_DATABASE_SCHEMA: this.schema,
      RUNTRAIL_REDIS_PREFIX: this.prefix,
      RUNTRAIL_DATA_DIR: this.dataDir,
      RUNTRAIL_ENABLE_SHELL_TASK: '1',
      ...this.extraEnv,
      ...more,
    };
  }

  /** Runs the CLI with this cluster's variables; resolves once it printed its "(Ctrl-C to stop)" line. */
  async start(args: string[], more: Record<string, string> = {}): Promise<NodeProcess> {
    const child = spawn(process.execPath, [MAIN, ...args], { cwd: this.dir, env: this.env(more), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
    child.stderr!.setEncoding('utf8').on('data', (s: string) => (out += s));
    const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
    let gone = false;
    void exited.then(() => (gone = true));
    const node: NodeProcess = {
      child,
      url: null,
      out: () => out,
      exited,
      kill: async (signal) => {
        if (!gone) child.kill(signal);
        return exited;
      },
    };
    this.nodes.push(node);
    const ready = await eventually(() => gone || out.includes('(Ctrl-C to stop)'), 30_000);
    if (!ready || gone) throw new Error(`runtrail ${args.join(' ')} did not start:\n${out}`);
    node.url = /on (http:\/\/\S+)/.exec(out)?.[1] ?? null;
    return node;
  }

  api(): Promise<NodeProcess> {
    return this.start(['serve', '--role', 'api', '--port', '0']);
  }

  worker(concurrency = 2, more: string[] = []): Promise<NodeProcess> {
    return this.start(['worker', '--concurrency', String(concurrency), ...more]);
  }

  async cleanup(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill('SIGKILL')));
    for (const m of this.markers) {
      for (const line of liveProcesses(m)) {
        const pid = Number(line.trim().split(/\s+/)[0]);
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
    await removeIsolation(this.schema, this.prefix, this.redisUrl).catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A redis-server of a test's own on a free port, nothing on disk; restart() loses everything it held. */
export class OwnRedis {
  private proc: ChildProcess | null = null;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  async start(): Promise<void> {
    this.proc = spawn('redis-server', ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const up = await eventually(() => {
      try {
        return execFileSync('redis-cli', ['-p', String(this.port), 'ping'], { encoding: 'utf8' }).trim() === 'PONG';
      } catch {
        return false;
      }
    }, 10_000);
    if (!up) throw new Error(`redis-server on port ${this.port} did not start`);
  }

  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    await new Promise((r) => {
      p.once('close', r);
      p.kill('SIGKILL');
    });
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }
}

/** A free loopback port (the kernel's choice, released at once). */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** A TCP proxy to PostgreSQL that a test can cut (every connection closed, new ones refused) and restore. */
export class CuttableProxy {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async open(port = 0): Promise<void> {
    this.server = createServer((client) => {
      const upstream = connect(this.targetPort, this.targetHost);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(upstream).pipe(client);
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', () => r()));
    this.port = (this.server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    const s = this.server;
    this.server = null;
    for (const sock of this.sockets) sock.destroy();
    if (s) await new Promise((r) => s.close(r));
  }

  /** Listens again on the same port. */
  async restore(): Promise<void> {
    await this.open(this.port);
  }
}

/** Polls an async condition (a failed poll counts as not yet) until it holds or `ms` pass. */
export async function until(pred: () => Promise<boolean>, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await pred().catch(() => false)) return true;
    await sleep(100);
  }
  return pred().catch(() => false);
}

export async function statusOf(url: string, runId: string): Promise<string> {
  return (await getJson(`${url}/api/runs/${runId}`)).body.status as string;
}

/** Starts a shell_task run of `command` through an API node; its run id. */
export async function shellRun(url: string, command: string): Promise<string> {
  const r = await postJson(`${url}/api/runs`, { plugin: 'shell_task', input: { command } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.run_id as string;
}

/** A cluster on a Redis of the test's own (so it can be restarted or stopped); stop() ends both. */
export async function ownRedisCluster(extraEnv: Record<string, string> = {}): Promise<{ redis: OwnRedis; cluster: TestCluster; stop(): Promise<void> }> {
  const redis = new OwnRedis(await freePort());
  await redis.start();
  const cluster = new TestCluster(extraEnv, redis.url);
  return {
    redis,
    cluster,
    stop: async () => {
      await cluster.cleanup();
      await redis.stop();
    },
  };
}
