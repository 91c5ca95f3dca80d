import type { Agent } from '../../src/runtime/agent.js';
import { describe, expect, it } from 'vitest';
import { builtinPlugins } from '../../src/plugins/builtin-plugins.js';
import { loadSkill } from '../../src/skills/skill-loader.js';
import { createShellTaskPlugin } from '../../src/plugins/shell-task/shell-task-plugin.js';
import { parseSchema } from '../../src/tools/schema.js';

describe('builtin skill folders', () => {
  const inputs: Record<string, unknown> = {
    feedbacklens: { csv_path: 'input/a.csv' },
    file_summary: { path: 'input/a.md' },
    chat: {},
    shell_task: { command: 'echo hi' },
  };
  for (const plugin of [...builtinPlugins(), createShellTaskPlugin()] as Agent[]) {
    it(`${plugin.defaultSkill} loads and matches plugin ${plugin.name}`, async () => {
      const r = await loadSkill('skills', plugin.defaultSkill!);
      if (!r.ok) throw new Error(r.message);
      const m = r.skill.manifest;
      expect(m.compatible_plugins).toContain(plugin.name);
      expect(r.skill.instructions.length).toBeGreaterThan(100);
      // the skill asks only for tools the plugin provides, and promises the plugin's required artifacts
      const tools = plugin.createTools({
        runId: 'r',
        input: parseSchema(plugin.inputSchema, inputs[plugin.name]),
        goal: '',
        workspace: { root: process.cwd() } as never,
        notice: () => {},
      });
      for (const t of m.required_tools) expect(tools.map((x) => x.name)).toContain(t);
      expect(m.output_artifacts.sort()).toEqual(
        plugin.artifacts
          .filter((a) => a.required)
          .map((a) => a.path)
          .sort(),
      );
      for (const i of m.required_inputs) expect(plugin.fileInputs.concat(Object.keys(inputs[plugin.name] as object))).toContain(i);
    });
  }
});
