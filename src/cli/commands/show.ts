/** `runtrail show <run_id>`: a run's status, usage, answer and documents. */
import { RunRequestError } from '../../runtime/run-request-error.js';
import { parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { printSummary } from '../follow-run.js';
import { projectContext, serviceFor } from '../project-context.js';
import { readRunMetrics, usageLines } from '../usage-lines.js';

export const showCommand: CliCommand = {
  name: 'show',
  usage: `  show <run_id>       a run's status and documents: --json
`,
  async run(args, deps) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('show needs a run id');
    const service = serviceFor(await projectContext(values, deps), deps);
    try {
      const s = await service.get(positionals[0]);
      if (!s) throw new RunRequestError('not_found', `run ${positionals[0]} not found in ${service.runsDir}`);
      if (values.json) {
        deps.stdout.write(`${JSON.stringify({ status: s, manifest: await service.manifest(s.run_id), metrics: await readRunMetrics(service.runsDir, s.run_id) }, null, 2)}\n`);
        return EXIT.ok;
      }
      const lines = [
        `run        ${s.run_id}`,
        `status     ${s.status}${s.diagnosis ? ` (${s.diagnosis.code}: ${s.diagnosis.summary})` : ''}`,
        `plugin     ${s.plugin} ${s.plugin_version}${s.skill ? ` · skill ${s.skill}` : ''}`,
        `model      ${s.provider}:${s.model}`,
        `goal       ${s.goal}`,
        `created    ${s.created_at}`,
        `finished   ${s.finished_at ?? '-'}`,
        `events     ${s.last_seq}`,
        ...usageLines(await readRunMetrics(service.runsDir, s.run_id)),
        `answer     ${s.final_answer || '-'}`,
      ];
      deps.stdout.write(`${lines.join('\n')}\n`);
      printSummary(s, service.runsDir, deps.stdout);
      return EXIT.ok;
    } finally {
      await service.close();
    }
  },
};
