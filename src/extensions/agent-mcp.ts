/**
 * An agent's MCP servers: `mcpServers` entries name servers of mcp.json (project or user) or define
 * them inline (`- docs: { type: http, url: … }`), and `tools:` entries such as `mcp__docs__*` or
 * `mcp__docs__search` grant their tools. Checked without connecting: a server must be known, and
 * each `mcp__` entry must name one of the agent's servers. Whether a tool glob matches a tool the
 * server really has is known only once connected: `runtrail mcp probe <server>` shows the list.
 */
import { didYouMean } from '../events/did-you-mean.js';
import type { McpServerConfig } from '../mcp/mcp-config.js';
import { clashingNames, parseServerDefinition, type McpConfigProblem } from '../mcp/mcp-config.js';
import type { McpServerPool } from '../mcp/mcp-server-pool.js';
import { McpToolSource } from '../mcp/mcp-tool-source.js';
import { isMcpToolEntry, parseMcpToolEntry, sanitizeToolPart } from '../mcp/mcp-tool-name.js';
import type { WorkspaceAccess } from '../runtime/agent.js';
import type { ToolSource } from '../tools/tool-source.js';
import type { DefinitionProblem } from './definition-problem.js';
import type { AgentDefinition } from './markdown-agent.js';

export interface AgentMcp {
  servers: McpServerConfig[];
  pool: McpServerPool;
}

export interface ResolveAgentMcpContext {
  /** The agent file as the user knows it. */
  file: string;
  env: Record<string, string | undefined>;
  /** Relative `cwd` of inline stdio servers resolves here (the project folder). */
  baseDir: string;
}

/** The agent's servers (known or inline) and the problems of its `mcpServers` and `mcp__` tool entries. */
export function resolveAgentMcp(
  def: Pick<AgentDefinition, 'mcpServers' | 'tools'>,
  known: ReadonlyMap<string, McpServerConfig>,
  ctx: ResolveAgentMcpContext,
): { servers: McpServerConfig[]; problems: DefinitionProblem[] } {
  const problems: McpConfigProblem[] = [];
  const servers: McpServerConfig[] = [];
  const seen = new Set<string>();
  const at = new Map<string, string>();
  def.mcpServers.forEach((entry, i) => {
    const field = `mcpServers[${i}]`;
    if (typeof entry === 'string') {
      const s = known.get(entry);
      if (!s) {
        const names = [...known.keys()].sort();
        problems.push({
          file: ctx.file,
          field,
          message: `unknown MCP server "${entry}"${didYouMean(entry, names)} (${names.length ? `configured: ${names.join(', ')}` : 'none is configured'}; define it in .runtrail/mcp.json or inline)`,
          level: 'error',
        });
        return;
      }
      if (seen.has(entry)) return void problems.push({ file: ctx.file, field, message: `"${entry}" is listed twice`, level: 'warning' });
      seen.add(entry);
      at.set(entry, field);
      servers.push(s);
      return;
    }
    for (const [name, raw] of Object.entries(entry)) {
      if (seen.has(name)) {
        problems.push({ file: ctx.file, field: `${field}.${name}`, message: `MCP server "${name}" is already in mcpServers`, level: 'error' });
        continue;
      }
      const s = parseServerDefinition(name, raw, { file: ctx.file, at: field, env: ctx.env, baseDir: ctx.baseDir }, problems);
      if (!s) continue;
      seen.add(name);
      at.set(name, `${field}.${name}`);
      servers.push(s);
    }
  });
  clashingNames(servers, ctx.file, 'mcpServers', problems);
  const byPrefix = new Map(servers.map((s) => [sanitizeToolPart(s.name), s]));
  const granted = new Set<string>();
  for (const t of def.tools) {
    if (!isMcpToolEntry(t)) continue;
    const p = parseMcpToolEntry(t);
    if (!p) {
      problems.push({
        file: ctx.file,
        field: 'tools',
        message: `"${t}" must be mcp__<server>__<tool or glob>, e.g. mcp__everything__* or mcp__everything__echo`,
        level: 'error',
      });
      continue;
    }
    const s = byPrefix.get(p.server);
    if (!s) {
      problems.push({
        file: ctx.file,
        field: 'tools',
        message: `"${t}" names MCP server "${p.server}", which is not in mcpServers (${servers.length ? servers.map((x) => x.name).join(', ') : 'empty'}); add it there`,
        level: 'error',
      });
      continue;
    }
    granted.add(s.name);
  }
  for (const s of servers) {
    if (!granted.has(s.name))
      problems.push({
        file: ctx.file,
        field: at.get(s.name) ?? 'mcpServers',
        message: `no tools: entry grants the tools of "${s.name}" (add mcp__${sanitizeToolPart(s.name)}__* or name its tools)`,
        level: 'warning',
      });
  }
  return { servers, problems };
}

/** One ToolSource per server the agent's `tools:` grants something of, bound to the run's artifacts. */
export function agentMcpSources(tools: readonly string[], mcp: AgentMcp, workspace: WorkspaceAccess): ToolSource[] {
  const out: ToolSource[] = [];
  for (const server of mcp.servers) {
    const prefix = sanitizeToolPart(server.name);
    const grants = tools.filter((t) => parseMcpToolEntry(t)?.server === prefix);
    if (grants.length) out.push(new McpToolSource({ server, grants, pool: mcp.pool, artifacts: workspace }));
  }
  return out;
}

/** Per MCP server of the agent, the `tools:` entries that grant its tools: what `runtrail agents` shows. */
export function agentMcpSummary(def: Pick<AgentDefinition, 'mcpServers' | 'tools'>): string[] {
  const names = def.mcpServers.flatMap((e) => (typeof e === 'string' ? [e] : Object.keys(e)));
  return names.map((n) => {
    const grants = def.tools.filter((t) => parseMcpToolEntry(t)?.server === sanitizeToolPart(n));
    return `${n} (${grants.length ? grants.join(', ') : 'no tools granted'})`;
  });
}
