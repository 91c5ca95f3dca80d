/**
 * One run from `created` to a terminal state: skill activation, capability
 * snapshot, plan/todo, hooks, prompt, tool specs, the agent loop, stop validation and finalisation.
 * A failing stage still ends in finalise(), so a failed run writes status, metrics, events and manifest.
 *
 * Over 400 lines: the stages of a run are read in order here; how a run ends is run-ending.ts, how its
 * record is made run-preparation.ts.
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunStatus } from '../events/agent-event.js';
import { Diagnosis, type DiagnosisDict } from '../events/diagnosis.js';
import { createProcessPipeline, type ProcessPipeline } from '../events/process-pipeline.js';
import { maskSecrets } from '../events/secret-masker.js';
import type { OperationReporter } from '../events/operation-reporter-types.js';
import { describeProvider } from '../providers/resolve-model-provider.js';
import { modelInfo } from '../providers/model-catalog.js';
import { AgentLoop, type LoopOutcome } from './agent-loop.js';
import type { TextFilter } from './agent-turn.js';
import { inputImages } from './input-images.js';
import { PendingWrites } from './pending-writes.js';
import { PlanProgress } from './plan-progress.js';
import type { RunHooks } from './run-hooks.js';
import { RunMetrics } from './run-metrics.js';
import { endRun, type RunOutcome } from './run-ending.js';
import { RUN_FILES } from './run-folder.js';
import type { ModelUsageTotals } from './model-usage-totals.js';
import { publishing, type PublishedEvent, type PublishFn } from './run-publisher.js';
import type { RunRecord } from './run-record.js';
import { buildSystemPrompt } from './system-prompt.js';
import { artifactContractHook, pluginValidatorHooks, requiredOutputHook, runStopHooks } from './stop-validation.js';
import { ToolExecutor } from './tool-executor.js';
import { ApprovalBroker, DEFAULT_APPROVAL_TIMEOUT_S } from './approvals.js';
import { Compactor, providerSummarizer } from './compaction.js';
import { isTerminalRunState, loopStateAfter } from './run-state-machine.js';
import type { ModelProvider } from '../providers/model-provider.js';
import { ModelCallRecorder } from './model-call-recorder.js';
import { LiveCheckpoint } from './live-checkpoint.js';
import { fileCheckpoints, type CheckpointStore } from './checkpoint-store.js';
import { endLeftoverSessions } from './interrupted-runs.js';
import { leftoversRecord } from './run-checkpoint.js';
import type { SandboxPolicy } from '../sandbox/sandbox-policy.js';
import { describeSandbox } from '../sandbox/sandbox-description.js';
import { describeUnsupported, sandboxSupport } from '../sandbox/sandbox-support.js';
import { restartedEvent, resumedEntry, resumedEvent, resumeLoop } from './resumed-attempt.js';

/** What the exec engineer's ProcessRegistry offers the loop (duck-typed to keep runtime → tools light). */
export interface NoticeSource {
  drainNotices(runId: string): string[];
  /** Ends the background sessions a run left behind. */
  killScope?(runId: string): Promise<void>;
  /** Records the run's live process groups in `file` (runtime/processes.json) while they run. */
  trackScope?(runId: string, file: string): void;
  /** Every process the run starts runs in this sandbox; its own record stays read-only inside. */
  sandboxScope?(runId: string, scope: { policy: SandboxPolicy; readOnlyInside?: string[] }): void;
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

function diag(code: string, summary: string, detail = ''): DiagnosisDict {
  return new Diagnosis({ code, severity: 'error', summary, detail }).toDict();
}

class Cancelled extends Error {}

/** The abort reason of a run its process stops (a worker's drain ran out): it fails as interrupted, not cancelled. */
export class RunInterrupted extends Error {}
/**
 * The abort reason of a run its process leaves to be resumed (a server or a worker that stops, the
 * run durable): its bus is sealed first, so nothing of its stopping is published or checkpointed;
 * its files are closed and it is not ended. Its next start, or another worker, resumes it.
 */
export class RunLeft extends Error {}

/** How executeRun returns: the run ended, or (RunLeft) it was left to be resumed. */
export type EngineResult = RunOutcome | 'left';
/** A cancellation with its reason in the user's words (`run cancelled: <reason>` in the run's status). */
export class CancelledBecause extends Error {}
/** The run cannot start its loop (e.g. an MCP server is unavailable): it fails with this diagnosis. */
class StartFailure extends Error {
  constructor(readonly diagnosis: DiagnosisDict) {
    super(diagnosis.summary);
  }
}

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
  const { bus, workspace, plugin, machine } = rec;
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
  // a run that died before its loop began starts again from its request, as the same run
  const restart = rec.durability.restart ?? null;
  if (resume) metrics.restoreResumed(resume);
  if (restart) metrics.resumes = restart.attempt;
  const again = resume ?? restart;
  const startedMs = Date.now() - (again?.usedMs ?? 0);
  let pipeline: ProcessPipeline | null = null;
  let runReporter: OperationReporter | null = null;
  // how the run ends: set by each way out below, then handed to finalise
  let outcome: RunOutcome = { status: 'failed', text: '', diagnosis: null };
  const checkCancel = () => {
    if (rec.abort.signal.aborted) throw new Cancelled();
  };
  const toState = (s: RunStatus) => {
    machine.transition(s);
  };
  // the run itself, as a runtime operation channels can show live
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
  let executor: ToolExecutor | null = null;
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
  const provider = recorder ? recorder.wrap(rec.provider) : rec.provider;
  // the start files are written side by side, and are all on disk before the first model turn
  const startFiles = new PendingWrites();
  const offState = bus.subscribe((ev) => {
    if (ev.stream === 'run' && ev.data.type === 'run.state' && runReporter && !['completed', 'failed', 'cancelled'].includes(ev.data.to)) {
      runReporter.stage(ev.data.to);
    }
  });

  try {
    pipeline = createProcessPipeline({
      dataDir: deps.dataDir,
      sessionId: rec.conversationId,
      publish: (event) => publish('process', { event }),
    });
    runReporter = pipeline.reporter({ operationId: rec.runId, targetType: 'runtime', source: 'runtime' });
    // the operation is the run (its id is on the line already): say what started
    runReporter.start(`${plugin.name} started`);
    rec.statusWriter.started(new Date(startedMs).toISOString());
    // before any tool can spawn: what this run starts is on disk while it lives (a SIGKILL runs no handler)
    deps.processRegistry?.trackScope?.(rec.runId, workspace.folder.path('processes'));
    // its record (runtime/, input/) is Runtrail's: what the run starts can read it, not write or forge it
    deps.processRegistry?.sandboxScope?.(rec.runId, {
      policy: rec.sandbox,
      readOnlyInside: [workspace.runtimeDir, workspace.inputDir, join(workspace.root, 'manifest.json')],
    });
    // a run started again goes on from the state its dead attempt had reached
    if (!resume && machine.state === 'queued') {
      toState('created');
      publish('lifecycle', { phase: 'start', startedAt: startedMs });
    }

    // step 4: skill activation
    const skill = rec.skill;
    startFiles.add(
      workspace.folder.writeJson('skillActivation', {
        run_id: rec.runId,
        skill: skill ? skill.manifest.name : null,
        version: skill ? skill.manifest.version : null,
        reason: skill ? (rec.request.skill ? 'requested' : `default skill of plugin ${plugin.name}`) : 'no skill',
        compatible_plugins: skill?.manifest.compatible_plugins ?? [],
        required_tools: skill?.manifest.required_tools ?? [],
        required_inputs: skill?.manifest.required_inputs ?? [],
        output_artifacts: skill?.manifest.output_artifacts ?? [],
        read_scopes: skill?.manifest.read_scopes ?? null,
        write_scopes: skill?.manifest.write_scopes ?? null,
        granted_skills: rec.grantedSkills.map((g) => ({ name: g.manifest.name, version: g.manifest.version, format: g.format })),
        activated_at: new Date().toISOString(),
      }),
    );
    // step 5: capability snapshot + provider (never a key)
    startFiles.add(
      workspace.folder.writeJson('resolvedConfig', {
        run_id: rec.runId,
        capabilities: rec.capabilities,
        model: describeProvider(rec.provider),
        // what the catalog knows: the window and output limit the context check uses, the prices
        model_info: modelInfo(rec.provider.provider, rec.provider.model),
        reasoning: rec.reasoning ?? 'off',
        limits: rec.limits,
        capture: rec.capture,
        sandbox: describeSandbox(rec.sandbox),
        conversation_id: rec.conversationId,
        declared_tools: rec.tools.map((t) => t.name),
        ...(rec.toolSources?.length ? { tool_sources: rec.toolSources.map((s) => s.describe()) } : {}),
      }),
    );
    checkCancel();
    // where the sandbox cannot start, a run that would start processes fails now, saying what to fix
    if (rec.sandbox.mode === 'on' && rec.tools.some((t) => PROCESS_TOOLS.has(t.name))) {
      const support = sandboxSupport();
      if (!support.ok) throw new StartFailure(diag('sandbox_unavailable', describeUnsupported(support)));
    }

    // step 6: plan, hooks, prompt, tool specs
    if (!resume && machine.state === 'created') toState('planning');
    startFiles.add(
      workspace.folder.writeJson('agentPlan', {
        run_id: rec.runId,
        plugin: plugin.name,
        goal: rec.goal,
        steps: plugin.plan.map((s, i) => ({ n: i + 1, ...s })),
      }),
    );
    const progress = new PlanProgress(rec.runId, plugin.plan, workspace.artifactsDir, (st) => workspace.folder.writeJson('todoState', st), publish);
    if (resume?.point.plan) progress.restore(resume.point.plan);
    startFiles.add(progress.init());
    const planHooks = progress.hooks();
    const hooks: RunHooks = {
      preToolUse: [planHooks.pre, ...(deps.extraHooks?.preToolUse ?? [])],
      postToolUse: [...(deps.extraHooks?.postToolUse ?? []), planHooks.post],
      stop: [
        requiredOutputHook(workspace.artifactsDir, plugin.artifacts),
        artifactContractHook(workspace.artifactsDir, plugin.artifacts),
        ...pluginValidatorHooks(plugin, { runId: rec.runId, input: rec.input, workspace }),
        ...(deps.extraHooks?.stop ?? []),
      ],
    };
    // `ask` tool calls wait here for a person (API, page, IM, CLI) or the approval timeout
    const approvals = new ApprovalBroker({
      publish,
      setState: (s) => {
        if (machine.state !== s) toState(s);
      },
      timeoutMs: (rec.limits.approval_timeout_s ?? DEFAULT_APPROVAL_TIMEOUT_S) * 1000,
      signal: rec.abort.signal,
      ...(resume ? { prior: (id: string) => resume.point.approvals.get(id) } : {}),
    });
    rec.approvals = approvals;
    executor = new ToolExecutor({
      tools: rec.tools,
      allowedTools: rec.capabilities.allowedTools,
      hooks,
      publish,
      signal: rec.abort.signal,
      ...(plugin.permissions ? { permissions: plugin.permissions } : {}),
      requestApproval: (call) => approvals.request(call),
      reporterFor: (call) => pipeline?.reporter({ operationId: safeOpId(call.toolCallId), parentOperationId: rec.runId, targetType: 'tool', source: 'tool' }),
      ...(rec.toolSources?.length ? { sources: rec.toolSources } : {}),
      ...(checkpoint ? { journal: checkpoint.journal } : {}),
    });
    // MCP servers connect here (lazily, shared across runs); one that cannot fails the run before its first turn
    const unavailable = rec.toolSources?.length ? await executor.openSources() : null;
    checkCancel();
    if (unavailable) throw new StartFailure(new Diagnosis(unavailable).toDict());
    const specs = executor.specs();
    const builtSystem = buildSystemPrompt({
      plugin,
      goal: rec.goal,
      input: rec.input,
      tools: specs,
      capabilities: rec.capabilities,
      skill: skill ? { name: skill.manifest.name, version: skill.manifest.version, instructions: skill.instructions } : null,
      grantedSkills: rec.grantedSkills.map((g) => ({ name: g.manifest.name, description: g.manifest.description ?? '' })),
    });
    // a resumed run goes on with the system prompt its model saw
    const system = resume ? resume.point.system : builtSystem;
    if (!resume) startFiles.add(workspace.folder.writeText(RUN_FILES.systemPrompt, system));
    await startFiles.settled();
    checkCancel();

    // step 7: the loop; image file inputs (uploads) go to the model with the goal
    const goalImages = resume ? { notes: [], images: [] } : await inputImages(workspace.root, rec.input, plugin.fileInputs);
    const resumed = resume ? resumeLoop(resume, executor, rec) : null;
    if (restart) rec.inbox.restore(restart.start.queued);
    // a call the dead attempt finished is not run again and publishes nothing: its result counts here
    for (const c of resumed?.calls ?? []) if (c.outcome === 'recorded') metrics.recordTool(c.name, resume?.point.calls.get(c.id)?.result?.ok ?? false, 0);
    const loop = new AgentLoop({
      compactor: compactorFor(rec, { provider, system, publish, planState: () => planText(progress), runReporter }),
      inbox: rec.inbox,
      provider,
      system,
      messages: resumed
        ? resumed.messages
        : [
            ...rec.history,
            { role: 'user', content: [rec.goal, ...goalImages.notes].join('\n'), ...(goalImages.images.length ? { images: goalImages.images } : {}) },
          ],
      ...(resumed ? { resume: resumed.loop } : {}),
      executor,
      publish,
      limits: rec.limits,
      reasoning: rec.reasoning ?? 'off',
      // one key per run: every turn of the loop shares the stable prefix (system prompt + tools)
      cacheKey: `runtrail-${rec.runId}`,
      signal: rec.abort.signal,
      ...(deps.processRegistry ? { drainNotices: () => deps.processRegistry!.drainNotices(rec.runId) } : {}),
      ...(deps.createTextFilter ? { createTextFilter: deps.createTextFilter } : {}),
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
      ...(deps.backoffMs ? { backoffMs: deps.backoffMs } : {}),
      ...(checkpoint ? { onStep: checkpoint.onStep } : {}),
    });
    checkpoint?.begin(system, () => ({
      messages: loop.messages,
      loop: loop.counters(),
      metrics: metrics.snapshot(),
      turns: metrics.takeNewLines(),
      ...(rec.provider.position ? { provider: rec.provider.position() } : {}),
      plan: progress.state(),
    }));
    if (resume && resumed) {
      publish('lifecycle', resumedEvent(resume, resumed));
      // the status on disk may lag the state the dead process had reached: the attempt begins in the
      // state its first step implies, whatever that status says
      machine.enterResumed(resumedEntry(resumed));
    }
    if (restart) publish('lifecycle', restartedEvent(restart));
    try {
      let repairs = rec.limits.stop_repair_turns;
      for (;;) {
        const result: LoopOutcome = await loop.run();
        // the abort's reason decides below whether it ends cancelled or interrupted
        if (result.kind === 'cancelled') {
          outcome = { status: 'cancelled', text: outcome.text, diagnosis: null };
          break;
        }
        if (result.kind === 'failed') {
          outcome = { status: 'failed', text: result.text, diagnosis: result.diagnosis };
          break;
        }
        // step 8: plan check, then stop hooks
        if (machine.state !== 'validating') toState('validating');
        const planReasons = await progress.finalCheck();
        const stop = await runStopHooks(hooks.stop);
        const reasons: string[] = [...planReasons];
        if (planReasons.length) publish('run', { type: 'hook.blocked', hook: 'PlanProgress', reasons: planReasons });
        for (const b of stop.byHook) {
          const msgs = b.issues.map((i) => i.message);
          reasons.push(...msgs);
          publish('run', { type: 'hook.blocked', hook: b.hook, reasons: msgs });
        }
        const byPath = new Map<string, string[]>();
        for (const b of stop.byHook) for (const i of b.issues) if (i.path) byPath.set(i.path, [...(byPath.get(i.path) ?? []), i.message]);
        for (const [path, msgs] of byPath) publish('run', { type: 'artifact.rejected', path, reasons: msgs });
        checkCancel();
        if (reasons.length === 0) {
          outcome = { status: 'completed', text: result.text, diagnosis: null };
          break;
        }
        if (repairs > 0) {
          repairs--;
          loop.addUserMessage(
            `Stop validation failed. Fix these problems with the tools, then give your final answer again:\n${reasons.map((r) => `- ${r}`).join('\n')}`,
          );
          continue;
        }
        outcome = {
          status: 'failed',
          text: result.text,
          diagnosis: diag('validation_failed', `stop validation failed: ${reasons.length} problem(s)`, reasons.slice(0, 20).join('\n')),
        };
        break;
      }
    } finally {
      loop.dispose();
    }
  } catch (e) {
    // a stage that cannot start says why; anything else is the runtime's failure (or the abort's, below)
    outcome =
      e instanceof StartFailure
        ? { status: 'failed', text: '', diagnosis: e.diagnosis }
        : { status: 'failed', text: outcome.text, diagnosis: diag('runtime_error', `run failed: ${(e as Error)?.message ?? String(e)}`) };
  }
  if (rec.abort.signal.reason instanceof RunLeft && bus.sealed) {
    await leave(rec, deps, { startFiles, executor, checkpoint, recorder, pipeline });
    offState();
    offSkills();
    offMcp();
    return 'left';
  }
  if (rec.abort.signal.aborted && outcome.status !== 'completed') outcome = abortedOutcome(rec.abort.signal.reason, rec.machine.state, outcome.text);
  // a run that ended before its first turn: its start files land before it is finalised
  await startFiles.settled().catch(() => undefined);
  await executor?.closeSources();
  await checkpoint?.close();
  const unrecorded = await recorder?.close();
  if (unrecorded) publish('run', { type: 'notice', text: `could not record every model call in runtime/model_calls.jsonl: ${unrecorded}` });
  const ended = await finalise(rec, deps, { ...outcome, metrics, startedMs, pipeline, runReporter });
  offState();
  offSkills();
  offMcp();
  return ended;
}

/**
 * A run left to be resumed: what it recorded is made durable and its files closed, with no ending.
 * What it left running in the background ends now (it would outlive this process otherwise), and its
 * checkpoint says so, so that the resumed model is told which sessions ended and what they printed.
 */
async function leave(
  rec: RunRecord,
  deps: EngineDeps,
  p: {
    startFiles: PendingWrites;
    executor: ToolExecutor | null;
    checkpoint: LiveCheckpoint | null;
    recorder: ModelCallRecorder | null;
    pipeline: ProcessPipeline | null;
  },
): Promise<void> {
  await p.startFiles.settled().catch(() => undefined);
  await p.executor?.closeSources();
  await p.checkpoint?.close();
  await p.recorder?.close();
  const root = rec.workspace.root;
  const ended = await endLeftoverSessions(root);
  if (ended.text || ended.output)
    await (deps.checkpoints ?? fileCheckpoints).note(rec.runId, root, leftoversRecord(ended.text, ended.output), maskSecrets).catch(() => undefined);
  await p.pipeline?.dispose();
  rec.store.close();
  await rec.store.settled?.().catch(() => undefined);
}

/** How an aborted run ends, from the abort's reason: a process that stops fails it `interrupted`; anything else cancels it. */
function abortedOutcome(why: unknown, state: RunStatus, text: string): RunOutcome {
  if (why instanceof RunInterrupted) return { status: 'failed', text, diagnosis: diag('interrupted', `run was interrupted while ${state} (${why.message})`) };
  const summary = why instanceof CancelledBecause ? `run cancelled: ${why.message}` : 'run cancelled';
  return { status: 'cancelled', text, diagnosis: new Diagnosis({ code: 'cancelled', severity: 'warning', summary }).toDict() };
}

/** A compactor when the context window is known (limits.context_tokens, else the model's); else none. */
function compactorFor(
  rec: RunRecord,
  o: { provider: ModelProvider; system: string; publish: PublishFn; planState: () => string; runReporter: OperationReporter | null },
): Compactor | undefined {
  const window = rec.limits.context_tokens ?? modelInfo(rec.provider.provider, rec.provider.model)?.contextWindow ?? null;
  if (!window) return undefined;
  const log = rec.workspace.folder.path('compactions');
  return new Compactor({
    system: o.system,
    window,
    goalIndex: rec.history.length,
    summarize: providerSummarizer(o.provider),
    planState: o.planState,
    publish: o.publish,
    reporter: (n) => o.runReporter?.child({ operationId: `${rec.runId}.compaction.${n}`, targetType: 'runtime', source: 'runtime' }),
    log: (entry) => appendFile(log, maskSecrets(`${JSON.stringify(entry)}\n`)),
  });
}

/** The plan's todos as the compaction summary keeps them. */
function planText(progress: PlanProgress): string {
  return progress
    .state()
    .todos.map((t) => `- [${t.status === 'completed' ? 'x' : ' '}] ${t.title} (${t.status})`)
    .join('\n');
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

/** Step 9, also used for runs cancelled while queued: every file is written, terminal event last.
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
        diagnosis: diag('runtime_error', `run failed while finishing: ${(e as Error)?.message ?? String(e)}`),
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
