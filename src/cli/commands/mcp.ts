/**
 * `runtrail mcp list`: every configured MCP server (mcp.json of the project and the user, and the
 * agents' inline ones), whether it can be connected, and its tools. `runtrail mcp probe <server>`:
 * connects to one, lists its tools with the names agents call them by, and prints the timings.
 * `runtrail mcp serve`: Runtrail itself as an MCP server (../mcp-serve.ts, loaded only for it).
 */
import { didYouMean } from '../../events/did-you-mean.js';
import type { ExtensionRegistry } from '../../extensions/extension-registry.js';
import { resolveAgentMcp } from '../../extensions/agent-mcp.js';
import type { McpServerConfig } from '../../mcp/mcp-config.js';
import type { McpConnection } from '../../mcp/mcp-connection.js';
import { McpUnavailableError } from '../../mcp/mcp-unavailable-error.js';
import { selectTools } from '../../mcp/mcp-tool-source.js';
import { parseMcpToolEntry, sanitizeToolPart } from '../../mcp/mcp-tool-name.js';
import { parse } from '../args.js';
import { EXIT, UsageError, type CliDeps } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { projectContext } from '../project-context.js';

export const MCP_USAGE = `Usage: runtrail mcp <list|probe|serve> [options]
  mcp list [--json]             every configured MCP server, whether it connects, and its tools
  mcp probe <server> [--json]   connect to one server: its tools (as agents name them) and the timings
  mcp serve [--http PORT]       Runtrail as an MCP server: stdio, or Streamable HTTP on 127.0.0.1:PORT
`;

interface Known {
  cfg: McpServerConfig;
  /** Agents that list it, with the tools: entries that grant its tools. */
  agents: Array<{ name: string; grants: string[] }>;
}

/** mcp.json's servers, then the agents' inline ones (by name; an inline one named like a mcp.json server is that agent's own). */
export function knownServers(registry: ExtensionRegistry, env: Record<string, string | undefined>): Map<string, Known> {
  const out = new Map<string, Known>();
  for (const cfg of registry.mcpServers.values()) out.set(cfg.name, { cfg, agents: [] });
  for (const e of registry.entries()) {
    const def = e.definition;
    if (!def || def.mcpServers.length === 0) continue;
    const r = resolveAgentMcp(def, registry.mcpServers, { file: e.source.file ?? e.agent.name, env, baseDir: registry.projectDir });
    for (const cfg of r.servers) {
      const grants = def.tools.filter((t) => parseMcpToolEntry(t)?.server === sanitizeToolPart(cfg.name));
      const k = out.get(cfg.name) ?? { cfg, agents: [] };
      if (!out.has(cfg.name)) out.set(cfg.name, k);
      k.agents.push({ name: e.agent.name, grants });
    }
  }
  return out;
}

function where(cfg: McpServerConfig): string {
  const s = cfg.shown;
  return s.type === 'stdio' ? [s.command, ...((s.args as string[]) ?? [])].join(' ') : String(s.url);
}

export interface ProbeResult {
  server: string;
  type: string;
  defined_in: string;
  target: string;
  ok: boolean;
  transport?: string;
  server_info?: { name: string; version: string };
  timings_ms?: { start: number; initialize: number; list_tools: number; total: number };
  tools?: Array<{ name: string; runtrail_name: string; description: string }>;
  agents?: Array<{ name: string; tools: string[] }>;
  diagnosis?: { code: string; summary: string; detail?: string; hint?: string };
}

export async function probe(registry: ExtensionRegistry, k: Known): Promise<ProbeResult> {
  const { cfg } = k;
  const base: ProbeResult = { server: cfg.name, type: String(cfg.shown.type), defined_in: cfg.file, target: where(cfg), ok: false };
  let conn: McpConnection;
  let release = () => {};
  try {
    const lease = await registry.mcpPool.acquire(cfg);
    conn = lease.connection;
    release = lease.release;
  } catch (e) {
    if (!(e instanceof McpUnavailableError)) throw e;
    const d = e.diagnosis;
    return { ...base, diagnosis: { code: d.code, summary: d.summary, ...(d.detail ? { detail: d.detail } : {}), ...(d.hint ? { hint: d.hint } : {}) } };
  }
  try {
    await conn.settled();
    const round = (n: number) => Math.round(n * 10) / 10;
    const t = conn.timings;
    const visible = selectTools(cfg, conn.tools, ['mcp__*']);
    return {
      ...base,
      ok: true,
      transport: conn.transportUsed,
      ...(conn.serverInfo ? { server_info: { name: conn.serverInfo.name, version: conn.serverInfo.version } } : {}),
      timings_ms: { start: round(t.startMs), initialize: round(t.initializeMs), list_tools: round(t.listToolsMs), total: round(t.totalMs) },
      tools: visible.tools.map((x) => ({ name: x.tool.name, runtrail_name: x.name, description: (x.tool.description ?? '').split('\n')[0].slice(0, 100) })),
      agents: k.agents.map((a) => ({ name: a.name, tools: selectTools(cfg, conn.tools, a.grants).tools.map((x) => x.name) })),
      ...(visible.clash ? { diagnosis: { code: 'mcp_tool_clash', summary: visible.clash } } : {}),
    };
  } finally {
    release();
  }
}

function printProbe(r: ProbeResult, out: CliDeps['stdout'], full: boolean): void {
  out.write(`${r.server}  ${r.type}  ${r.defined_in}  ${r.target}\n`);
  if (!r.ok) {
    out.write(`  unavailable: ${r.diagnosis?.summary ?? 'unknown error'}\n`);
    if (r.diagnosis?.detail) out.write(`${r.diagnosis.detail.replace(/^/gm, '    ')}\n`);
    if (r.diagnosis?.hint) out.write(`  hint: ${r.diagnosis.hint}\n`);
    return;
  }
  const t = r.timings_ms!;
  out.write(`  ok over ${r.transport}${r.server_info ? ` · ${r.server_info.name} ${r.server_info.version}` : ''} · ${r.tools!.length} tools`);
  out.write(
    full ? `\n  timings: start ${t.start} ms · initialize ${t.initialize} ms · tools/list ${t.list_tools} ms · total ${t.total} ms\n` : ` (${t.total} ms)\n`,
  );
  if (r.diagnosis) out.write(`  problem: ${r.diagnosis.summary}\n`);
  if (full) for (const x of r.tools!) out.write(`    ${x.runtrail_name}${x.description ? `  ${x.description}` : ''}\n`);
  else if (r.tools!.length) out.write(`  tools: ${r.tools!.map((x) => x.name).join(', ')}\n`);
  for (const a of r.agents ?? []) out.write(`  agent ${a.name}: ${a.tools.length ? a.tools.join(', ') : 'no tool matches its tools: entries'}\n`);
}

export const mcpCommand: CliCommand = {
  name: 'mcp',
  help: MCP_USAGE,
  usage: `  mcp list            every MCP server of .runtrail/mcp.json and ~/.runtrail/mcp.json: status, tools
  mcp probe <server>  connect to one MCP server: its tools (as agents name them) and the timings
  mcp serve           Runtrail as an MCP server on stdio; --http PORT for Streamable HTTP on 127.0.0.1
`,
  run: (args, deps) => mcp(args, deps),
};

async function mcp(args: string[], deps: CliDeps): Promise<number> {
  const [sub, ...rest] = args;
  switch (sub) {
    case 'list':
    case 'probe': {
      const { values, positionals } = parse(rest, { json: { type: 'boolean' } });
      const ctx = await projectContext(values, deps);
      const known = knownServers(ctx.registry, deps.env);
      if (sub === 'list') {
        if (positionals.length) throw new UsageError('mcp list takes no arguments');
        const results = await Promise.all([...known.values()].map((k) => probe(ctx.registry, k)));
        if (values.json) deps.stdout.write(`${JSON.stringify({ servers: results })}\n`);
        else if (!results.length) deps.stdout.write('no MCP servers: define them in .runtrail/mcp.json or ~/.runtrail/mcp.json ({ "mcpServers": { … } })\n');
        else for (const r of results) printProbe(r, deps.stdout, false);
        // a server that cannot be used is a failure a script can see
        return results.every((r) => r.ok) ? EXIT.ok : EXIT.failed;
      }
      if (positionals.length !== 1) throw new UsageError(`mcp probe needs one server (${[...known.keys()].sort().join(', ') || 'none is configured'})`);
      const k = known.get(positionals[0]);
      if (!k)
        throw new UsageError(
          `unknown MCP server "${positionals[0]}"${didYouMean(positionals[0], known.keys())} (configured: ${[...known.keys()].sort().join(', ') || 'none'})`,
        );
      const r = await probe(ctx.registry, k);
      if (values.json) deps.stdout.write(`${JSON.stringify(r)}\n`);
      else printProbe(r, deps.stdout, true);
      return r.ok ? EXIT.ok : EXIT.failed;
    }
    case 'serve': {
      const { mcpServeCommand } = await import('../mcp-serve.js');
      return mcpServeCommand(rest, deps);
    }
    case undefined:
    case 'help':
      deps.stdout.write(MCP_USAGE);
      return sub === undefined ? EXIT.usage : EXIT.ok;
    default:
      throw new UsageError(`unknown mcp command "${sub}" (list, probe, serve)`);
  }
}
