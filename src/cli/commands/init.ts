/** `runtrail init [DIR]`: a small project that runs to completion offline. */
import { resolve } from 'node:path';
import { parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { initProject } from '../init-project.js';
import { runtrailCommand } from '../runtrail-command.js';

export const initCommand: CliCommand = {
  name: 'init',
  usage: `  init [DIR]          write a small working project (an agent, a skill, a code plugin, a script model)
`,
  run(args, deps) {
    const { positionals } = parse(args, {});
    if (positionals.length > 1) throw new UsageError('init takes at most one folder');
    const shown = positionals[0] ?? '.';
    const dir = resolve(deps.cwd, shown);
    let r;
    try {
      r = initProject(dir, shown, runtrailCommand(deps.cwd, deps.env));
    } catch (e) {
      deps.stderr.write(`runtrail: ${(e as Error).message}\n`);
      return EXIT.usage;
    }
    deps.stdout.write(
      `Created a Runtrail project in ${dir}:\n${r.files.map((f) => `  ${f}`).join('\n')}\n\nRun it to completion offline (its agent uses the scripted model next to it):\n  ${r.command}\n`,
    );
    return EXIT.ok;
  },
};
