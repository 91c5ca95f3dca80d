/**
 * `runtrail mcp serve`: Runtrail as an MCP server over stdio (what Claude Desktop and Claude Code
 * start), or with `--http PORT` over Streamable HTTP on 127.0.0.1 only (one session per client,
 * Host/Origin checked against DNS rebinding). Runs go to a RunService over the project, reading
 * local files as the user running it, like the CLI. Ends when stdin closes (stdio) or on Ctrl-C.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { RunService } from '../runtime/service/run-service.js';
import { EXIT, UsageError, type CliDeps } from './cli-io.js';
import { parse } from './args.js';
import { stopMcp } from './mcp-lifecycle.js';
import { projectContext, type ProjectContext } from './project-context.js';
import { createRuntrailMcpServer } from './runtrail-mcp-server.js';

const VERSION = '0.1.0';

export function mcpRunService(ctx: ProjectContext, deps: CliDeps): RunService {
  return new RunService({
    dataDir: ctx.dataDir,
    agentSource: ctx.registry,
    skillDirs: ctx.registry.skillDirs,
    defaults: () => ctx.registry.config,
    inputRoots: 'any',
    env: deps.env,
    cwd: deps.cwd,
    ...(deps.providerResolver ? { providerResolver: deps.providerResolver } : {}),
  });
}

export interface RuntrailMcpHttp {
  url: string;
  close(): Promise<void>;
}

/** Streamable HTTP on 127.0.0.1:`port` (0: any free port) at /mcp; each session gets its own McpServer. */
export async function startRuntrailMcpHttp(make: () => McpServer, port: number): Promise<RuntrailMcpHttp> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  let allowedHosts: string[] = [];
  let allowedOrigins: string[] = [];
  const http: Server = createServer((req: IncomingMessage, res) => {
    void (async () => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/mcp') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'not_found', message: 'the MCP endpoint is /mcp' }));
        return;
      }
      const sid = req.headers['mcp-session-id'];
      const known = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (known) return known.transport.handleRequest(req, res);
      if (req.method !== 'POST' || sid !== undefined) {
        res.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            error: { code: -32000, message: sid ? `unknown session ${String(sid)}` : 'no session: send initialize first' },
            id: null,
          }),
        );
        return;
      }
      const server = make();
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        enableDnsRebindingProtection: true,
        allowedHosts,
        // a browser page elsewhere must not drive it (clients that send no Origin are not browsers)
        allowedOrigins,
        onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
        onsessionclosed: (id) => void sessions.delete(id),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await server.connect(transport);
      await transport.handleRequest(req, res);
    })().catch((e: unknown) => {
      if (!res.headersSent)
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: (e as Error).message }, id: null }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, '127.0.0.1', () => resolve());
  });
  const actual = (http.address() as { port: number }).port;
  allowedHosts = [`127.0.0.1:${actual}`, `localhost:${actual}`];
  allowedOrigins = allowedHosts.map((h) => `http://${h}`);
  return {
    url: `http://127.0.0.1:${actual}/mcp`,
    close: async () => {
      await Promise.all([...sessions.values()].map((s) => s.server.close().catch(() => undefined)));
      sessions.clear();
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}

/** Why an unfinished run of `mcp serve` is cancelled: its runs live in its process, which ends with its client. */
export const STOPPED_REASON =
  'runtrail mcp serve stopped (its MCP client disconnected or it was interrupted), and its runs end with it; use runtrail serve and POST /api/runs for runs that outlive the client';

export async function mcpServeCommand(args: string[], deps: CliDeps): Promise<number> {
  const { values, positionals } = parse(args, { http: { type: 'string' } });
  if (positionals.length) throw new UsageError('mcp serve takes no arguments (--http PORT for Streamable HTTP)');
  let port: number | undefined;
  if (values.http !== undefined) {
    port = Number(values.http);
    if (typeof values.http !== 'string' || !/^\d+$/.test(values.http) || port > 65535)
      throw new UsageError(`--http must be a port number (0-65535), got ${JSON.stringify(values.http)}`);
  }
  const ctx = await projectContext(values, deps);
  const service = mcpRunService(ctx, deps);
  await service.init();
  const make = () => createRuntrailMcpServer({ service, agents: ctx.registry, version: VERSION });
  try {
    if (port !== undefined) {
      const h = await startRuntrailMcpHttp(make, port);
      deps.stdout.write(`runtrail MCP server on ${h.url} (Streamable HTTP, loopback only; Ctrl-C to stop)\n`);
      // removed only once closed: see serveCommand (the signal bridge must not find itself alone)
      let off: (() => void) | undefined;
      await new Promise<void>((resolveStop) => {
        off = deps.onInterrupt?.(() => resolveStop());
        if (!deps.onInterrupt) resolveStop();
      });
      await h.close();
      off?.();
      return EXIT.ok;
    }
    // stdio: stdout carries the protocol; everything Runtrail says goes to stderr
    const server = make();
    const transport = new StdioServerTransport();
    await server.connect(transport);
    deps.stderr.write(`runtrail MCP server on stdio (${ctx.registry.names().length} agents, data in ${ctx.dataDir})\n`);
    let off: (() => void) | undefined;
    await new Promise<void>((resolveStop) => {
      const stop = () => resolveStop();
      process.stdin.once('end', stop);
      process.stdin.once('close', stop);
      server.server.onclose = stop;
      off = deps.onInterrupt?.(stop);
    });
    await server.close().catch(() => undefined);
    off?.();
    return EXIT.ok;
  } finally {
    // the runs live in this process: said in their status when its end cancels them
    await service.close(STOPPED_REASON);
    await stopMcp(ctx.registry.mcpPool);
  }
}
