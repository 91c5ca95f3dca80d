/** The CLI's (and `serve`'s) plugins: the builtins, feedbacklens with `execute_skill` when compute skills exist,
 *  and shell_task where a shell is wanted (always in the CLI; in `serve` only when RUNTRAIL_ENABLE_SHELL_TASK=1,
 *  because it hands whoever can reach the API a shell). */
import { builtinPlugins } from '../plugins/builtin-plugins.js';
import { createShellTaskPlugin } from '../plugins/shell-task/shell-task-plugin.js';
import type { Agent } from '../runtime/agent.js';
import { EXECUTE_SKILL_TOOL } from '../plugins/feedbacklens/offline-procedure.js';
import { executeSkillToolFor, loadComputeSkills } from '../runtime/compute-skills.js';

export async function cliPlugins(skillsDir: string, opts: { shellTask?: boolean } = {}): Promise<Agent[]> {
  const compute = await loadComputeSkills(skillsDir, 'feedbacklens');
  const plugins = compute.length
    ? builtinPlugins({
        feedbacklens: {
          extraTools: (ctx) => [executeSkillToolFor(ctx, compute)],
          extraToolNames: [EXECUTE_SKILL_TOOL],
        },
      })
    : builtinPlugins();
  if (opts.shellTask) plugins.push(createShellTaskPlugin());
  return plugins;
}
