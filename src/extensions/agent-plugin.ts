/**
 * A Markdown agent compiled to the same Agent the builtins are: its input schema, plan,
 * artifact contract and tools go through the same capability snapshot, PlanProgress, stop
 * validation, manifest and replay as any plugin's.
 */
import type { Agent, DefinitionSource } from '../runtime/agent.js';
import type { AnyToolDefinition } from '../tools/tool.js';
import { isMcpToolEntry } from '../mcp/mcp-tool-name.js';
import { agentMcpSources, type AgentMcp } from './agent-mcp.js';
import { defaultPlan, fileInputsOf, type AgentDefinition } from './markdown-agent.js';
import type { ToolCatalog } from './tool-catalog.js';

/** The tools an agent gets: its allowlist, plus load_skill when it has skills. */
export function agentToolNames(def: Pick<AgentDefinition, 'tools' | 'skills'>): string[] {
  const names = [...def.tools];
  if (def.skills.length && !names.includes('load_skill')) names.push('load_skill');
  return [...new Set(names)];
}

export function compileAgent(def: AgentDefinition, catalog: ToolCatalog, source: DefinitionSource, mcp?: AgentMcp): Agent {
  const tools = agentToolNames(def);
  // mcp__<server>__… entries are granted by the agent's MCP servers, connected when a run starts
  const named = tools.filter((t) => !isMcpToolEntry(t));
  return {
    name: def.name,
    version: def.version,
    description: def.description,
    inputSchema: def.input,
    fileInputs: fileInputsOf(def.input),
    defaultSkill: null,
    defaultGoal: def.goal ?? def.description,
    promptFragments: [],
    instructions: def.instructions,
    skills: def.skills,
    ...(def.model ? { model: def.model, modelBaseDir: def.dir } : {}),
    ...(def.limits ? { limits: def.limits } : {}),
    ...(def.capture ? { capture: def.capture } : {}),
    ...(def.sandbox ? { sandbox: def.sandbox } : {}),
    ...(def.permissions ? { permissions: def.permissions } : {}),
    ...(def.durability ? { durability: def.durability } : {}),
    ...(def.agents.length ? { agents: def.agents } : {}),
    source,
    ...(mcp?.servers.length ? { createToolSources: (ctx) => agentMcpSources(tools, mcp, ctx.workspace) } : {}),
    createTools(ctx): AnyToolDefinition[] {
      return named.map((name) => {
        const entry = catalog.get(name);
        // the registry checked every name when it loaded the agent; a tool removed since is a run error
        if (!entry) throw new Error(`tool "${name}" of agent ${def.name} is no longer available`);
        return entry.factory({
          runId: ctx.runId,
          workspace: ctx.workspace,
          artifacts: def.artifacts,
          skills: ctx.skills ?? [],
          ...(ctx.schemes ? { schemes: ctx.schemes } : {}),
        });
      });
    },
    plan: def.plan ?? defaultPlan(def.artifacts, tools),
    artifacts: def.artifacts,
    validators: [],
  };
}
