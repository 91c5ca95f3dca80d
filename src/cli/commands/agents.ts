/** `runtrail agents`: every agent with its source (builtin, user or project file), version, description and model. */
import type { Agent, DefinitionSource } from '../../runtime/agent.js';
import { pluginInputJsonSchema } from '../../runtime/plugin-input.js';
import type { ExtensionRegistry } from '../../extensions/extension-registry.js';
import { agentMcpSummary } from '../../extensions/agent-mcp.js';
import { parse } from '../args.js';
import { EXIT, type CliOut } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { projectContext } from '../project-context.js';

export function sourceLabel(s: DefinitionSource | undefined): string {
  if (!s || s.kind === 'builtin') return 'builtin';
  return s.file ? `${s.kind} ${s.file}` : s.kind;
}

export interface AgentRow {
  name: string;
  version: string;
  description: string;
  source: string;
  model: string | null;
  inputs: string[];
  artifacts: string[];
}

export function agentRow(p: Agent, source: DefinitionSource | undefined): AgentRow {
  const schema = pluginInputJsonSchema(p) as { properties?: Record<string, unknown>; required?: string[] };
  const required = new Set(schema.required ?? []);
  return {
    name: p.name,
    version: p.version,
    description: p.description,
    source: sourceLabel(source ?? p.source),
    model: p.model ?? null,
    inputs: Object.keys(schema.properties ?? {}).map((k) => (required.has(k) ? k : `${k}?`)),
    artifacts: p.artifacts.map((a) => a.path),
  };
}

export function printAgents(registry: ExtensionRegistry, out: CliOut, json: boolean): void {
  // an agent's MCP servers and the tools: entries that grant their tools (the tools themselves: runtrail mcp probe)
  const rows = registry
    .entries()
    .map((e) => ({ ...agentRow(e.agent, e.source), ...(e.definition?.mcpServers.length ? { mcp: agentMcpSummary(e.definition) } : {}) }));
  if (json) {
    out.write(`${JSON.stringify(rows)}\n`);
    return;
  }
  for (const r of rows) {
    out.write(
      `${r.name} ${r.version}  ${r.description}\n  source: ${r.source}  model: ${r.model ?? 'default'}\n  input: ${r.inputs.join(', ') || '-'}  artifacts: ${r.artifacts.join(', ') || '-'}\n`,
    );
    if ('mcp' in r && r.mcp) out.write(`  mcp: ${r.mcp.join('; ')}\n`);
  }
}

export const agentsCommand: CliCommand = {
  name: 'agents',
  usage: `  agents              list every agent (builtin, ~/.runtrail, the project's) with its source: --json
`,
  async run(args, deps) {
    const { values } = parse(args, { json: { type: 'boolean' } });
    const ctx = await projectContext(values, deps);
    printAgents(ctx.registry, deps.stdout, values.json === true);
    return EXIT.ok;
  },
};
