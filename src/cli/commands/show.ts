/** `runtrail show <run_id>`: a run's status, usage, answer and documents; `--calls`: its model calls. */
import { join } from 'node:path';
import { RunRequestError } from '../../runtime/run-request-error.js';
import { readModelCalls } from '../../runtime/model-calls/model-call-record.js';
import { intOpt, parse } from '../args.js';
import { EXIT, UsageError, type CliDeps } from '../cli-io.js';
import type { CliCommand } from '../cli-command.js';
import { printSummary } from '../follow-run.js';
import { modelCallText, noCallsText } from '../model-calls-text.js';
import { projectContext, serviceFor } from '../project-context.js';
import { readRunMetrics, usageLines } from '../usage-lines.js';
import { hintCommand } from '../runtrail-command.js';

/** Calls are read a page at a time: a run of thousands of calls never holds them all whole at once. */
const PAGE = 50;

async function printCalls(runId: string, runsDir: string, opts: { json: boolean; turn?: number }, deps: CliDeps): Promise<void> {
  const root = join(runsDir, runId);
  for (let offset = 0; ; offset += PAGE) {
    const page = await readModelCalls(runId, root, { offset, limit: PAGE, ...(opts.turn !== undefined ? { turn: opts.turn } : {}) });
    if (page.total === 0) {
      // a turn the run never reached is a mistyped option, not a run without calls
      if (opts.turn !== undefined && page.turns > 0)
        throw new UsageError(
          `--turn ${opts.turn}: run ${runId} has ${page.turns} turn${page.turns === 1 ? '' : 's'} with recorded model calls (1..${page.turns})`,
        );
      if (opts.json) return;
      deps.stdout.write(`${noCallsText(page.capture)}\n`);
      return;
    }
    for (const call of page.calls)
      deps.stdout.write(
        opts.json ? `${JSON.stringify({ ...call, tools: call.request.tools ? page.tool_sets[call.request.tools.set] : [] })}\n` : `${modelCallText(call)}\n\n`,
      );
    if (offset + PAGE >= page.total) return;
  }
}

export const showCommand: CliCommand = {
  name: 'show',
  usage: `  show <run_id>       a run's status and documents: --json; --calls: each model call's
                      request and response (--turn N: one turn's; --json: one call a line, whole)
`,
  async run(args, deps) {
    const { values, positionals } = parse(args, { json: { type: 'boolean' }, calls: { type: 'boolean' }, turn: { type: 'string' } });
    if (positionals.length !== 1) throw new UsageError('show needs a run id');
    const turn = intOpt(values, 'turn', 1);
    if (turn !== undefined && !values.calls) throw new UsageError(`--turn goes with --calls (${hintCommand(deps, 'show <run_id> --calls --turn N')})`);
    if (turn !== undefined && !Number.isInteger(turn)) throw new UsageError(`--turn must be a whole number, got ${JSON.stringify(values.turn)}`);
    const service = serviceFor(await projectContext(values, deps), deps);
    try {
      const s = await service.get(positionals[0]);
      if (!s) throw new RunRequestError('not_found', `run ${positionals[0]} not found in ${service.runsDir}`);
      if (values.calls) {
        await printCalls(s.run_id, service.runsDir, { json: values.json === true, ...(turn !== undefined ? { turn } : {}) }, deps);
        return EXIT.ok;
      }
      if (values.json) {
        deps.stdout.write(
          `${JSON.stringify({ status: s, manifest: await service.manifest(s.run_id), metrics: await readRunMetrics(service.runsDir, s.run_id) }, null, 2)}\n`,
        );
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
