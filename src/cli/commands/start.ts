/** `runtrail start`: the main job out of the box — feedbacklens on the bundled example CSV, offline. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CreateRunRequest } from '../../runtime/run-service-types.js';
import { runtrailPackageRoot } from '../../runtime/package-root.js';
import { parse } from '../args.js';
import { UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { executeAndFollow } from '../follow-run.js';

export const startCommand: CliCommand = {
  name: 'start',
  usage: `  start               feedbacklens on examples/feedback.csv with the offline model
`,
  async run(args, deps) {
    const { values } = parse(args, { model: { type: 'string' }, json: { type: 'boolean' } });
    const csv = deps.exampleCsv ?? join(runtrailPackageRoot(), 'examples', 'feedback.csv');
    if (!deps.plugins.some((p) => p.name === 'feedbacklens')) throw new UsageError('start needs the feedbacklens plugin');
    if (!existsSync(csv)) throw new UsageError(`example data not found: ${csv}`);
    const req: CreateRunRequest = {
      plugin: 'feedbacklens',
      input: { csv_path: csv, product_name: 'TaskFlow Pro' },
      goal: 'Find the most important product problems and prioritise them',
      model: typeof values.model === 'string' ? values.model : 'offline',
    };
    return executeAndFollow(req, values, deps, values.json === true ? 'ndjson' : 'text');
  },
};
