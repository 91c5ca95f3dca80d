/** `runtrail resume <run_id>`: a run whose process died goes on from its checkpoint, followed live. */
import { parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { executeAndFollow } from '../follow-run.js';
import { projectContext } from '../project-context.js';
import { hintCommand } from '../runtrail-command.js';

export const resumeCommand: CliCommand = {
  name: 'resume',
  usage: `  resume <run_id>     take up a run whose process died, from its checkpoint (same run, same events);
                      --json (NDJSON wire frames), --approve-all | --deny-all; \`runtrail runs\` shows which can be
`,
  async run(args, deps, usage) {
    const { values, positionals } = parse(args, {
      json: { type: 'boolean' },
      'approve-all': { type: 'boolean' },
      'deny-all': { type: 'boolean' },
      'show-reasoning': { type: 'boolean' },
    });
    if (values.help) {
      deps.stdout.write(usage);
      return EXIT.ok;
    }
    if (positionals.length !== 1) throw new UsageError(`resume needs exactly one run id (${hintCommand(deps, 'runs')} lists them)`);
    const runId = positionals[0];
    const ctx = await projectContext(values, deps, { startsRuns: true });
    return (await executeAndFollow({ plugin: '', input: {} }, values, deps, values.json === true ? 'ndjson' : 'text', ctx, (service) => service.resume(runId)))
      .exit;
  },
};
