/**
 * One MCP server as a run's ToolSource: its tools (after the definition's include/exclude and the
 * agent's `tools:` globs) become `mcp__<server>__<tool>` ToolDefinitions of kind `mcp`, called through
 * the shared connection with progress and log notifications reported on the call's operation.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { OperationReporter } from '../events/operation-reporter-types.js';
import type { JsonSchema } from '../tools/schema.js';
import type { AnyToolDefinition, ToolExecutionContext, ToolResult } from '../tools/tool.js';
import { ToolSourceError, type ToolSource } from '../tools/tool-source.js';
import type { McpServerConfig } from './mcp-config.js';
import type { McpConnection, McpLog } from './mcp-connection.js';
import { secretValuesOf } from './mcp-diagnosis.js';
import { McpUnavailableError } from './mcp-unavailable-error.js';
import { toToolResult, type ArtifactWriter } from './mcp-result.js';
import { preloadMcpClient, type McpLease, type McpServerPool } from './mcp-server-pool.js';
import { globMatcher, mcpToolName } from './mcp-tool-name.js';

export interface McpToolSourceOptions {
  server: McpServerConfig;
  /** The agent's `tools:` entries for this server (`mcp__everything__*`, `mcp__everything__echo`). */
  grants: string[];
  pool: McpServerPool;
  /** The run's artifacts folder: images, audio and long results are saved there. */
  artifacts?: ArtifactWriter;
}

/** The server's tools as Runtrail sees them: include/exclude applied, names made, clashes refused. */
export function selectTools(
  cfg: McpServerConfig,
  tools: readonly Tool[],
  grants: readonly string[],
): { tools: Array<{ name: string; tool: Tool }>; clash?: string } {
  const include = cfg.options.include.length ? globMatcher(cfg.options.include) : () => true;
  const exclude = globMatcher(cfg.options.exclude);
  const granted = globMatcher(grants);
  const byName = new Map<string, Tool>();
  const out: Array<{ name: string; tool: Tool }> = [];
  for (const t of tools) {
    if (!include(t.name) || exclude(t.name)) continue;
    const name = mcpToolName(cfg.name, t.name);
    const had = byName.get(name);
    if (had) return { tools: out, clash: `MCP server "${cfg.name}" has tools "${had.name}" and "${t.name}", which both become ${name}` };
    byName.set(name, t);
    if (granted(name)) out.push({ name, tool: t });
  }
  return { tools: out };
}

function logText(l: McpLog): string {
  const data = typeof l.data === 'string' ? l.data : JSON.stringify(l.data);
  return `${l.logger ? `${l.logger} ` : ''}${l.level}: ${data ?? ''}`.slice(0, 2_000);
}

export class McpToolSource implements ToolSource {
  readonly name: string;
  readonly grants: string[];
  private lease: McpLease | null = null;
  private reconnecting: Promise<McpConnection> | null = null;
  private listener: ((tools: AnyToolDefinition[]) => void) | null = null;
  private offChange: (() => void) | null = null;
  private closed = false;
  private readonly secrets: string[];

  constructor(private readonly o: McpToolSourceOptions) {
    this.name = `mcp:${o.server.name}`;
    this.grants = [...o.grants];
    this.secrets = secretValuesOf(o.server);
    // a run that will connect: the client loads while the run is set up
    preloadMcpClient();
  }

  describe(): Record<string, unknown> {
    return { kind: 'mcp', server: this.o.server.name, defined_in: this.o.server.file, ...this.o.server.shown, tools: this.grants };
  }

  async open(signal: AbortSignal): Promise<AnyToolDefinition[]> {
    const conn = await this.connect(signal);
    const picked = selectTools(this.o.server, conn.tools, this.grants);
    if (picked.clash) {
      throw new ToolSourceError({
        code: 'mcp_tool_clash',
        severity: 'error',
        summary: picked.clash,
        detail: '',
        hint: `leave one of them out with "exclude" in the definition of "${this.o.server.name}" (${this.o.server.file})`,
        retryable: false,
      });
    }
    return picked.tools.map((t) => this.toolFor(t.name, t.tool));
  }

  onChange(listener: (tools: AnyToolDefinition[]) => void): void {
    this.listener = listener;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.offChange?.();
    this.offChange = null;
    this.lease?.release();
    this.lease = null;
  }

  private async connect(signal?: AbortSignal): Promise<McpConnection> {
    let lease: McpLease;
    try {
      lease = await this.o.pool.acquire(this.o.server, signal);
    } catch (e) {
      if (e instanceof McpUnavailableError) throw new ToolSourceError(e.diagnosis);
      throw e;
    }
    if (this.closed) {
      lease.release();
      throw new ToolSourceError({ code: 'cancelled', severity: 'warning', summary: 'the run ended while the MCP server connected' });
    }
    this.lease?.release();
    this.lease = lease;
    this.offChange?.();
    // list_changed: the next turn gets the new list; a list that now clashes keeps the last good one
    this.offChange = lease.connection.onToolsChanged((tools) => {
      const picked = selectTools(this.o.server, tools, this.grants);
      if (!picked.clash) this.listener?.(picked.tools.map((t) => this.toolFor(t.name, t.tool)));
    });
    return lease.connection;
  }

  /** The live connection; a server that stopped since (crash, idle) is started again. */
  private async live(signal?: AbortSignal): Promise<McpConnection> {
    const cur = this.lease?.connection;
    if (cur && !cur.closed) return cur;
    this.reconnecting ??= this.connect(signal).finally(() => (this.reconnecting = null));
    return this.reconnecting;
  }

  private toolFor(name: string, tool: Tool): AnyToolDefinition {
    const server = this.o.server;
    const { maxResultChars, timeoutMs, idleTimeoutMs } = server.options;
    return {
      name,
      description: tool.description ?? tool.title ?? `${tool.name} (MCP server ${server.name})`,
      // as the server gave it: the model sees it, the executor checks arguments against it
      parameters: (tool.inputSchema ?? { type: 'object' }) as JsonSchema,
      kind: 'mcp',
      mcp: { server: server.name, tool: tool.name },
      timeoutMs,
      ...(tool.annotations?.readOnlyHint === true ? { readOnly: true } : {}),
      ...(tool.annotations?.idempotentHint === true ? { idempotent: true } : {}),
      execute: async (args: unknown, ctx?: ToolExecutionContext): Promise<ToolResult> => {
        let conn: McpConnection;
        try {
          const cur = this.lease?.connection;
          conn = cur && !cur.closed ? cur : await this.live(ctx?.signal);
        } catch (e) {
          const d = e instanceof ToolSourceError ? e.diagnosis : { code: 'mcp_unavailable', severity: 'error' as const, summary: (e as Error).message };
          return { ok: false, content: `Error: ${d.summary}${d.detail ? ` — ${d.detail}` : ''}`, diagnosis: d };
        }
        const reporter: OperationReporter | undefined = ctx?.reporter;
        let started = false;
        const begin = () => {
          if (started || !reporter) return;
          started = true;
          reporter.start(`${server.name}/${tool.name}`);
        };
        const signal = ctx?.signal;
        try {
          const r = await conn.callTool(tool.name, (args ?? {}) as Record<string, unknown>, {
            ...(signal ? { signal } : {}),
            onProgress: (p) => {
              begin();
              reporter?.progress({ current: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message ? { message: p.message } : {}) });
            },
            onLog: (l) => {
              begin();
              reporter?.progress({ message: logText(l), payload: { mcp_log: { level: l.level, ...(l.logger ? { logger: l.logger } : {}) } } });
            },
          });
          return await toToolResult(r, {
            server: server.name,
            tool: tool.name,
            callId: ctx?.toolCallId ?? 'call',
            maxChars: maxResultChars,
            secrets: this.secrets,
            ...(this.o.artifacts ? { artifacts: this.o.artifacts } : {}),
          });
        } catch (e) {
          if (signal?.aborted)
            return {
              ok: false,
              content: `Error: ${server.name}/${tool.name} cancelled`,
              diagnosis: { code: 'cancelled', severity: 'warning', summary: `${server.name}/${tool.name} cancelled` },
            };
          // loaded here, after a call failed: by then the connection has loaded the SDK it reads
          const { callFailure } = await import('./mcp-failure-reason.js');
          const d = callFailure(server, tool.name, e, idleTimeoutMs);
          return { ok: false, content: `Error: ${d.summary}${d.detail ? ` — ${d.detail}` : ''}${d.hint ? ` (hint: ${d.hint})` : ''}`, diagnosis: d };
        }
      },
    };
  }
}
