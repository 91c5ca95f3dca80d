/** `runtrail validate`: every definition of the project checked; one line per problem, exit 2 on any error. */
import { errorsOf, problemLine } from '../../extensions/definition-problem.js';
import { parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { loadRegistry, projectDirOf } from '../project-context.js';

export const validateCommand: CliCommand = {
  name: 'validate',
  usage: `  validate            check every definition of the project: exit 0 when all are valid, else 2
                      with one line per problem (file: field: message)
`,
  async run(args, deps) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' } });
    if (positionals.length) throw new UsageError('validate takes no arguments (use --project DIR)');
    const projectDir = projectDirOf(values, deps);
    const registry = await loadRegistry(projectDir, deps);
    // declared schedules and config.json's webhooks: checked by triggers (loaded here only)
    const { projectTriggerProblems } = await import('../../triggers/project-triggers.js');
    const problems = [...registry.problems, ...projectTriggerProblems(registry)];
    const errors = errorsOf(problems);
    if (values.json) {
      deps.stdout.write(`${JSON.stringify({ ok: errors.length === 0, agents: registry.names(), problems })}\n`);
      return errors.length ? EXIT.usage : EXIT.ok;
    }
    for (const p of problems) (p.level === 'error' ? deps.stdout : deps.stderr).write(`${p.level === 'warning' ? 'warning: ' : ''}${problemLine(p)}\n`);
    if (errors.length === 0) deps.stderr.write(`ok: ${registry.names().length} agents, ${registry.tools.names().length} tools valid in ${projectDir}\n`);
    return errors.length ? EXIT.usage : EXIT.ok;
  },
};
