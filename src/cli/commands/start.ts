/** `runtrail start`: the main job out of the box — feedbacklens on the bundled example CSV, offline. */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { CreateRunRequest } from '../../runtime/run-service-types.js';
import { runtrailPackageRoot } from '../../runtime/package-root.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../../server/default-address.js';
import { parse } from '../args.js';
import { UsageError } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { executeAndFollow } from '../follow-run.js';
import { hintCommand } from '../runtrail-command.js';

export const startCommand: CliCommand = {
  name: 'start',
  usage: `  start               feedbacklens on examples/feedback.csv with the offline model
`,
  async run(args, deps) {
    const { values } = parse(args, { model: { type: 'string' }, json: { type: 'boolean' } });
    const csv = deps.exampleCsv ?? join(runtrailPackageRoot(), 'examples', 'feedback.csv');
    if (!deps.agents.some((p) => p.name === 'feedbacklens')) throw new UsageError('start needs the feedbacklens agent');
    if (!existsSync(csv)) throw new UsageError(`example data not found: ${csv}`);
    const req: CreateRunRequest = {
      plugin: 'feedbacklens',
      input: { csv_path: csv, product_name: 'TaskFlow Pro' },
      goal: 'Find the most important product problems and prioritise them',
      model: typeof values.model === 'string' ? values.model : 'offline',
    };
    const json = values.json === true;
    const { exit, status } = await executeAndFollow(req, values, deps, json ? 'ndjson' : 'text');
    // a first run ends with where to look at it next; with --json stdout holds only wire frames
    (json ? deps.stderr : deps.stdout).write(nextSteps(status.run_id, deps));
    return exit;
  },
};

/** The two ways to look at the run just made: the web page (through `serve`) and `show` in the terminal. */
function nextSteps(runId: string, deps: { cwd: string; env: Record<string, string | undefined> }): string {
  const serve = hintCommand(deps, 'serve');
  const show = hintCommand(deps, `show ${runId}`);
  const width = Math.max(serve.length, show.length) + 2;
  return (
    `\nnext:\n` +
    `  ${serve.padEnd(width)}then open http://${DEFAULT_HOST}:${DEFAULT_PORT}/#/runs/${runId} (the run live, its steps, trace and model calls)\n` +
    `  ${show.padEnd(width)}the run's status, answer and artifacts here\n`
  );
}
