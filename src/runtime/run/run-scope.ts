/**
 * What one run holds while its stages run: its metrics and the publish function that follows its
 * state, where it resumes or restarts from, its checkpoint and model-call recorder, the start files
 * still being written, and what the stages open that its ending must close (pipeline, reporter, tool
 * executor). Opened by executeRun before its first stage; close() drops its bus subscriptions once
 * the run has ended or been left.
 */
import type { OperationReporter } from '../../events/operation-reporter-types.js';
import type { ProcessPipeline } from '../../events/process-pipeline.js';
import type { ModelProvider } from '../../providers/model-provider.js';
import type { CheckpointStore } from '../checkpoint/checkpoint-store.js';
import { LiveCheckpoint } from '../checkpoint/live-checkpoint.js';
import { ModelCallRecorder } from '../model-calls/model-call-recorder.js';
import type { ModelUsageTotals } from '../metrics/model-usage-totals.js';
import { PendingWrites } from '../storage/pending-writes.js';
import type { RestartStart, ResumeStart } from './resumed-attempt.js';
import { RunMetrics } from '../metrics/run-metrics.js';
import { publishing, type PublishedEvent, type PublishFn } from '../run-publisher.js';
import type { RunRecord } from './run-record.js';
import { loopStateAfter } from '../run-state-machine.js';
import type { ToolExecutor } from '../loop/tool-executor.js';

export interface RunScope {
  metrics: RunMetrics;
  publish: PublishFn;
  /** A resumed run goes on from its dead attempt's checkpoint. */
  resume: ResumeStart | null;
  /** A run that died before its loop began starts again from its request, as the same run. */
  restart: RestartStart | null;
  /** When the run started; a run started again counts the time its dead process ran. */
  startedMs: number;
  checkpoint: LiveCheckpoint | null;
  recorder: ModelCallRecorder | null;
  /** The run's provider, its calls recorded when the recorder is on. */
  provider: ModelProvider;
  /** The start files are written side by side, and are all on disk before the first model turn. */
  startFiles: PendingWrites;
  /** Set by the stage that makes each (null until then): the ending closes what was made. */
  pipeline: ProcessPipeline | null;
  runReporter: OperationReporter | null;
  executor: ToolExecutor | null;
  /** Drops the scope's bus subscriptions. */
  close(): void;
}

export function openRunScope(rec: RunRecord, deps: { usageTotals?: ModelUsageTotals; checkpoints?: CheckpointStore }): RunScope {
  const { bus, workspace, machine } = rec;
  const metrics = new RunMetrics(deps.usageTotals);
  rec.metrics = metrics;
  // the run's metrics and its state (model_thinking ⇄ tool_executing) follow the events its loop and
  // tools publish, read before the bus carries each: the state change is published ahead of the model
  // call or tool call that made it (a bus subscriber publishing it would hand the subscribers after
  // it the two events out of seq order)
  const follow = (e: PublishedEvent): void => {
    metrics.follow(e);
    const state = loopStateAfter(e);
    if (state && machine.state !== state) machine.transition(state);
  };
  const publish: PublishFn = publishing(follow, (stream, data) => void bus.publish(stream, data));
  // a resumed run goes on with its counters, and its clock counts the time its dead process ran
  const resume = rec.durability.resume ?? null;
  const restart = rec.durability.restart ?? null;
  if (resume) metrics.restoreResumed(resume);
  if (restart) metrics.resumes = restart.attempt;
  const again = resume ?? restart;
  const startedMs = Date.now() - (again?.usedMs ?? 0);
  // compute skills the model ran (skill-kind tool calls) count as used skills on the `done` frame
  const offSkills = bus.subscribe((ev) => {
    if (ev.stream !== 'tool' || ev.data.phase !== 'start' || ev.data.kind !== 'skill') return;
    const args = ev.data.args as { skill?: unknown } | null;
    const name = args && typeof args.skill === 'string' ? args.skill : ev.data.name;
    if (!rec.usedSkills.includes(name)) rec.usedSkills.push(name);
  });
  // MCP servers the model called, in order of first use (`done.used_mcp`)
  const offMcp = bus.subscribe((ev) => {
    if (ev.stream !== 'tool' || ev.data.phase !== 'start' || ev.data.kind !== 'mcp' || !ev.data.server) return;
    const used = (rec.usedMcp ??= []);
    if (!used.includes(ev.data.server)) used.push(ev.data.server);
  });
  // what the run needs to go on after its process dies, written as it goes (an agent that says
  // `durability: interrupt` has none)
  const checkpoint = rec.durability.checkpoint
    ? new LiveCheckpoint(
        workspace.root,
        bus,
        resume?.point ?? null,
        again ? { attempt: again.attempt, fromSeq: resume ? resume.point.seq : again.lastSeq, usedMs: again.usedMs } : undefined,
        deps.checkpoints,
      )
    : null;
  // every model call of the run (loop turns, compaction summaries) in runtime/model_calls.jsonl, unless turned off
  const recorder = rec.capture.model_io
    ? new ModelCallRecorder({
        root: workspace.root,
        traceId: rec.status.trace_id ?? '',
        subscribe: (fn) => bus.subscribe(fn),
        maxCallBytes: rec.capture.max_call_bytes,
        calls: rec.modelCalls,
      })
    : null;
  const scope: RunScope = {
    metrics,
    publish,
    resume,
    restart,
    startedMs,
    checkpoint,
    recorder,
    provider: recorder ? recorder.wrap(rec.provider) : rec.provider,
    startFiles: new PendingWrites(),
    pipeline: null,
    runReporter: null,
    executor: null,
    close: () => {
      offState();
      offSkills();
      offMcp();
    },
  };
  // the run itself, as a runtime operation channels can show live: each state it enters is a stage
  const offState = bus.subscribe((ev) => {
    if (ev.stream === 'run' && ev.data.type === 'run.state' && scope.runReporter && !['completed', 'failed', 'cancelled'].includes(ev.data.to)) {
      scope.runReporter.stage(ev.data.to);
    }
  });
  return scope;
}
