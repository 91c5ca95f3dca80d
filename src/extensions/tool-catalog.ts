/**
 * Every tool an agent may name in `tools:`: the builtin agent tools (read_file, write_artifact,
 * write_chart, list_artifacts, load_skill; by grant exec, process, execute_skill) and the code plugins' tools.
 * A tool is made per run, bound to that run's folder, artifacts and skills.
 */
import type { ArtifactContract, WorkspaceAccess } from '../runtime/agent.js';
import { createExecuteSkillTool } from '../skills/execute-skill-tool.js';
import { createLoadSkillTool, skillScheme } from '../skills/load-skill-tool.js';
import type { LoadedSkill } from '../skills/skill-loader.js';
import { defaultProcessRegistry } from '../tools/default-process-registry.js';
import { createExecTool } from '../tools/exec-tool.js';
import { createListArtifactsTool } from '../tools/list-artifacts-tool.js';
import { createProcessTool } from '../tools/process-tool.js';
import { createReadFileTool, type PathScheme } from '../tools/read-file-tool.js';
import type { AnyToolDefinition, ToolExecutionContext, ToolResult } from '../tools/tool.js';
import { createWriteArtifactTool } from '../tools/write-artifact-tool.js';
import { createWriteChartTool } from '../tools/write-chart-tool.js';
import type { PluginTool, PluginToolContext, PluginToolResult } from './define.js';
import { NOOP_REPORTER } from '../events/noop-reporter.js';

export interface ToolRunContext {
  runId: string;
  workspace: WorkspaceAccess;
  artifacts: ArtifactContract[];
  /** The agent's granted skills. */
  skills: LoadedSkill[];
  /** More read_file schemes (run:// for subagents' artifacts). */
  schemes?: Record<string, PathScheme>;
}

export type ToolFactory = (ctx: ToolRunContext) => AnyToolDefinition;

export const BUILTIN_AGENT_TOOLS: Record<string, ToolFactory> = {
  read_file: (c) => createReadFileTool({ files: c.workspace, schemes: { ...(c.skills.length ? { skill: skillScheme(c.skills) } : {}), ...c.schemes } }),
  write_artifact: (c) => createWriteArtifactTool({ workspace: c.workspace, contracts: c.artifacts }),
  write_chart: (c) => createWriteChartTool({ workspace: c.workspace }),
  list_artifacts: (c) => createListArtifactsTool({ workspace: c.workspace, contracts: c.artifacts }),
  load_skill: (c) => createLoadSkillTool(c.skills),
  exec: (c) => createExecTool({ registry: defaultProcessRegistry(), scopeKey: c.runId, cwd: c.workspace.root, allowedRoots: [c.workspace.root] }),
  process: (c) => createProcessTool({ registry: defaultProcessRegistry(), scopeKey: c.runId }),
  execute_skill: (c) =>
    createExecuteSkillTool({
      skills: c.skills.filter((s) => s.manifest.entry).map((s) => ({ name: s.manifest.name, dir: s.dir, entry: s.manifest.entry! })),
      cwd: c.workspace.root,
      scopeKey: c.runId,
    }),
};

/** Tools granted only when named; the rest of the builtins are every agent's default. */
export const GRANT_ONLY_TOOLS = ['exec', 'process', 'execute_skill'];

function normalise(r: PluginToolResult): ToolResult {
  if (typeof r === 'string') return { ok: true, content: r };
  if (r && typeof r === 'object' && typeof r.ok === 'boolean' && typeof r.content !== 'string') {
    return { ...r, content: r.content === undefined ? '' : JSON.stringify(r.content) } as ToolResult;
  }
  // anything else is the executor's to refuse as a malformed result
  return r as ToolResult;
}

/** What a code plugin's tool is handed: the executor's context plus the run's workspace and id. */
function codeToolContext(run: ToolRunContext, call: ToolExecutionContext | undefined): PluginToolContext {
  return {
    signal: call?.signal ?? new AbortController().signal,
    reporter: call?.reporter ?? NOOP_REPORTER,
    workspace: run.workspace,
    runId: run.runId,
    toolCallId: call?.toolCallId ?? '',
  };
}

/** A code plugin's tool as a Runtrail tool of one run (its ctx gives workspace and runId). */
export function pluginToolFactory(t: PluginTool): ToolFactory {
  return (c) => ({
    name: t.name,
    description: t.description,
    parameters: t.parameters,
    ...(t.timeoutMs ? { timeoutMs: t.timeoutMs } : {}),
    ...(t.readOnly ? { readOnly: true } : {}),
    ...(t.idempotent ? { idempotent: true } : {}),
    async execute(args, ectx) {
      return normalise(await t.execute(args, codeToolContext(c, ectx)));
    },
  });
}

export interface CatalogEntry {
  factory: ToolFactory;
  /** `builtin` or the plugin file that defines it. */
  source: string;
}

export class ToolCatalog {
  private readonly entries = new Map<string, CatalogEntry>();

  constructor() {
    for (const [name, factory] of Object.entries(BUILTIN_AGENT_TOOLS)) this.entries.set(name, { factory, source: 'builtin' });
  }

  get(name: string): CatalogEntry | undefined {
    return this.entries.get(name);
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  set(name: string, entry: CatalogEntry): void {
    this.entries.set(name, entry);
  }

  delete(name: string): void {
    this.entries.delete(name);
  }

  names(): string[] {
    return [...this.entries.keys()].sort();
  }
}
