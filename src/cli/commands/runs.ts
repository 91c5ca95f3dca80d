/** `runtrail runs`: the runs of the data dir, newest first, filtered by status or agent. */
import { RUN_STATUSES, type RunStatus } from '../../events/agent-event.js';
import { intOpt, parse } from '../args.js';
import { EXIT, UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { projectContext, serviceFor } from '../project-context.js';

export const runsCommand: CliCommand = {
  name: 'runs',
  usage: `  runs                list runs: --status S, --plugin P, --limit N, --json
`,
  async run(args, deps) {
    const { values } = parse(args, { status: { type: 'string' }, plugin: { type: 'string' }, limit: { type: 'string' }, json: { type: 'boolean' } });
    const status = values.status as RunStatus | undefined;
    if (status !== undefined && !RUN_STATUSES.includes(status)) throw new UsageError(`--status must be one of ${RUN_STATUSES.join(', ')}`);
    const limit = intOpt(values, 'limit', 1) ?? 20;
    const service = serviceFor(await projectContext(values, deps), deps);
    try {
      const { runs, total } = await service.list({
        ...(status ? { status } : {}),
        ...(typeof values.plugin === 'string' ? { plugin: values.plugin } : {}),
        limit,
      });
      if (values.json) {
        deps.stdout.write(`${JSON.stringify({ runs, total, resumable: service.resumableRuns() })}\n`);
        return EXIT.ok;
      }
      if (!runs.length) {
        deps.stdout.write('no runs\n');
        return EXIT.ok;
      }
      // runs whose process died and that `runtrail resume <run_id>` takes up
      const resumable = new Set(service.resumableRuns());
      for (const r of runs) {
        const goal = r.goal.length > 50 ? `${r.goal.slice(0, 49)}…` : r.goal;
        const status = resumable.has(r.run_id) ? `${r.status} (resumable)` : r.status;
        deps.stdout.write(`${r.run_id}  ${status.padEnd(14)} ${r.plugin.padEnd(14)} ${goal}\n`);
      }
      if (total > runs.length) deps.stdout.write(`(${runs.length} of ${total}; --limit N for more)\n`);
      return EXIT.ok;
    } finally {
      await service.close();
    }
  },
};
