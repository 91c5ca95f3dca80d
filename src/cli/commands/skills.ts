/** `runtrail skills`: every skill the project's agents can use, and the ones that fail to load. */
import { listSkills } from '../../runtime/compute-skills.js';
import { parse } from '../args.js';
import { EXIT } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { projectContext } from '../project-context.js';

export const skillsCommand: CliCommand = {
  name: 'skills',
  usage: `  skills              list skills: --json
`,
  async run(args, deps) {
    const { values } = parse(args, { json: { type: 'boolean' } });
    const ctx = await projectContext(values, deps);
    const { skills, errors } = await listSkills(ctx.registry.skillDirs);
    if (values.json) {
      deps.stdout.write(`${JSON.stringify({ skills: skills.map((s) => ({ ...s.manifest, dir: s.dir, format: s.format })), errors })}\n`);
      return EXIT.ok;
    }
    if (!skills.length && !errors.length) deps.stdout.write(`no skills in ${ctx.registry.skillDirs.join(', ')}\n`);
    for (const s of skills) {
      const m = s.manifest;
      deps.stdout.write(
        s.format === 'agent-skill'
          ? `${m.name} ${m.version}  ${m.description ?? ''}  (${s.dir})\n`
          : `${m.name} ${m.version}  plugins: ${m.compatible_plugins.join(', ')}  tools: ${m.required_tools.join(', ') || '-'}  outputs: ${m.output_artifacts.join(', ') || '-'}\n`,
      );
    }
    for (const e of errors) deps.stderr.write(`✗ ${e.name}: ${e.message}\n`);
    return errors.length ? EXIT.failed : EXIT.ok;
  },
};
