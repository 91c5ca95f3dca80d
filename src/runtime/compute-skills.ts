/** Compute-entry skills (a skill.json with `entry`) offered to runs through the `execute_skill` tool. */
import { createExecuteSkillTool } from '../skills/execute-skill-tool.js';
import type { ComputeSkillSpec } from '../skills/compute-skill-runner.js';
import { listSkills } from '../skills/skill-loader.js';
import type { ProcessRegistry } from '../tools/process-registry.js';
import type { AnyToolDefinition } from '../tools/tool.js';
import type { WorkspaceAccess } from './agent.js';

export { listSkills };

/** Every loadable skill under `skillsDir` that has an entry, optionally only those compatible with `plugin`. */
export async function loadComputeSkills(skillsDir: string, plugin?: string): Promise<ComputeSkillSpec[]> {
  const { skills } = await listSkills(skillsDir);
  return skills
    .filter((s) => s.manifest.entry && (!plugin || s.manifest.compatible_plugins.includes(plugin)))
    .map((s) => ({ name: s.manifest.name, dir: s.dir, entry: s.manifest.entry! }));
}

/** `execute_skill` bound to one run: the child runs in the run folder, its session scoped to the run id. */
export function executeSkillToolFor(
  ctx: { runId: string; workspace: WorkspaceAccess },
  skills: ComputeSkillSpec[],
  registry?: ProcessRegistry,
): AnyToolDefinition {
  return createExecuteSkillTool({ skills, cwd: ctx.workspace.root, scopeKey: ctx.runId, ...(registry ? { registry } : {}) });
}
