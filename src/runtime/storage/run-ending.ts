/**
 * The one way a run ends, whether it finished in this process or a recovery closes it after a crash:
 * the run's status becomes terminal, its final files are written (manifest, metrics, status), then its
 * terminal event is published and the event log closed, then the trace is projected.
 *
 * Every final file is on disk before the terminal event, so a client reacting to that event reads
 * final files; a file that cannot be written becomes a `notice` event before it. The status's
 * `last_seq` is the terminal event's seq, whatever was published before it.
 */
import type { RunStatus } from '../../events/agent-event.js';
import type { AgentEventBus } from '../../events/agent-event-bus.js';
import { Diagnosis, type DiagnosisDict } from '../../events/diagnosis.js';
import type { ArtifactContract } from '../agent.js';
import { RUN_FILES, type RunFolder } from './run-folder.js';
import { publicDocuments, type RunManifest } from './run-manifest.js';
import type { RunMetricsFile } from '../metrics/run-metrics.js';
import type { RunStatusWriter } from './run-status-writer.js';
import { writeTrace } from './trace-file.js';

export type TerminalStatus = 'completed' | 'failed' | 'cancelled';

/** How a run ended: what the engine reports, and what a recovery decides for a run it closes. */
export interface RunOutcome {
  status: TerminalStatus;
  /** the final answer (or what there was of it) */
  text: string;
  diagnosis: DiagnosisDict | null;
}

/** The run's event log, as far as ending it goes. */
export interface EndingLog {
  close(): void;
  /** Resolves once every appended event is durable (a shared store commits in batches). */
  settled?(): Promise<void>;
}

export interface EndRun {
  folder: RunFolder;
  /** The run's bus; its subscribers write each event to `log`. */
  bus: AgentEventBus;
  log: EndingLog;
  /** The one writer of the run's status: it is made terminal and written with the final files. */
  status: RunStatusWriter;
  outcome: RunOutcome;
  /** when the run ended (ms since the epoch) */
  endedMs: number;
  /** the agent's artifact contract: audience and sensitivity of its public documents */
  contract: ArtifactContract[];
  /** the skill the manifest names (a recovery knows only its name) */
  skill: { name: string; version: string } | null;
  usedSkills: string[];
  usedMcp: string[];
  /** `run.state` to the terminal status from this state; omitted when the caller's state machine published it. */
  stateFrom?: RunStatus;
  /** Publish the lifecycle `end`/`error` event; false when it is already on disk. Default true. */
  lifecycle?: boolean;
  /** The run's metrics file and model_turns.jsonl lines, given the seq of its last event. */
  metrics?(lastSeq: number): { file: RunMetricsFile; turnLines: string };
  /** Work that must end before the lifecycle event (background processes, reporters); its failure is a notice. */
  beforeLifecycle?(notice: (text: string) => void): Promise<void>;
  /** Awaited with the final files (e.g. the process-event pipeline's flush). */
  alongside?: Promise<unknown>;
}

const TERMINAL_TYPE = { completed: 'run.completed', failed: 'run.failed', cancelled: 'run.cancelled' } as const;

/** Ends the run; returns the seq of the last event it wrote (the terminal one). */
export async function endRun(e: EndRun): Promise<number> {
  const { bus, folder, outcome } = e;
  const status = e.status.current;
  const notice = (text: string) => void bus.publish('run', { type: 'notice', text });
  const finishedAt = new Date(e.endedMs).toISOString();
  if (e.stateFrom !== undefined) bus.publish('run', { type: 'run.state', from: e.stateFrom, to: outcome.status });

  // the final files go to disk side by side; a failure is reported before the terminal event
  const late: string[] = [];
  const finalFile = (what: string, write: Promise<void>): Promise<void> =>
    write.catch((err: Error) => void late.push(`could not finish ${what}: ${err.message}`));
  // the public documents the manifest and the status list; a listing that fails keeps the last ones
  const listed = await folder
    .listArtifacts()
    .then((all) => publicDocuments(all, e.contract))
    .catch((err: Error) => void late.push(`could not finish manifest.json: ${err.message}`));
  const documents = listed ?? status.public_documents;
  const manifest: RunManifest = {
    run_id: status.run_id,
    status: outcome.status,
    plugin: { name: status.plugin, version: status.plugin_version },
    skill: e.skill,
    provider: status.provider,
    model: status.model,
    created_at: status.created_at,
    finished_at: finishedAt,
    documents,
  };
  const manifestWrite = listed ? finalFile('manifest.json', folder.writeManifest(manifest)) : undefined;

  await e.beforeLifecycle?.(notice).catch((err: Error) => notice(`could not finish the run: ${err.message}`));
  if (e.lifecycle !== false) {
    if (outcome.status === 'completed') bus.publish('lifecycle', { phase: 'end', endedAt: e.endedMs });
    else
      bus.publish('lifecycle', {
        phase: 'error',
        endedAt: e.endedMs,
        diagnosis: outcome.diagnosis ?? new Diagnosis({ code: 'failed', severity: 'error', summary: 'run failed' }).toDict(),
      });
  }

  // the status names the terminal event, which is the next event published
  const settle = () =>
    e.status.ended({
      status: outcome.status,
      finished_at: finishedAt,
      final_answer: outcome.text,
      diagnosis: outcome.diagnosis,
      public_documents: documents,
      last_seq: bus.lastSeq + 1,
    });
  settle();
  const metrics = e.metrics?.(status.last_seq);
  await Promise.all([
    manifestWrite,
    e.alongside?.catch(() => undefined),
    metrics ? finalFile('metrics.json', folder.writeMetrics(metrics.file)) : undefined,
    metrics ? finalFile('model_turns.jsonl', folder.writeText(RUN_FILES.modelTurns, metrics.turnLines)) : undefined,
    finalFile('run_status.json', e.status.save()),
  ]);
  if (late.length) {
    for (const text of late) notice(text);
    settle();
    await e.status.save().catch(() => undefined);
  }
  bus.publish('run', {
    type: TERMINAL_TYPE[outcome.status],
    status: outcome.status,
    messageId: status.run_id,
    conversationId: status.conversation_id,
    content: outcome.text,
    usedSkills: e.usedSkills,
    usedMcp: e.usedMcp,
    ...(outcome.diagnosis ? { diagnosis: outcome.diagnosis } : {}),
  });
  const lastSeq = bus.lastSeq;
  try {
    e.log.close();
  } catch {
    // the events are written (writeSync); a failing fsync/close does not undo the run
  }
  // a shared store commits in batches: whoever waits for the run must find the terminal event committed
  await e.log.settled?.().catch(() => undefined);
  // after the terminal event nothing more is published: a failed projection is simply absent
  await writeTrace(folder.root, status.run_id).catch(() => undefined);
  return lastSeq;
}
