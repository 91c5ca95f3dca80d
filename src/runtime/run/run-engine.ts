/**
 * One run from `created` to a terminal state. executeRun reads as the run's stages, in order: the run
 * begun (beginRun), its start records (start-records.ts), the sandbox check, plan and todos (planStage),
 * hooks, approvals and tool executor (toolStage), MCP servers opened, the system prompt
 * (systemPromptStage), the agent loop (agent-loop-start.ts) run until its answer passes stop validation
 * (answer-validation.ts). What the stages share is the run's scope (run-scope.ts). A stage that cannot
 * start the run returns how it ends; one that throws fails it; either way it ends in finalise(), so a
 * failed run writes status, metrics, events and manifest. How a run ends is run-ending.ts, how its
 * record is made run-preparation.ts.
 */
import { join } from 'node:path';
import type { RunStatus } from '../../events/agent-event.js';
import { Diagnosis, type DiagnosisDict } from '../../events/diagnosis.js';
import { cancelled, diagnosis, interrupted, reasonOf, stopOf, type RunStop } from '../errors.js';
import { createProcessPipeline, type ProcessPipeline } from '../../events/process-pipeline.js';
import { maskSecrets } from '../../events/secret-masker.js';
import type { OperationReporter } from '../../events/operation-reporter-types.js';
import type { TextFilter } from '../loop/agent-turn.js';
import { startAgentLoop } from './agent-loop-start.js';
import { runUntilValid } from './answer-validation.js';
import { PlanProgress } from '../loop/plan-progress.js';
import type { RunHooks, StopHook } from '../run-hooks.js';
import type { RunMetrics } from '../metrics/run-metrics.js';
import { endRun, type RunOutcome } from '../storage/run-ending.js';
import { RUN_FILES } from '../storage/run-folder.js';
import type { ModelUsageTotals } from '../metrics/model-usage-totals.js';
import type { RunRecord } from './run-record.js';
import { openRunScope, type RunScope } from './run-scope.js';
import { agentPlanRecord, resolvedConfigRecord, skillActivationRecord } from './start-records.js';
import { buildSystemPrompt } from './system-prompt.js';
import { artifactContractHook, pluginValidatorHooks, requiredOutputHook } from './stop-validation.js';
import { ToolExecutor } from '../loop/tool-executor.js';
import { ApprovalBroker, DEFAULT_APPROVAL_TIMEOUT_S } from '../loop/approvals.js';
import { isTerminalRunState } from '../run-state-machine.js';
import { fileCheckpoints, type CheckpointStore } from '../checkpoint/checkpoint-store.js';
import { endLeftoverSessions } from '../storage/interrupted-runs.js';
import { leftoversRecord } from '../checkpoint/run-checkpoint.js';
import type { SandboxPolicy } from '../../sandbox/sandbox-policy.js';
import { describeUnsupported, sandboxSupport } from '../../sandbox/sandbox-support.js';

/** What the exec engineer's ProcessRegistry offers the loop (duck-typed to keep runtime → tools light). */
export interface NoticeSource {
  drainNotices(runId: string): string[];
  /** Ends the background sessions a run left behind. */
  killScope?(runId: string): Promise<void>;
  /** Records the run's live process groups in `file` (runtime/processes.json) while they run. */
  trackScope?(runId: string, file: string): void;
  /** Every process the run starts runs in this sandbox; its own record stays read-only inside. */
  sandboxScope?(runId: string, scope: { policy: SandboxPolicy; readOnlyInside?: string[]; protectedDirs?: string[] }): void;
}

/** Tools that start processes: a run with one of them cannot start where the sandbox cannot. */
const PROCESS_TOOLS = new Set(['exec', 'process', 'execute_skill']);

export interface EngineDeps {
  dataDir: string;
  extraHooks?: Partial<RunHooks>;
  processRegistry?: NoticeSource;
  createTextFilter?: () => TextFilter;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  backoffMs?: (attempt: number) => number;
  /** How long finishing waits for the run's background processes to end; default 10 s. */
  killScopeTimeoutMs?: number;
  /** Service-wide token and cost counters (/metrics); each model call is added. */
  usageTotals?: ModelUsageTotals;
  /** Where checkpoints go when not to the run folder (several nodes: PostgreSQL). */
  checkpoints?: CheckpointStore;
}

export const DEFAULT_KILL_SCOPE_TIMEOUT_MS = 10_000;

/** A run failed by the runtime itself. */
function runtimeFailure(code: string, summary: string): DiagnosisDict {
  return diagnosis({ code, severity: 'error', summary, detail: '' });
}

/** How executeRun returns: the run ended, or (a `left` stop) it was left to be resumed. */
export type EngineResult = RunOutcome | 'left';
function safeOpId(id: string): string {
  const s = id
    .replace(/[^A-Za-z0-9_.:-]/g, '_')
    .replace(/\.\.+/g, '_')
    .replace(/^\./, '_')
    .slice(0, 200);
  return s || 'op';
}

/**
 * Runs `rec` to its end and returns how it ended, once every file is written and its event log closed.
 * The caller that hosts the run acts on it (frees its slot, answers `rec.done`): the engine does not.
 */
export async function executeRun(rec: RunRecord, deps: EngineDeps): Promise<EngineResult> {
  const run = openRunScope(rec, deps);
  let outcome: RunOutcome;
  try {
    outcome = await runStages(rec, deps, run);
  } catch (e) {
    // anything a stage throws is the runtime's failure (or the abort's, below)
    outcome = { status: 'failed', text: '', diagnosis: runtimeFailure('runtime_error', `run failed: ${(e as Error)?.message ?? String(e)}`) };
  }
  if (stopOf(rec.abort.signal)?.kind === 'left' && rec.bus.sealed) {
    await leave(rec, deps, run);
    run.close();
    return 'left';
  }
  if (rec.abort.signal.aborted && outcome.status !== 'completed') outcome = abortedOutcome(stopOf(rec.abort.signal), rec.machine.state, outcome.text);
  // a run that ended before its first turn: its start files land before it is finalised
  await run.startFiles.settled().catch(() => undefined);
  await run.executor?.closeSources();
  await run.checkpoint?.close();
  const unrecorded = await run.recorder?.close();
  if (unrecorded) run.publish('run', { type: 'notice', text: `could not record every model call in runtime/model_calls.jsonl: ${unrecorded}` });
  const ended = await finalise(rec, deps, { ...outcome, metrics: run.metrics, startedMs: run.startedMs, pipeline: run.pipeline, runReporter: run.runReporter });
  run.close();
  return ended;
}

/** The run's stages in order, to how it ends; a stage that cannot start the run ends it here with its diagnosis. */
async function runStages(rec: RunRecord, deps: EngineDeps, run: RunScope): Promise<RunOutcome> {
  // the run, as a runtime operation channels can show live (the ending closes what was opened)
  run.pipeline = createProcessPipeline({
    dataDir: deps.dataDir,
    sessionId: rec.conversationId,
    publish: (event) => run.publish('process', { event }),
  });
  run.runReporter = run.pipeline.reporter({ operationId: rec.runId, targetType: 'runtime', source: 'runtime' });
  beginRun(rec, deps, run.runReporter, run);
  run.startFiles.add(rec.workspace.folder.writeJson('skillActivation', skillActivationRecord(rec)));
  run.startFiles.add(rec.workspace.folder.writeJson('resolvedConfig', resolvedConfigRecord(rec)));
  checkCancel(rec);
  const noSandbox = sandboxRefusal(rec);
  if (noSandbox) return { status: 'failed', text: '', diagnosis: noSandbox };
  const progress = planStage(rec, run);
  const { stopHooks, executor } = toolStage(rec, deps, run, progress);
  run.executor = executor;
  // MCP servers connect here (lazily, shared across runs); one that cannot fails the run before its first turn
  const unavailable = rec.toolSources?.length ? await executor.openSources() : null;
  checkCancel(rec);
  if (unavailable) return { status: 'failed', text: '', diagnosis: new Diagnosis(unavailable).toDict() };
  const system = await systemPromptStage(rec, run, executor);
  const loop = await startAgentLoop(rec, deps, run, { progress, executor, system });
  try {
    return await runUntilValid(rec, loop, { progress, stopHooks, publish: run.publish });
  } finally {
    loop.dispose();
  }
}

function checkCancel(rec: RunRecord): void {
  if (rec.abort.signal.aborted) throw rec.abort.signal.reason;
}

/** The run says it started (on its operation and in its status); its processes are tracked and sandboxed; it enters `created`. */
function beginRun(rec: RunRecord, deps: EngineDeps, runReporter: OperationReporter, run: RunScope): void {
  const { workspace, machine } = rec;
  // the operation is the run (its id is on the line already): say what started
  runReporter.start(`${rec.plugin.name} started`);
  rec.statusWriter.started(new Date(run.startedMs).toISOString());
  // before any tool can spawn: what this run starts is on disk while it lives (a SIGKILL runs no handler)
  deps.processRegistry?.trackScope?.(rec.runId, workspace.folder.path('processes'));
  // its record (runtime/, input/) is Runtrail's: what the run starts can read it, not write or forge it
  deps.processRegistry?.sandboxScope?.(rec.runId, {
    policy: rec.sandbox,
    readOnlyInside: [workspace.runtimeDir, workspace.inputDir, join(workspace.root, 'manifest.json')],
    // a workdir given with the run may not hold the data dir (the other runs, the uploads, the config beside it)
    protectedDirs: [deps.dataDir],
  });
  // a run started again goes on from the state its dead attempt had reached
  if (!run.resume && machine.state === 'queued') {
    machine.transition('created');
    run.publish('lifecycle', { phase: 'start', startedAt: run.startedMs });
  }
}

/** Where the sandbox cannot start, a run that would start processes cannot start: why, saying what to fix. */
function sandboxRefusal(rec: RunRecord): DiagnosisDict | null {
  if (rec.sandbox.mode !== 'on' || !rec.tools.some((t) => PROCESS_TOOLS.has(t.name))) return null;
  const support = sandboxSupport();
  return support.ok ? null : runtimeFailure('sandbox_unavailable', describeUnsupported(support));
}

/** The run enters `planning`: its plan written, its todos tracked (restored when resumed). */
function planStage(rec: RunRecord, run: RunScope): PlanProgress {
  const { workspace, plugin, machine } = rec;
  if (!run.resume && machine.state === 'created') machine.transition('planning');
  run.startFiles.add(workspace.folder.writeJson('agentPlan', agentPlanRecord(rec)));
  const progress = new PlanProgress(rec.runId, plugin.plan, workspace.artifactsDir, (st) => workspace.folder.writeJson('todoState', st), run.publish);
  if (run.resume?.point.plan) progress.restore(run.resume.point.plan);
  run.startFiles.add(progress.init());
  return progress;
}

/** The run's hooks, its approval broker (rec.approvals) and the executor its tool calls go through. */
function toolStage(rec: RunRecord, deps: EngineDeps, run: RunScope, progress: PlanProgress): { stopHooks: StopHook[]; executor: ToolExecutor } {
  const { workspace, plugin, machine } = rec;
  const { resume, publish } = run;
  const planHooks = progress.hooks();
  const hooks: RunHooks = {
    preToolUse: [planHooks.pre, ...(deps.extraHooks?.preToolUse ?? [])],
    postToolUse: [...(deps.extraHooks?.postToolUse ?? []), planHooks.post],
    stop: [
      requiredOutputHook(workspace.root, plugin.artifacts),
      artifactContractHook(workspace.root, plugin.artifacts),
      ...pluginValidatorHooks(plugin, { runId: rec.runId, input: rec.input, workspace }),
      ...(deps.extraHooks?.stop ?? []),
    ],
  };
  // `ask` tool calls wait here for a person (API, page, IM, CLI) or the approval timeout
  const approvals = new ApprovalBroker({
    publish,
    setState: (s) => {
      if (machine.state !== s) machine.transition(s);
    },
    timeoutMs: (rec.limits.approval_timeout_s ?? DEFAULT_APPROVAL_TIMEOUT_S) * 1000,
    signal: rec.abort.signal,
    ...(resume ? { prior: (id: string) => resume.point.approvals.get(id) } : {}),
  });
  rec.approvals = approvals;
  const executor = new ToolExecutor({
    tools: rec.tools,
    allowedTools: rec.capabilities.allowedTools,
    hooks,
    publish,
    signal: rec.abort.signal,
    ...(plugin.permissions ? { permissions: plugin.permissions } : {}),
    requestApproval: (call) => approvals.request(call),
    reporterFor: (call) => run.pipeline?.reporter({ operationId: safeOpId(call.toolCallId), parentOperationId: rec.runId, targetType: 'tool', source: 'tool' }),
    ...(rec.toolSources?.length ? { sources: rec.toolSources } : {}),
    ...(run.checkpoint ? { journal: run.checkpoint.journal } : {}),
  });
  return { stopHooks: hooks.stop, executor };
}

/** The system prompt the model sees (a resumed run's is the one its model saw), written; every start file is on disk after it. */
async function systemPromptStage(rec: RunRecord, run: RunScope, executor: ToolExecutor): Promise<string> {
  const { plugin, skill } = rec;
  const built = buildSystemPrompt({
    plugin,
    goal: rec.goal,
    input: rec.input,
    tools: executor.specs(),
    capabilities: rec.capabilities,
    skill: skill ? { name: skill.manifest.name, version: skill.manifest.version, instructions: skill.instructions } : null,
    grantedSkills: rec.grantedSkills.map((g) => ({ name: g.manifest.name, description: g.manifest.description ?? '' })),
  });
  const system = run.resume ? run.resume.point.system : built;
  if (!run.resume) run.startFiles.add(rec.workspace.folder.writeText(RUN_FILES.systemPrompt, system));
  await run.startFiles.settled();
  checkCancel(rec);
  return system;
}

/**
 * A run left to be resumed: what it recorded is made durable and its files closed, with no ending.
 * What it left running in the background ends now (it would outlive this process otherwise), and its
 * checkpoint says so, so that the resumed model is told which sessions ended and what they printed.
 */
async function leave(rec: RunRecord, deps: EngineDeps, run: RunScope): Promise<void> {
  await run.startFiles.settled().catch(() => undefined);
  await rec.statusWriter.settle().catch(() => undefined);
  await run.executor?.closeSources();
  await run.checkpoint?.close();
  await run.recorder?.close();
  const root = rec.workspace.root;
  const ended = await endLeftoverSessions(root);
  const checkpoints = deps.checkpoints ?? fileCheckpoints;
  if (ended.text || ended.output) await checkpoints.note(rec.runId, root, leftoversRecord(ended.text, ended.output), maskSecrets).catch(() => undefined);
  // stopped on purpose: the attempt that takes it up is not counted as a crash's (durability.max_resumes)
  const stop = stopOf(rec.abort.signal);
  const why = stop?.kind === 'left' ? stop.why : 'left';
  await checkpoints.note(rec.runId, root, { k: 'left', why, seq: rec.bus.lastSeq, at: Date.now(), usedMs: 0 }).catch(() => undefined);
  await run.pipeline?.dispose();
  rec.store.close();
  await rec.store.settled?.().catch(() => undefined);
}

/** How an aborted run ends, from the abort's reason: a process that stops fails it `interrupted`; anything else cancels it. */
function abortedOutcome(stop: RunStop | null, state: RunStatus, text: string): RunOutcome {
  if (stop?.kind === 'interrupted') return { status: 'failed', text, diagnosis: interrupted(state, stop.why) };
  return { status: 'cancelled', text, diagnosis: cancelled(reasonOf(stop)) };
}

export interface FinaliseInput {
  status: 'completed' | 'failed' | 'cancelled';
  text: string;
  diagnosis: DiagnosisDict | null;
  metrics: RunMetrics;
  startedMs: number;
  pipeline: ProcessPipeline | null;
  runReporter: OperationReporter | null;
}

/** A run's last stage, also used for runs cancelled while queued: every file is written, terminal event last.
 *  Whatever fails in it, the run ends: its status is terminal and its event log closed. Returns how it
 *  ended (a failure while finishing fails it); the host then frees its slot and answers wait(). */
export async function finalise(rec: RunRecord, deps: EngineDeps, f: FinaliseInput): Promise<RunOutcome> {
  try {
    await finaliseRun(rec, deps, f);
    return { status: f.status, text: f.text, diagnosis: f.diagnosis };
  } catch (e) {
    if (!isTerminalRunState(rec.status.status)) {
      rec.statusWriter.ended({
        status: 'failed',
        finished_at: new Date().toISOString(),
        final_answer: f.text,
        diagnosis: runtimeFailure('runtime_error', `run failed while finishing: ${(e as Error)?.message ?? String(e)}`),
        last_seq: rec.bus.lastSeq,
      });
    }
    await rec.statusWriter.save().catch(() => undefined);
    try {
      rec.store.close();
    } catch {
      // already reported by the failure above
    }
    await rec.store.settled?.().catch(() => undefined);
    const status = rec.status.status;
    // the status is terminal here (set above when finishing failed before the machine's transition)
    return { status: isTerminalRunState(status) ? (status as RunOutcome['status']) : 'failed', text: rec.status.final_answer, diagnosis: rec.status.diagnosis };
  }
}

async function finaliseRun(rec: RunRecord, deps: EngineDeps, f: FinaliseInput): Promise<void> {
  const { machine } = rec;
  if (!machine.isTerminal) machine.transition(f.status);
  const endedMs = Date.now();
  await endRun({
    folder: rec.workspace.folder,
    bus: rec.bus,
    log: rec.store,
    status: rec.statusWriter,
    outcome: { status: f.status, text: f.text, diagnosis: f.diagnosis },
    endedMs,
    contract: rec.plugin.artifacts,
    skill: rec.capabilities.skill,
    usedSkills: [...(rec.skill ? [rec.skill.manifest.name] : []), ...rec.usedSkills.filter((n) => n !== rec.skill?.manifest.name)],
    usedMcp: rec.usedMcp ?? [],
    metrics: (lastSeq) => ({
      file: f.metrics.toFile({ runId: rec.runId, status: f.status, durationMs: endedMs - f.startedMs, stages: machine.durations, events: lastSeq }),
      turnLines: f.metrics.turnLines(),
    }),
    beforeLifecycle: async (notice) => {
      await endBackgroundProcesses(rec, deps, notice);
      if (f.runReporter) {
        if (f.status === 'completed') f.runReporter.complete(`run completed`);
        else if (f.status === 'cancelled') f.runReporter.cancel('run cancelled');
        else f.runReporter.fail(f.diagnosis?.summary ?? 'run failed');
      }
    },
    alongside: f.pipeline?.dispose(),
  });
}

/** Ends what the run left running in the background; a process that will not die must not keep the run from ending. */
async function endBackgroundProcesses(rec: RunRecord, deps: EngineDeps, notice: (text: string) => void): Promise<void> {
  const registry = deps.processRegistry;
  if (!registry?.killScope) return;
  const ms = deps.killScopeTimeoutMs ?? DEFAULT_KILL_SCOPE_TIMEOUT_MS;
  let timer: NodeJS.Timeout | undefined;
  const tooLate = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`they did not end within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([registry.killScope(rec.runId), tooLate]);
  } catch (e) {
    notice(`could not finish background processes: ${(e as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}
