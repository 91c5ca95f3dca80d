/** `runtrail plugins`: every agent with its inputs, default skill and artifacts. */
import { parse } from '../args.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { projectContext } from '../project-context.js';
import { agentRow } from './agents.js';

export const pluginsCommand: CliCommand = {
  name: 'plugins',
  usage: `  plugins             list agents and their inputs: --json
`,
  async run(args, deps) {
    const { values } = parse(args, { json: { type: 'boolean' } });
    const ctx = await projectContext(values, deps);
    const rows = ctx.registry.entries().map(({ agent: p, source }) => ({ ...agentRow(p, source), fileInputs: p.fileInputs, defaultSkill: p.defaultSkill }));
    if (values.json) {
      deps.stdout.write(`${JSON.stringify(rows)}\n`);
      return EXIT.ok;
    }
    for (const r of rows) {
      deps.stdout.write(
        `${r.name} ${r.version}  ${r.description}\n  input: ${r.inputs.join(', ') || '-'}\n  skill: ${r.defaultSkill ?? '-'}  artifacts: ${r.artifacts.join(', ') || '-'}\n`,
      );
    }
    return EXIT.ok;
  },
};
