/**
 * The MCP servers of one Runtrail process. A server starts at the first run that needs it, is shared
 * by the runs that use the same definition (same command/url, env and headers), stops when no run
 * has used it for `idleMs` (10 minutes) and at shutdown. Stdio servers are recorded while they run
 * in `<dataDir>/mcp/servers-<pid>-<start>.json`, so that the next Runtrail on the data dir ends the
 * servers of one that was killed with SIGKILL (which runs no handler).
 */
import { mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { endLeftoverProcesses, ProcessLedger, processStartTime } from '../tools/process-ledger.js';
import { connectionKey, type McpServerConfig } from './mcp-config.js';
import type { McpConnection } from './mcp-connection.js';
import { McpUnavailableError } from './mcp-unavailable-error.js';
import { unavailableDiagnosis } from './mcp-diagnosis.js';

export const MCP_IDLE_MS = 10 * 60_000;
export const MCP_KILL_GRACE_MS = 3_000;

export interface McpPoolOptions {
  idleMs?: number;
  killGraceMs?: number;
  /** Where live stdio servers are recorded (`<dataDir>/mcp`); absent: not recorded. */
  ledgerDir?: string;
}

export interface McpLease {
  readonly connection: McpConnection;
  release(): void;
}

export type McpServerState = 'connecting' | 'ready' | 'idle';

export interface McpPoolEntryInfo {
  server: string;
  state: McpServerState;
  /** Runs holding it now. */
  leases: number;
  pid?: number;
  tools: number;
}

interface Entry {
  key: string;
  cfg: McpServerConfig;
  connecting: Promise<McpConnection> | null;
  conn: McpConnection | null;
  leases: number;
  idleTimer: NodeJS.Timeout | null;
}

let ledgerSeq = 0;
const LEDGER_FILE = /^servers-(\d+)-(\d+|x)\.json$/;

/** A stdio server's command line as its definition writes it (`${VAR}`s not expanded). */
function writtenCommand(cfg: McpServerConfig): string {
  const { command, args } = cfg.shown as { command?: unknown; args?: unknown };
  return [command, ...(Array.isArray(args) ? args : [])].map(String).join(' ');
}

let clientModule: Promise<typeof import('./mcp-connection.js')> | null = null;

/**
 * The MCP client (the SDK's Client and transports), loaded once: not with every CLI start (~100 ms
 * for a project without MCP servers), but as soon as servers are configured or a run will use one
 * (preloadMcpClient), so the first connection does not wait for it.
 */
function loadMcpClient(): Promise<typeof import('./mcp-connection.js')> {
  clientModule ??= import('./mcp-connection.js');
  return clientModule;
}

/** Starts loading the MCP client in the background; a failed load is reported by the connection that awaits it. */
export function preloadMcpClient(): void {
  loadMcpClient().catch(() => undefined);
}

export class McpServerPool {
  private readonly entries = new Map<string, Entry>();
  private readonly idleMs: number;
  readonly killGraceMs: number;
  private ledgerDir: string | null;
  private ledger: ProcessLedger | null = null;
  private swept: Promise<unknown> | null = null;
  private closed = false;

  constructor(opts: McpPoolOptions = {}) {
    this.idleMs = opts.idleMs ?? MCP_IDLE_MS;
    this.killGraceMs = opts.killGraceMs ?? MCP_KILL_GRACE_MS;
    this.ledgerDir = opts.ledgerDir ?? null;
  }

  /** Records servers in `dir` from now on (the CLI and server set `<dataDir>/mcp`). */
  useLedgerDir(dir: string): void {
    if (this.ledgerDir === dir) return;
    this.ledgerDir = dir;
    this.ledger = null;
    this.swept = null;
  }

  /**
   * Ends the stdio servers a dead Runtrail recorded in the ledger folder (pid and start time must
   * still match, so a reused pid is never touched). Returns what was ended.
   */
  async endLeftovers(): Promise<{ ended: number; commands: string[] }> {
    const dir = this.ledgerDir;
    if (!dir) return { ended: 0, commands: [] };
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return { ended: 0, commands: [] };
    }
    let ended = 0;
    const commands: string[] = [];
    for (const f of names) {
      const m = LEDGER_FILE.exec(f);
      if (!m) continue;
      const owner = Number(m[1]);
      if (owner === process.pid) continue;
      const start = processStartTime(owner);
      const alive = start !== null && (m[2] === 'x' || String(start) === m[2]);
      if (alive) continue;
      const r = await endLeftoverProcesses(join(dir, f), this.killGraceMs).catch(() => ({ ended: 0, commands: [] as string[] }));
      ended += r.ended;
      commands.push(...r.commands);
    }
    return { ended, commands };
  }

  private ledgerFor(): ProcessLedger | null {
    if (!this.ledgerDir) return null;
    if (!this.ledger) {
      try {
        mkdirSync(this.ledgerDir, { recursive: true });
      } catch {
        return null;
      }
      this.ledger = new ProcessLedger(join(this.ledgerDir, `servers-${process.pid}-${processStartTime(process.pid) ?? 'x'}.json`));
    }
    return this.ledger;
  }

  /** A connection for `cfg`, shared with the other runs that use the same definition. */
  async acquire(cfg: McpServerConfig, signal?: AbortSignal): Promise<McpLease> {
    if (this.closed) throw new McpUnavailableError(unavailableDiagnosis(cfg, { reason: 'Runtrail is shutting down', hint: '', retryable: true }));
    this.swept ??= this.endLeftovers();
    await this.swept;
    const key = connectionKey(cfg.transport);
    let e = this.entries.get(key);
    if (e?.conn?.closed) {
      this.drop(e);
      e = undefined;
    }
    if (!e) {
      e = { key, cfg, connecting: null, conn: null, leases: 0, idleTimer: null };
      this.entries.set(key, e);
    }
    const entry = e;
    entry.leases++;
    if (entry.idleTimer) {
      clearTimeout(entry.idleTimer);
      entry.idleTimer = null;
    }
    try {
      const conn = entry.conn ?? (await abortable((entry.connecting ??= this.connect(entry)), signal));
      let released = false;
      return {
        connection: conn,
        release: () => {
          if (released) return;
          released = true;
          this.release(entry);
        },
      };
    } catch (err) {
      this.release(entry);
      throw err;
    }
  }

  private async connect(entry: Entry): Promise<McpConnection> {
    const ledger = this.ledgerFor();
    const sessionId = `mcp:${entry.cfg.name}:${++ledgerSeq}`;
    try {
      const { McpConnection } = await loadMcpClient();
      const conn = await McpConnection.open(entry.cfg, {
        killGraceMs: this.killGraceMs,
        // the ledger (a file in the data dir) names the command as written, never with `${VAR}`s expanded
        onSpawn: (pid) => ledger?.add({ session_id: sessionId, pid, pgid: pid, command: writtenCommand(entry.cfg) }),
        onExit: () => ledger?.remove(sessionId),
      });
      entry.conn = conn;
      conn.onClose(() => {
        if (this.entries.get(entry.key) === entry && entry.conn === conn) this.drop(entry);
      });
      if (this.closed) await conn.close();
      else if (entry.leases === 0) this.startIdle(entry);
      return conn;
    } catch (e) {
      if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
      throw e;
    } finally {
      entry.connecting = null;
    }
  }

  private release(entry: Entry): void {
    entry.leases = Math.max(0, entry.leases - 1);
    if (entry.leases > 0 || this.entries.get(entry.key) !== entry) return;
    // a connect nobody waits for any more finishes first, then idles (connect() starts the timer)
    if (entry.conn) this.startIdle(entry);
  }

  private startIdle(entry: Entry): void {
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    entry.idleTimer = setTimeout(() => {
      if (entry.leases === 0) this.drop(entry);
    }, this.idleMs);
    entry.idleTimer.unref();
  }

  private drop(entry: Entry): void {
    if (entry.idleTimer) clearTimeout(entry.idleTimer);
    entry.idleTimer = null;
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    void entry.conn?.close();
  }

  list(): McpPoolEntryInfo[] {
    return [...this.entries.values()].map((e) => ({
      server: e.cfg.name,
      state: e.conn ? (e.leases > 0 ? 'ready' : 'idle') : 'connecting',
      leases: e.leases,
      ...(e.conn?.pid !== undefined ? { pid: e.conn.pid } : {}),
      tools: e.conn?.tools.length ?? 0,
    }));
  }

  /** Whether any server is connected or connecting. */
  get active(): boolean {
    return this.entries.size > 0;
  }

  /** Stops every server (SIGTERM to each group, SIGKILL after the grace) and waits until they are gone. */
  async shutdown(): Promise<void> {
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(
      all.map(async (e) => {
        if (e.idleTimer) clearTimeout(e.idleTimer);
        const conn = e.conn ?? (await e.connecting?.catch(() => null)) ?? null;
        await conn?.close();
      }),
    );
  }

  /** Shuts down for good: later acquires fail. */
  async close(): Promise<void> {
    this.closed = true;
    await this.shutdown();
  }
}

function abortable<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(new Error('cancelled'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

let shared: McpServerPool | null = null;

/** The process-wide pool (the registry's agents use it unless given another). */
export function sharedMcpPool(): McpServerPool {
  shared ??= new McpServerPool();
  return shared;
}
