/**
 * One live connection to one MCP server (SDK `Client`): connect within `connect_timeout_s` (stdio in
 * its own process group; http as Streamable HTTP, falling back to the legacy SSE transport when the
 * server only speaks that), the tool list (all pages), refreshed on `notifications/tools/list_changed`
 * (the last good list stays when a refresh fails), calls with progress, log routing, an idle timeout
 * reset by progress, cancellation (`notifications/cancelled` via the SDK) and a clean close.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { RequestOptions } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolResultSchema,
  ErrorCode,
  McpError,
  LoggingMessageNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Implementation,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { ChildExit } from '../tools/supervised-child.js';
import type { McpServerConfig } from './mcp-config.js';
import { unavailableDiagnosis } from './mcp-diagnosis.js';
import { CallSignals } from './call-signals.js';
import { fetchOnOwnSignal } from './fetch-on-own-signal.js';
import { connectReason } from './mcp-failure-reason.js';
import { McpUnavailableError } from './mcp-unavailable-error.js';
import { GroupStdioTransport, StdoutNoiseError } from './stdio-group-transport.js';

export const CLIENT_INFO: Implementation = { name: 'runtrail', version: '0.1.0' };

export interface McpProgress {
  progress: number;
  total?: number;
  message?: string;
}

export interface McpLog {
  level: string;
  logger?: string;
  data: unknown;
}

export interface McpCallOptions {
  signal?: AbortSignal;
  onProgress?(p: McpProgress): void;
  onLog?(l: McpLog): void;
}

export interface McpTimings {
  /** From the start to the transport being up (the spawn for stdio). */
  startMs: number;
  /** The `initialize` round trip. */
  initializeMs: number;
  /** `tools/list`, every page. */
  listToolsMs: number;
  totalMs: number;
}

export interface McpConnectOptions {
  killGraceMs: number;
  signal?: AbortSignal;
  /** A stdio server runs: its pid leads its group. */
  onSpawn?(pid: number, command: string): void;
  onExit?(pid: number): void;
}

const HTTP_FALLBACK_STATUS = [400, 404, 405];
const MAX_LOGS = 50;

export class McpConnection {
  tools: Tool[] = [];
  readonly timings: McpTimings = { startMs: 0, initializeMs: 0, listToolsMs: 0, totalMs: 0 };
  /** `http` servers: the transport that worked. */
  transportUsed: 'stdio' | 'streamable-http' | 'sse' = 'stdio';
  /** Server-level log lines that came while no call was in flight (for `runtrail mcp probe`). */
  readonly logs: McpLog[] = [];
  private readonly toolListeners = new Set<(tools: Tool[]) => void>();
  private readonly closeListeners = new Set<() => void>();
  private readonly inflight = new Set<McpCallOptions>();
  private readonly callSignals = new CallSignals();
  private refreshing: Promise<void> | null = null;
  private refreshAgain = false;
  private closedFlag = false;
  private closing: Promise<void> | null = null;

  private constructor(
    readonly cfg: McpServerConfig,
    private client: Client,
    private transport: Transport,
  ) {}

  get closed(): boolean {
    return this.closedFlag;
  }

  get serverInfo(): Implementation | undefined {
    return this.client.getServerVersion();
  }

  get pid(): number | undefined {
    return this.transport instanceof GroupStdioTransport ? this.transport.pid : undefined;
  }

  /** Connects and lists the tools; throws McpUnavailableError (never hangs past connect_timeout_s). */
  static async open(cfg: McpServerConfig, opts: McpConnectOptions): Promise<McpConnection> {
    if (cfg.unusable)
      throw new McpUnavailableError(
        unavailableDiagnosis(cfg, { reason: cfg.unusable, hint: 'set it, or give a default with ${NAME:-default}', retryable: false }),
      );
    const started = performance.now();
    const t = cfg.transport;
    if (t.type === 'stdio') {
      let pid: number | undefined;
      const transport = new GroupStdioTransport(
        { command: t.command, args: t.args, env: t.env, cwd: t.cwd, ...(t.sandbox ? { sandbox: t.sandbox } : {}) },
        {
          killGraceMs: opts.killGraceMs,
          onSpawn: (p) => {
            pid = p;
            opts.onSpawn?.(p, [t.command, ...t.args].join(' '));
          },
          onExit: () => {
            if (pid !== undefined) opts.onExit?.(pid);
          },
        },
      );
      try {
        return await McpConnection.handshake(cfg, transport, started, opts.signal);
      } catch (e) {
        await transport.close().catch(() => undefined);
        throw new McpUnavailableError(unavailableDiagnosis(cfg, connectReason(e, cfg, transport.exit as ChildExit | null), transport.stderr()));
      }
    }
    const url = new URL(t.url);
    const requestInit: RequestInit = { headers: t.headers };
    if (t.type === 'sse')
      return McpConnection.openHttp(cfg, new SSEClientTransport(url, { requestInit, fetch: fetchOnOwnSignal }), 'sse', started, opts.signal);
    try {
      return await McpConnection.handshake(
        cfg,
        new StreamableHTTPClientTransport(url, {
          requestInit,
          fetch: fetchOnOwnSignal,
          reconnectionOptions: { maxRetries: 2, initialReconnectionDelay: 500, maxReconnectionDelay: 5000, reconnectionDelayGrowFactor: 2 },
        }),
        started,
        opts.signal,
        'streamable-http',
      );
    } catch (e) {
      // a server that only speaks the legacy SSE transport refuses the POST (400/404/405)
      const status = e instanceof StreamableHTTPError ? e.code : undefined;
      if (status === undefined || !HTTP_FALLBACK_STATUS.includes(status) || opts.signal?.aborted)
        throw new McpUnavailableError(unavailableDiagnosis(cfg, connectReason(e, cfg)));
      return McpConnection.openHttp(cfg, new SSEClientTransport(url, { requestInit, fetch: fetchOnOwnSignal }), 'sse', performance.now(), opts.signal);
    }
  }

  private static async openHttp(cfg: McpServerConfig, transport: Transport, used: 'sse', started: number, signal?: AbortSignal): Promise<McpConnection> {
    try {
      return await McpConnection.handshake(cfg, transport, started, signal, used);
    } catch (e) {
      throw new McpUnavailableError(unavailableDiagnosis(cfg, connectReason(e, cfg)));
    }
  }

  /** initialize + tools/list within the connect timeout; stdout noise during it fails at once. */
  private static async handshake(
    cfg: McpServerConfig,
    transport: Transport,
    started: number,
    signal?: AbortSignal,
    used: McpConnection['transportUsed'] = 'stdio',
  ): Promise<McpConnection> {
    const client = new Client(CLIENT_INFO, { capabilities: {} });
    const conn = new McpConnection(cfg, client, transport);
    conn.transportUsed = used;
    const budget = cfg.options.connectTimeoutMs;
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(new Error('connect timeout')), budget);
    const abort = signal ? AbortSignal.any([signal, deadline.signal]) : deadline.signal;
    let fatal: (e: Error) => void = () => undefined;
    const failed = new Promise<never>((_, reject) => (fatal = reject));
    failed.catch(() => undefined);
    let ready = false;
    transport.onerror = (e) => {
      if (!ready && e instanceof StdoutNoiseError) fatal(e);
    };
    const onAbort = () => fatal(signal?.aborted ? new Error('cancelled while connecting') : abortTimeout());
    abort.addEventListener('abort', onAbort, { once: true });
    try {
      const t0 = performance.now();
      // the SDK's own timeout covers initialize; `failed` covers a transport start that never returns
      await Promise.race([client.connect(transport, { timeout: budget, signal: abort }), failed]);
      const t1 = performance.now();
      conn.timings.startMs = Math.max(0, t0 - started);
      conn.timings.initializeMs = t1 - t0;
      conn.install();
      conn.tools = await Promise.race([conn.listAll(abort, budget), failed]);
      conn.timings.listToolsMs = performance.now() - t1;
      conn.timings.totalMs = performance.now() - started;
      ready = true;
      return conn;
    } catch (e) {
      await client.close().catch(() => undefined);
      throw e;
    } finally {
      clearTimeout(timer);
      abort.removeEventListener('abort', onAbort);
    }
  }

  private install(): void {
    this.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      this.refresh();
    });
    this.client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const log: McpLog = { level: n.params.level, ...(n.params.logger ? { logger: n.params.logger } : {}), data: n.params.data };
      if (this.inflight.size) for (const c of this.inflight) c.onLog?.(log);
      else {
        this.logs.push(log);
        if (this.logs.length > MAX_LOGS) this.logs.shift();
      }
    });
    this.client.onclose = () => {
      this.closedFlag = true;
      for (const l of this.closeListeners) l();
    };
    // after the handshake, noise on stdout is the server's bug, not a reason to drop its calls
    this.transport.onerror = () => undefined;
    this.client.onerror = () => undefined;
  }

  private async listAll(signal?: AbortSignal, timeout = this.cfg.options.connectTimeoutMs): Promise<Tool[]> {
    const out: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const r = await this.client.listTools(cursor ? { cursor } : undefined, { timeout, ...(signal ? { signal } : {}) });
      out.push(...r.tools);
      cursor = r.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  /** Re-lists after `list_changed`; a failed refresh keeps the last good list. Coalesces bursts. */
  private refresh(): void {
    if (this.refreshing) {
      this.refreshAgain = true;
      return;
    }
    this.refreshing = (async () => {
      do {
        this.refreshAgain = false;
        try {
          this.tools = await this.listAll();
          for (const l of this.toolListeners) l(this.tools);
        } catch (e) {
          this.logs.push({
            level: 'warning',
            logger: 'runtrail',
            data: `tools/list after list_changed failed (the last good list stays): ${(e as Error).message}`,
          });
        }
      } while (this.refreshAgain && !this.closedFlag);
      this.refreshing = null;
    })();
  }

  /** Resolves once a refresh in flight (if any) is done; for tests and `mcp probe`. */
  async settled(): Promise<void> {
    while (this.refreshing) await this.refreshing;
  }

  onToolsChanged(listener: (tools: Tool[]) => void): () => void {
    this.toolListeners.add(listener);
    return () => this.toolListeners.delete(listener);
  }

  onClose(listener: () => void): () => void {
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  /** One call; rejects with the SDK's McpError on a JSON-RPC error, a timeout or a closed connection. */
  async callTool(name: string, args: Record<string, unknown>, opts: McpCallOptions = {}): Promise<CallToolResult> {
    const o = this.cfg.options;
    // the SDK keeps a listener on a request's signal for good: it gets one of this call's own
    const callSignal = opts.signal ? this.callSignals.open(opts.signal) : undefined;
    this.inflight.add(opts);
    try {
      const request: RequestOptions = {
        // asking for progress makes the SDK send a progressToken; each notification resets the idle timer
        onprogress: (p) =>
          opts.onProgress?.({ progress: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message ? { message: p.message } : {}) }),
        timeout: o.idleTimeoutMs,
        resetTimeoutOnProgress: true,
        maxTotalTimeout: o.timeoutMs,
      };
      if (callSignal) request.signal = callSignal.signal;
      const r = await this.client.callTool({ name, arguments: args }, CallToolResultSchema, request);
      return r as CallToolResult;
    } finally {
      callSignal?.end();
      this.inflight.delete(opts);
    }
  }

  /** Ends the session; a stdio server's group gets SIGTERM, then SIGKILL after the grace. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closedFlag = true;
      const t = this.transport;
      // Streamable HTTP: tell the server the session is over (best effort, bounded)
      if (t instanceof StreamableHTTPClientTransport && t.sessionId) {
        await Promise.race([t.terminateSession().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
      }
      await this.client.close().catch(() => undefined);
      await t.close().catch(() => undefined);
    })();
    return this.closing;
  }

  stderr(): string {
    return this.transport instanceof GroupStdioTransport ? this.transport.stderr() : '';
  }
}

function abortTimeout(): Error {
  return new McpError(ErrorCode.RequestTimeout, 'Request timed out');
}
