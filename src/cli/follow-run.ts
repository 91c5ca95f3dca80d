/**
 * What `run` and `start` share: create the run, follow its events to the terminal (text, or NDJSON
 * wire frames), answer its approvals, cancel it on Ctrl-C, and print where its files are.
 */
import { join } from 'node:path';
import type { RunStatus } from '../events/agent-event.js';
import type { CreateRunRequest, RunStatusFile } from '../runtime/run-service-types.js';
import { EXIT, UsageError, type CliDeps } from './cli-io.js';
import type { Values } from './args.js';
import { approvalHandler } from './cli-approvals.js';
import { cliTelemetry, finishTelemetry } from './cli-telemetry.js';
import { projectContext, serviceFor, type ProjectContext } from './project-context.js';
import { createWireWriter, type WireFormat } from './wire-output.js';
import type { RunService } from '../runtime/service/run-service.js';

export function exitFor(status: RunStatus): number {
  return status === 'completed' ? EXIT.ok : status === 'cancelled' ? EXIT.cancelled : EXIT.failed;
}

/** `start`: how the run to follow is had; default a new run from `req` (`resume` takes up a dead one). */
export type RunStart = (service: RunService, req: CreateRunRequest, opts: { claw: string; traceparent?: string }) => Promise<RunStatusFile>;

/** How a followed run ended: the exit code for it and its final status. */
export interface FollowedRun {
  exit: number;
  status: RunStatusFile;
}

export async function executeAndFollow(
  req: CreateRunRequest,
  values: Values,
  deps: CliDeps,
  format: WireFormat,
  project?: ProjectContext,
  start?: RunStart,
): Promise<FollowedRun> {
  const ctx = project ?? (await projectContext(values, deps));
  // traces when OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT is set; TRACEPARENT (an env carrier) makes the run part of the caller's trace
  const telemetry = await cliTelemetry(deps.env, deps.stderr);
  const service = serviceFor(ctx, deps, telemetry ? [telemetry.observer] : []);
  try {
    const how = { claw: 'cli', ...(deps.env.TRACEPARENT ? { traceparent: deps.env.TRACEPARENT } : {}) };
    const created = start ? await start(service, req, how) : await service.create(req, how);
    const runId = created.run_id;
    const note = format === 'text' ? deps.stdout : deps.stderr;
    if (format === 'text') note.write(`▶ ${runId} · ${created.plugin} ${created.plugin_version} · model ${created.provider}:${created.model}\n`);
    const writer = createWireWriter(format, runId, deps.stdout, { showReasoning: values['show-reasoning'] === true, traceId: created.trace_id });
    let cancelling = false;
    const off = deps.onInterrupt?.(() => {
      if (cancelling) return;
      cancelling = true;
      deps.stderr.write('\nruntrail: cancelling…\n');
      void service.cancel(runId).catch(() => undefined);
    });
    try {
      if (values['approve-all'] === true && values['deny-all'] === true) throw new UsageError('--approve-all and --deny-all exclude each other');
      const onApproval = approvalHandler(
        service,
        runId,
        values['approve-all'] === true ? 'approve-all' : values['deny-all'] === true ? 'deny-all' : 'ask',
        deps,
      );
      for await (const ev of service.events(runId)) {
        writer.write(ev);
        onApproval(ev);
      }
    } finally {
      off?.();
    }
    const final = await service.wait(runId);
    printSummary(final, service.runsDir, note, writer.shownError?.() ?? null);
    return { exit: exitFor(final.status), status: final };
  } finally {
    await service.close();
    await finishTelemetry(telemetry, deps.stderr);
  }
}

/** `shownError`: the error the live output already printed; the summary does not say it twice. */
export function printSummary(s: RunStatusFile, runsDir: string, out: { write(s: string): unknown }, shownError: string | null = null): void {
  const dir = join(runsDir, s.run_id);
  out.write(`\n${s.status === 'completed' ? '✓' : s.status === 'cancelled' ? '■' : '✗'} run ${s.run_id} ${s.status}\n`);
  if (s.diagnosis && s.status !== 'completed' && s.diagnosis.summary !== shownError) out.write(`  ${s.diagnosis.summary}\n`);
  out.write(`  run folder: ${dir}\n`);
  if (s.public_documents.length) {
    out.write(`  artifacts:\n`);
    for (const d of s.public_documents) out.write(`    ${join(dir, d.path)} (${d.bytes} bytes)\n`);
  }
}
