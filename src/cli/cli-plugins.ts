/** The CLI's (and `serve`'s) plugins: the builtins, feedbacklens with `execute_skill` when compute skills exist. */
import { builtinPlugins } from '../plugins/builtin-plugins.js';
import type { BusinessPlugin } from '../runtime/business-plugin.js';
import { EXECUTE_SKILL_TOOL } from '../plugins/feedbacklens/offline-procedure.js';
import { executeSkillToolFor, loadComputeSkills } from '../runtime/compute-skills.js';

export async function cliPlugins(skillsDir: string): Promise<BusinessPlugin[]> {
  const compute = await loadComputeSkills(skillsDir, 'feedbacklens');
  if (!compute.length) return builtinPlugins();
  return builtinPlugins({
    feedbacklens: {
      extraTools: (ctx) => [executeSkillToolFor(ctx, compute)],
      extraToolNames: [EXECUTE_SKILL_TOOL],
    },
  });
}
