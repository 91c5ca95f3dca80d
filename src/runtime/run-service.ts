/**
 * RunService: the front of a run's core. It admits a request (run-admission.ts checks it), has the run
 * prepared (run-preparation.ts), queues it under a concurrency limit, hosts it while the engine runs it
 * (run-engine.ts, which ends every run through run-ending.ts), recovers runs a crash or a dead worker
 * left (run-store.ts, interrupted-runs.ts), and serves status, events and documents.
 *
 * Over 400 lines: admission, hosting and the public API still share the map of live runs and the
 * queue's reservations, so they stay in this one class for now; preparation and ending are out.
 */
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { AgentEvent, DecisionSource, RunStatus } from '../events/agent-event.js';
import type { StepApproval } from '../events/engine-event.js';
import { Diagnosis } from '../events/diagnosis.js';
import { ThinkingTagFilter } from '../events/thinking-tag-filter.js';
import { registerEnvSecrets } from '../events/secret-masker.js';
import type { ChatMessage } from '../providers/model-provider.js';
import { resolveModelProvider, type ModelSpec } from '../providers/resolve-model-provider.js';
import { loadSkill } from '../skills/skill-loader.js';
import { defaultProcessRegistry } from '../tools/default-process-registry.js';
import { holdSignalForwarding } from '../tools/signal-bridge.js';
import type { TextFilter } from './agent-loop.js';
import { DEFAULT_LIMITS } from './agent-loop.js';
import type { Agent } from './agent.js';
import type { ParsedCreateRunRequest } from './create-run-request.js';
import { defaultDataDir } from './data-dir.js';
import { ownerOnlyDataDir, ownerOnlyUmask } from './owner-only.js';
import { defaultSkillsDir } from './package-root.js';
import { AgentRegistry, type AgentSource } from './agent-registry.js';
import {
  activeSkill,
  checkedInput,
  checkInputFiles,
  checkRequestedLimits,
  chooseModel,
  fileInputSources,
  ownLimits,
  grantedSkills,
  parseRunRequest,
  pluginOf,
  providerFor,
  type ProviderResolver,
} from './run-admission.js';
import { confinePath, isInside, realpathLoose } from '../tools/confine-path.js';
import { CancelledBecause, executeRun, finalise, RunInterrupted, type NoticeSource } from './run-engine.js';
import { endLeftovers, interruptInSharedStore, markInterrupted, ownedByLiveProcess } from './interrupted-runs.js';
import { RunFolder } from './run-folder.js';
import { prepareRun, type ParentLink, type PreparationHost, type RunSpec } from './run-preparation.js';
import type { RunHooks } from './run-hooks.js';
import { createRunId, isRunId } from './run-id.js';
import { RunMetrics } from './run-metrics.js';
import { ModelUsageTotals } from './model-usage-totals.js';
import type { RunRecord } from './run-record.js';
import { RunRequestError } from './run-request-error.js';
import type { CreateRunOptions, RunLimits, RunListQuery, RunObserver, RunServiceApi, RunServiceStats, RunStatusFile } from './run-service-types.js';
import { runTraceContext } from '../events/trace-context.js';
import { isTerminalRunState } from './run-state-machine.js';
import { reserveRunFolder } from './run-workspace.js';
import type { MessageMode } from './run-inbox.js';
import { LocalRunQueue, type RunQueue } from './run-queue.js';
import { LocalRunStore, type RunStore } from './run-store.js';
import { afterCheck } from './after-check.js';
import { LocalEventFanout, type EventFanout } from './event-fanout.js';
import type { SubagentHost } from './subagent-tool.js';
import { resolveCapture, type CaptureSettings } from './capture-settings.js';
import { resolveSandboxPolicy, withBaseDir, type OperatorSandboxSettings } from '../sandbox/sandbox-policy.js';
import { DEFAULT_DURABILITY, planResume, type DurabilitySettings } from './run-resume.js';
import { CHECKPOINT_FILE, noteLeftovers } from './run-checkpoint.js';
import { EVENTS_FILE, repairEventsFile } from './event-store.js';
import type { DiagnosisDict } from '../events/diagnosis.js';

/** A subagent's parent: its run, and the run_agent call that started it. */
export type { ProviderResolver };

export interface RunServiceOptions {
  /** default RUNTRAIL_DATA_DIR or ./.runtrail */
  dataDir?: string;
  // the registry holds plugins of many input types; each validates its own input
  // biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
  plugins?: Agent<any>[]; // any: input types differ per plugin, checked by plugin.inputSchema
  /** Instead of `plugins`: a source asked at each create (the extension registry, refreshed by `serve --watch`). */
  pluginSource?: AgentSource;
  /** default: the package's skills/ folder */
  skillsDir?: string;
  /** Where skills are looked up, first wins (project, user, builtin); default [skillsDir]. */
  skillDirs?: string[];
  /** The project's config.json, read at each create: `model` when neither the request nor the agent names
   *  one and RUNTRAIL_MODEL is unset; `limits` under the agent's and the request's. */
  defaults?: () => {
    model?: string;
    limits?: Partial<RunLimits>;
    request_limits?: Partial<RunLimits>;
    capture?: CaptureSettings;
    sandbox?: OperatorSandboxSettings;
    durability?: Partial<DurabilitySettings>;
  };
  /** `serve` and `worker`: at init, resume every run whose process died and that can be resumed
   *  (the CLI leaves them for `runtrail resume` or `run --resume`). */
  resumeOnStart?: boolean;
  concurrency?: number;
  /** Runs allowed to wait for a slot; past it create() throws queue_full. Default 100. */
  maxQueue?: number;
  /** Where runs wait for a worker; default the in-process queue (concurrency, maxQueue). */
  queue?: RunQueue;
  /** Run records and event logs; default the run folders of the data dir. */
  store?: RunStore;
  /** Live events to readers; default the runs' buses in this process. */
  fanout?: EventFanout;
  /** A shared queue: how often queued runs it lost (Redis flushed or restarted) are looked for; default 10 s. */
  reconcileMs?: number;
  /** Several nodes: whether the worker that claimed a run is gone (its presence file stopped beating).
   *  The reconciler interrupts such runs even when the queue forgot them (Redis flushed). */
  workerGone?: (runId: string) => Promise<boolean>;
  /** A worker that drains on SIGTERM: the signal is not forwarded to its runs' commands, which finish
   *  with their runs (drain() interrupts what is left, and that ends them). */
  drainsOnSignal?: boolean;
  /** Where file inputs may come from: 'any' (the CLI) or folders (server default <dataDir>/uploads). */
  inputRoots?: string[] | 'any';
  env?: Record<string, string | undefined>;
  /** Base for relative file inputs and script paths; default process.cwd(). */
  cwd?: string;
  /** Throws RunRequestError (or any Error) when the model spec cannot be served. */
  providerResolver?: ProviderResolver;
  hooks?: Partial<RunHooks>;
  /** Background-process registry: exit notices before each model turn, its sessions ended with the run.
   *  Default: the process-wide defaultProcessRegistry(); null for none. */
  processRegistry?: NoticeSource | null;
  createTextFilter?: () => TextFilter;
  /** Tests: replace the provider-retry backoff. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  backoffMs?: (attempt: number) => number;
  /** How long a finishing run waits for its background processes to end; default 10 s. */
  killScopeTimeoutMs?: number;
  /** Told of each run before its first event, with its bus (tracing subscribes here). */
  observers?: RunObserver[];
}

export const defaultProviderResolver: ProviderResolver = (spec, opts) => {
  const r = resolveModelProvider(spec, { offlineProcedure: opts.offlineProcedure, env: opts.env, cwd: opts.cwd, allowSpecBaseURL: false });
  if (r.ok) return r.provider;
  const d = r.diagnosis;
  const sentence = (t: string) => (/[.!?]$/.test(t.trim()) ? t.trim() : `${t.trim()}.`);
  const msg = [d.summary, d.detail, d.hint]
    .filter((t): t is string => Boolean(t?.trim()))
    .map(sentence)
    .join(' ');
  throw new RunRequestError(d.code === 'invalid_request' ? 'invalid_request' : 'incompatible', msg, { issues: [{ path: 'model', message: d.summary }] });
};

export class RunService implements RunServiceApi {
  readonly dataDir: string;
  readonly runsDir: string;
  readonly skillsDir: string;
  readonly skillDirs: string[];
  readonly registry: AgentSource;
  private readonly inputRoots: string[] | 'any';
  private readonly env: Record<string, string | undefined>;
  private readonly cwd: string;
  private readonly resolver: ProviderResolver;
  readonly store: RunStore;
  private readonly fanout: EventFanout;
  private reconciler: NodeJS.Timeout | undefined;
  private releaseSignals: (() => void) | null = null;
  private readonly live = new Map<string, RunRecord>();
  private readonly queue: RunQueue;
  /** Accepted creates not yet queued (between the capacity check and the enqueue there are awaits). */
  private reserving = 0;
  /** the run folders of this data dir, when they are the store (runs are resumed from them) */
  private readonly local: LocalRunStore | null;
  private initDone: Promise<void> | null = null;
  /** What preparation needs of this service. */
  private readonly preparation: PreparationHost;
  private eventsPublished = 0;
  private readonly usageTotals = new ModelUsageTotals();
  private closed = false;
  private dataDirClosed: Promise<void> | null = null;

  constructor(private readonly opts: RunServiceOptions) {
    this.dataDir = resolve(opts.dataDir ?? defaultDataDir(opts.env ?? process.env));
    this.runsDir = join(this.dataDir, 'runs');
    this.skillsDir = resolve(opts.skillsDir ?? defaultSkillsDir());
    this.skillDirs = opts.skillDirs?.map((d) => resolve(d)) ?? [this.skillsDir];
    this.registry = opts.pluginSource ?? new AgentRegistry(opts.plugins ?? []);
    const maxQueue = Math.max(0, opts.maxQueue ?? 100);
    this.queue = opts.queue ?? new LocalRunQueue(Math.max(1, opts.concurrency ?? 4), maxQueue);
    this.inputRoots = opts.inputRoots ?? [join(this.dataDir, 'uploads')];
    this.env = opts.env ?? process.env;
    // the keys and tokens the service's environment holds are masked in all its runs write and send
    registerEnvSecrets(this.env);
    ownerOnlyUmask();
    this.cwd = opts.cwd ?? process.cwd();
    this.resolver = opts.providerResolver ?? defaultProviderResolver;
    const local = new LocalRunStore(
      this.runsDir,
      (p) => this.registry.get(p)?.artifacts ?? [],
      (id) => this.live.has(id),
      (s) => this.crashVerdict(s),
    );
    this.local = opts.store ? null : local;
    this.store = opts.store ?? local;
    this.fanout =
      opts.fanout ??
      new LocalEventFanout(
        this.runsDir,
        (id) => this.live.get(id),
        async (id) => {
          const s = await local.readStatusFile(id);
          return s !== null && !isTerminalRunState(s.status) && (await ownedByLiveProcess(this.runsDir, id));
        },
      );
    this.queue.process((runId, release) => this.runClaimed(runId, release));
    // a cancel sent to any node reaches the worker that runs it
    this.queue.onCancel((runId) => this.live.get(runId)?.abort.abort(new Error('cancelled')));
    this.queue.onStalled?.((runId) => void this.interruptOrphan(runId, 'its worker stopped (lost or killed)').catch(() => undefined));
    if (opts.drainsOnSignal) this.releaseSignals = holdSignalForwarding();
    if (this.queue.shared && this.store.queuedRuns) {
      this.reconciler = setInterval(() => void this.reconcile().catch(() => undefined), opts.reconcileMs ?? 10_000);
      this.reconciler.unref();
    }
    this.preparation = {
      runsDir: this.runsDir,
      dataDir: this.dataDir,
      env: this.env,
      store: this.store,
      observers: opts.observers ?? [],
      historyFor: (c) => this.historyFor(c),
      childArtifact: (rec, rest) => this.childArtifact(rec, rest),
      subagentHost: (parentOf, front) => this.subagentHost(parentOf, front),
      persistStatus: (rec) => this.persistStatus(rec),
      countEvent: () => void this.eventsPublished++,
    };
  }

  pluginNames(): string[] {
    return this.registry.names();
  }

  getPlugin(name: string): Agent<Record<string, unknown>> | undefined {
    return this.registry.get(name);
  }

  /** Loads existing runs; runs a crash left live become failed (`interrupted`) with a terminal event. Idempotent. */
  init(): Promise<void> {
    this.dataDirClosed ??= ownerOnlyDataDir(this.dataDir).catch(() => undefined);
    this.initDone ??= this.dataDirClosed.then(async () => {
      await this.store.init();
      if (!this.opts.resumeOnStart) return;
      const resumable = new Set(this.local?.resumable ?? []);
      for (const id of resumable) {
        // a subagent whose parent is resumed too is taken up by the parent's run_agent call, which waits for it
        const parent = (await this.store.get(id))?.parent_run_id;
        if (parent && resumable.has(parent)) continue;
        await this.resumeNow(id);
      }
    });
    return this.initDone;
  }

  private durability(): DurabilitySettings {
    return { ...DEFAULT_DURABILITY, ...this.opts.defaults?.().durability };
  }

  /** A run whose process died: null when it can be resumed, else why it ends interrupted. */
  private async crashVerdict(status: RunStatusFile): Promise<DiagnosisDict | null> {
    const root = join(this.runsDir, status.run_id);
    repairEventsFile(join(root, EVENTS_FILE));
    const plugin = this.registry.get(status.plugin);
    const d = await planResume(root, status, { settings: this.durability(), agentDurability: plugin ? (plugin.durability ?? 'resume') : null });
    if (d.kind === 'interrupt') return d.diagnosis;
    // the dead process's background sessions end now, not when (or if) the run is resumed
    const ended = await endLeftovers(root);
    if (ended) noteLeftovers(join(root, CHECKPOINT_FILE), ended);
    return null;
  }

  /** Runs whose process died and that `resume` would take up. */
  resumableRuns(): string[] {
    return [...(this.local?.resumable ?? [])].filter((id) => !this.live.has(id));
  }

  /**
   * Takes up a run whose process died, from its checkpoint: same run_id, folder and event stream.
   * A run that cannot be resumed (no or a damaged checkpoint, too many resumes, its agent says
   * interrupt) ends `interrupted` saying why; either way the run's status is returned.
   */
  async resume(runId: string): Promise<RunStatusFile> {
    await this.init();
    if (this.closed) this.fail('wrong_state', 'the run service is closed');
    if (this.live.has(runId)) this.fail('wrong_state', `run ${runId} is running in this process`);
    const status = await this.store.get(runId);
    if (!status) this.fail('not_found', `run ${runId} not found`);
    if (isTerminalRunState(status.status))
      this.fail('wrong_state', `run ${runId} is already ${status.status}: only a run whose process died can be resumed`, { status: status.status });
    if (await ownedByLiveProcess(this.runsDir, runId))
      this.fail('wrong_state', `run ${runId} is running in another runtrail process (pid in its runtime/owner.json)`, {
        status: status.status,
        elsewhere: true,
      });
    await this.resumeNow(runId);
    return (await this.get(runId)) ?? status;
  }

  /** The subagent run `parent`'s call `toolCallId` started before its process died (resumed beside the
   *  parent's queue slot when it died too), or null when the call started none. */
  private async childOfCall(parent: RunRecord, toolCallId: string): Promise<RunStatusFile | null> {
    if (!toolCallId) return null;
    for (const id of parent.children) {
      const s = this.live.get(id)?.status ?? (await this.store.get(id));
      if (s?.parent_tool_call_id !== toolCallId) continue;
      if (!isTerminalRunState(s.status) && !this.live.has(id)) await this.resumeNow(id, { beside: true });
      return { ...(this.live.get(id)?.status ?? (await this.store.get(id)) ?? s) };
    }
    return null;
  }

  /** Resumes under way, by run: a run is taken up once even when its parent's call and a person ask together. */
  private readonly resuming = new Map<string, Promise<void>>();

  private resumeNow(runId: string, o: { beside?: boolean } = {}): Promise<void> {
    let p = this.resuming.get(runId);
    if (!p) {
      p = this.resumeOnce(runId, o).finally(() => this.resuming.delete(runId));
      this.resuming.set(runId, p);
    }
    return p;
  }

  private async resumeOnce(runId: string, o: { beside?: boolean }): Promise<void> {
    this.local?.resumable.delete(runId);
    const status = await this.store.get(runId);
    if (!status || isTerminalRunState(status.status) || this.live.has(runId)) return;
    const root = join(this.runsDir, runId);
    const plugin = this.registry.get(status.plugin);
    const interrupt = async (why: DiagnosisDict) => {
      await markInterrupted(this.runsDir, status, plugin?.artifacts ?? [], why).catch(() => undefined);
      this.store.note(status);
    };
    try {
      repairEventsFile(join(root, EVENTS_FILE));
      const d = await planResume(root, status, { settings: this.durability(), agentDurability: plugin ? (plugin.durability ?? 'resume') : null });
      if (d.kind === 'interrupt') return await interrupt(d.diagnosis);
      // what the dead process left running ends before the run goes on
      const told = d.kind === 'resume' ? d.point.leftovers : d.start.leftovers;
      const leftovers = [...told, await endLeftovers(root)].filter(Boolean).join('; ');
      const rec = await this.hydrate(runId);
      if (!rec) return;
      rec.durability = d.kind === 'resume' ? { checkpoint: true, resume: { ...d, leftovers } } : { checkpoint: true, restart: { ...d, leftovers } };
      this.store.note(rec.status);
      // a subagent runs beside its parent's queue slot, as when it was started
      if (o.beside) void this.execute(rec);
      else await this.queue.enqueue(runId);
    } catch (e) {
      this.live.delete(runId);
      await interrupt(
        new Diagnosis({
          code: 'interrupted',
          severity: 'error',
          summary: `run was interrupted while ${status.status} and could not be resumed: ${(e as Error)?.message ?? String(e)}`,
          hint: 'start the run again',
        }).toDict(),
      );
    }
  }

  private fail(code: ConstructorParameters<typeof RunRequestError>[0], message: string, details: ConstructorParameters<typeof RunRequestError>[2] = {}): never {
    throw new RunRequestError(code, message, details);
  }

  async create(raw: unknown, opts: CreateRunOptions = {}): Promise<RunStatusFile> {
    return this.admit(raw, opts, null);
  }

  /** The admission steps, then the run; a subagent's (`parent` set) reads its file inputs from the
   *  parent's run folder and starts at once, beside the queue its parent holds a slot of. */
  private async admit(raw: unknown, opts: CreateRunOptions, parent: ParentLink | null): Promise<RunStatusFile> {
    await this.init();
    if (this.closed) this.fail('wrong_state', 'the run service is closed');
    const req = parseRunRequest(raw, this.registry);
    const plugin = pluginOf(req, this.registry);
    const input = checkedInput(plugin, req);
    const scope = parent ? { cwd: parent.rec.workspace.root, inputRoots: [parent.rec.workspace.root] } : { cwd: this.cwd, inputRoots: this.inputRoots };
    const sources = fileInputSources(plugin, input, scope);
    await checkInputFiles(plugin, input, sources);
    const skill = await activeSkill(plugin, req, this.skillDirs);
    const skills = await grantedSkills(plugin, this.skillDirs);
    const defaults = this.opts.defaults?.() ?? {};
    if (opts.fromNetwork) checkRequestedLimits(req.limits, ownLimits(plugin, defaults.limits), defaults.request_limits);
    const model = chooseModel(plugin, req, { cwd: this.cwd, env: this.env, ...(defaults.model ? { defaultModel: defaults.model } : {}) });
    const provider = providerFor(plugin, model, { env: this.env, resolver: this.resolver });
    // step 7, capacity: running + waiting + accepted-but-not-yet-queued (concurrent creates) within concurrency + maxQueue
    // several nodes: nothing is written while the database is away (the API answers 503)
    await this.store.ping?.();
    if (!parent && !(await this.queue.hasRoom(this.reserving))) {
      this.fail('queue_full', `the run queue is full (${maxQueueOf(this.opts)} waiting); try again later`, { maxQueue: maxQueueOf(this.opts) });
    }

    this.reserving++;
    let counted = true;
    const unreserve = () => {
      if (counted) this.reserving--;
      counted = false;
    };
    let runId: string | null = null;
    try {
      runId = await reserveRunFolder(this.runsDir, createRunId);
      return await this.createReserved(runId, { req, plugin, input, sources, skill, skills, provider, model }, unreserve, opts, parent);
    } catch (e) {
      unreserve();
      // the run never started: give its id back, and leave no record of it (no phantom `queued` run)
      if (runId) {
        this.live.delete(runId);
        await this.store.forget(runId).catch(() => undefined);
        await rm(join(this.runsDir, runId), { recursive: true, force: true }).catch(() => undefined);
      }
      throw e;
    }
  }

  private async createReserved(
    runId: string,
    p: Pick<RunSpec, 'req' | 'plugin' | 'input' | 'sources' | 'skill' | 'skills' | 'provider' | 'model'>,
    /** called just before the run joins the queue (it then counts there) */
    onQueued: () => void,
    front: CreateRunOptions = {},
    parent: ParentLink | null = null,
  ): Promise<RunStatusFile> {
    const { req, plugin } = p;
    const spec: RunSpec = {
      ...p,
      goal: req.goal?.trim() ? req.goal.trim() : plugin.defaultGoal,
      // a subagent works in its parent's conversation
      conversationId: parent?.rec.conversationId ?? req.conversation_id ?? runId,
      tenantId: req.tenant_id ?? null,
      limits: { ...DEFAULT_LIMITS, ...this.opts.defaults?.().limits, ...plugin.limits, ...(req.limits ?? {}) },
      reasoning: req.reasoning ?? 'off',
      capture: resolveCapture(this.opts.defaults?.().capture, plugin.capture),
      // relative read/write paths are the project's: made absolute here, so the run's record holds them as they apply
      sandbox: withBaseDir(resolveSandboxPolicy(this.opts.defaults?.().sandbox, plugin.sandbox), this.opts.cwd ?? process.cwd()),
      requested: { model: req.model ?? null, limits: req.limits ?? {}, skill: req.skill ?? null },
      // a subagent is part of its parent's trace: its run span goes under the parent's invoke_agent span
      trace: parent
        ? { traceId: parent.rec.status.trace_id || runTraceContext().traceId, parentSpanId: null, sampled: true }
        : runTraceContext(front.traceparent),
      claw: front.claw ?? '',
      depth: parent ? parent.rec.depth + 1 : 1,
      ...(front.trigger ? { trigger: front.trigger } : {}),
      ...(front.webhook ? { webhook: front.webhook } : {}),
    };
    const rec = await prepareRun(this.preparation, runId, spec, parent, null);
    return this.announce(rec, onQueued, parent);
  }

  /** A new run made known: input/request.json, its first events, its status, then the queue (or, for a
   *  subagent, started at once). A shared queue's worker rebuilds the run from these files. */
  private async announce(rec: RunRecord, onQueued: () => void, parent: ParentLink | null): Promise<RunStatusFile> {
    const { runId, workspace, store, bus, status, plugin } = rec;
    if (this.closed) {
      // close() came while this create was on its way: it cancelled the live runs it saw, so this one
      // must not start after it (create() removes the folder); the refusal returns once its events
      // file is closed, so no refused run holds a descriptor
      store.close();
      await store.settled?.();
      this.fail('wrong_state', 'the run service is closed');
    }
    bus.publish('run', {
      type: 'run.created',
      runId,
      plugin: plugin.name,
      goal: rec.goal,
      conversationId: rec.conversationId,
      ...(status.trigger ? { trigger: status.trigger } : {}),
    });
    status.last_seq = bus.lastSeq + 1;
    bus.publish('run', { type: 'run.state', from: null, to: 'queued' });
    this.store.note(status);
    const here = parent !== null || !this.queue.shared;
    // the request file, the owner and the status in one round of writes; a run whose request file cannot
    // be written is refused (create removes its folder), a status write that fails is retried by the next
    const statusWritten = this.persistStatus(rec).catch(() => undefined);
    try {
      await Promise.all([workspace.folder.writeRequest(rec.request), workspace.folder.writeOwner(), statusWritten]);
    } catch (e) {
      store.close();
      // the run never existed: its status (in memory, in a shared store) goes with its folder, and its
      // events file is closed (fsync and close run off the main thread) before the refusal returns
      await Promise.all([statusWritten, store.settled?.()]);
      await this.store.forget(runId).catch(() => undefined);
      throw e;
    }
    // a worker elsewhere will claim it: this node keeps nothing of it open
    if (here) this.live.set(runId, rec);
    if (!here) {
      store.close();
      await store.settled?.();
    }
    onQueued();
    const snapshot = { ...status };
    if (parent) {
      parent.rec.children.push(runId);
      parent.rec.status.children = [...parent.rec.children];
      void this.persistStatus(parent.rec).catch(() => undefined);
      void this.execute(rec);
      return snapshot;
    }
    try {
      await this.queue.enqueue(runId);
    } catch (e) {
      // the run is in the shared store as queued: the reconciler enqueues it once the queue is back
      if (!this.queue.shared) throw e;
    }
    return snapshot;
  }

  /** A run another node created, claimed by a worker of this process: rebuilt from its request file. */
  private async hydrate(runId: string): Promise<RunRecord | null> {
    const status = await this.store.get(runId);
    if (!status || isTerminalRunState(status.status)) return null;
    const file = await new RunFolder(this.runsDir, runId).readRequest();
    if (!file) throw new Error(`run ${runId} has no readable input/request.json`);
    const plugin = this.registry.get(file.plugin) as Agent<Record<string, unknown>> | undefined;
    const r = file.resolved;
    if (!plugin || !r)
      throw new Error(plugin ? `run ${runId} has no resolved section in input/request.json` : `plugin "${file.plugin}" is not available on this worker`);
    const loaded = file.skill_active ? await loadSkill(this.skillDirs, file.skill_active) : null;
    if (loaded && !loaded.ok) throw new Error(`skill ${file.skill_active} cannot be loaded on this worker: ${loaded.message}`);
    const skill = loaded?.ok ? loaded.skill : null;
    const skills = await grantedSkills(plugin, this.skillDirs);
    const provider = providerFor(plugin, { spec: r.model_spec as ModelSpec, cwd: r.model_cwd }, { env: this.env, resolver: this.resolver });
    const events = await this.store.readEvents(runId, 0);
    const spec: RunSpec = {
      req: { plugin: file.plugin, input: file.input } as ParsedCreateRunRequest,
      plugin,
      input: { ...file.input },
      sources: {},
      skill,
      skills,
      provider,
      model: { spec: r.model_spec as ModelSpec, cwd: r.model_cwd },
      goal: file.goal,
      conversationId: file.conversation_id,
      tenantId: file.tenant_id,
      limits: r.limits,
      reasoning: file.reasoning,
      capture: r.capture ?? resolveCapture(undefined, plugin.capture),
      sandbox: r.sandbox ?? withBaseDir(resolveSandboxPolicy(this.opts.defaults?.().sandbox, plugin.sandbox), this.opts.cwd ?? process.cwd()),
      requested: { model: file.model, limits: file.limits, skill: file.skill },
      trace: { traceId: file.trace.trace_id, parentSpanId: file.trace.parent_span_id, sampled: true },
      claw: r.claw,
      depth: 1,
      sourcesRecorded: file.input_sources,
    };
    const rec = await prepareRun(this.preparation, runId, spec, null, { status, lastSeq: events.at(-1)?.seq ?? 0 });
    await rec.workspace.folder.writeOwner();
    this.live.set(runId, rec);
    return rec;
  }

  /** What run_agent needs of this service, for one parent run. */
  private subagentHost(parentOf: () => RunRecord, front: CreateRunOptions): SubagentHost {
    return {
      start: async (r) => {
        const parent = parentOf();
        const earlier = await this.childOfCall(parent, r.toolCallId);
        if (earlier) return earlier;
        return this.admit(
          { plugin: r.agent, goal: r.goal, input: r.input },
          { ...(front.claw ? { claw: front.claw } : {}) },
          { rec: parent, toolCallId: r.toolCallId },
        );
      },
      events: (id) => this.events(id),
      wait: (id) => this.wait(id),
      cancel: (id) => this.cancel(id),
      metrics: (id) => new RunFolder(this.runsDir, id).readMetrics(),
      linked: (childRunId, agent, toolCallId) => {
        const bus = parentOf().bus;
        bus.publish('tool', {
          phase: 'update',
          name: 'run_agent',
          toolCallId,
          partialResult: { run_id: childRunId },
          node: { id: childRunId, type: 'run', label: agent },
        });
        bus.publish('run', { type: 'subagent.started', childRunId, agent, toolCallId });
      },
      finished: (m) => parentOf().metrics?.addSubagent(m),
    };
  }

  /** `run://<child_run_id>/artifacts/<path>` of one of `rec`'s subagents, confined to that run's artifacts/. */
  private childArtifact(rec: RunRecord | null, rest: string): string {
    const [id, dir, ...path] = rest.split('/');
    if (!rec?.children.includes(id)) throw new Error(`run ${id} is not a subagent of this run (subagents: ${rec?.children.join(', ') || 'none'})`);
    if (dir !== 'artifacts') throw new Error("only a subagent's artifacts/ can be read: run://<run_id>/artifacts/<path>");
    return confinePath(join(this.runsDir, id, 'artifacts'), path.join('/') || '.', `the artifacts of ${id}`);
  }

  private async historyFor(conversationId: string): Promise<ChatMessage[]> {
    const earlier = await this.store.endedInConversation(conversationId, 20);
    const out: ChatMessage[] = [];
    for (const s of earlier) {
      out.push({ role: 'user', content: s.goal });
      out.push({ role: 'assistant', content: s.final_answer || `(run ${s.run_id} ended ${s.status} without an answer)` });
    }
    return out;
  }

  /** Writes run_status.json after the writes queued before it; the returned promise rejects when this write fails
   *  (finalise reports and retries it), the queue itself never does. */
  private persistStatus(rec: RunRecord): Promise<void> {
    this.store.note(rec.status);
    return rec.statusWrites.write({ ...rec.status });
  }

  private engineDeps() {
    return {
      dataDir: this.dataDir,
      extraHooks: this.opts.hooks,
      processRegistry: this.opts.processRegistry === undefined ? defaultProcessRegistry() : (this.opts.processRegistry ?? undefined),
      createTextFilter: this.opts.createTextFilter ?? (() => new ThinkingTagFilter()),
      sleep: this.opts.sleep,
      backoffMs: this.opts.backoffMs,
      killScopeTimeoutMs: this.opts.killScopeTimeoutMs,
      usageTotals: this.usageTotals,
      persistStatus: (r: RunRecord) => this.persistStatus(r),
    };
  }

  /** Runs `rec` to its end, then ends its hosting. A run whose engine threw stays as it was. */
  private async execute(rec: RunRecord): Promise<void> {
    // executeRun finalises its own failures: it resolves once every file is written
    const ended = await executeRun(rec, this.engineDeps()).catch(() => null);
    if (ended) this.ended(rec);
  }

  /** A run whose files are all written: no longer live here, its slot free, then wait() answered. */
  private ended(rec: RunRecord): void {
    this.store.note(rec.status);
    this.live.delete(rec.runId);
    // the slot is free before wait()/cancel() callers resume
    rec.releaseSlot?.();
    rec.resolveDone(rec.status);
  }

  /** A run a worker of this process claimed: prepared here by create(), run to its end. */
  private async runClaimed(runId: string, release: () => void): Promise<void> {
    const rec = this.live.get(runId) ?? (this.queue.shared ? await this.hydrate(runId) : undefined);
    if (!rec || rec.machine.isTerminal) return;
    rec.releaseSlot = release;
    // the run starts after the current I/O callbacks: a free slot claims a run inside its create, and
    // the run's synchronous start (prompt, plan, start files issued) would otherwise go before the
    // create's answer (POST → 201 about 1 ms later, unloaded; more in a burst of creates)
    await new Promise<void>((r) => setImmediate(r));
    await this.execute(rec);
  }

  async get(runId: string): Promise<RunStatusFile | null> {
    if (!isRunId(runId)) return null;
    const live = this.live.get(runId);
    if (live) return { ...live.status };
    return this.store.get(runId);
  }

  async list(q: RunListQuery = {}): Promise<{ runs: RunStatusFile[]; total: number }> {
    await this.init();
    return this.store.list(q);
  }

  /** `because`: the reason the run's status gives (`run cancelled: <because>`). */
  async cancel(runId: string, because?: string): Promise<RunStatusFile> {
    const rec = this.live.get(runId);
    if (!rec) {
      const s = await this.get(runId);
      if (!s) this.fail('not_found', `run ${runId} not found`);
      if (!isTerminalRunState(s.status) && this.queue.shared) return this.cancelElsewhere(runId);
      if (!isTerminalRunState(s.status)) {
        // e.g. a CLI run watched through a server on the same data dir: only its own process can stop it
        this.fail('wrong_state', `run ${runId} is ${s.status} in another runtrail process; cancel it there (Ctrl-C for a CLI run)`, {
          status: s.status,
          elsewhere: true,
        });
      }
      this.fail('wrong_state', `run ${runId} is already ${s.status}`, { status: s.status });
    }
    if (rec.machine.isTerminal) return rec.done;
    rec.abort.abort(because ? new CancelledBecause(because) : new Error('cancelled'));
    if (await this.queue.remove(runId)) await this.cancelledWhileQueued(rec);
    return rec.done;
  }

  /** A person's message to a live run: `steer` reaches the model at the next tool boundary (a queued
   *  run's first turn), `follow_up` after its answer. A finished run answers wrong_state (409). */
  async sendMessage(
    runId: string,
    msg: { text: unknown; mode?: unknown; from: DecisionSource },
  ): Promise<{ id: string; mode: MessageMode; status: RunStatus }> {
    const mode = msg.mode ?? 'steer';
    if (mode !== 'steer' && mode !== 'follow_up')
      this.fail('invalid_request', `mode must be steer or follow_up, got ${JSON.stringify(mode)}`, {
        issues: [{ path: 'mode', message: 'must be steer or follow_up' }],
      });
    if (typeof msg.text !== 'string' || !msg.text.trim() || msg.text.length > 8000) {
      this.fail('invalid_request', 'text must be a non-empty string of at most 8,000 characters', {
        issues: [{ path: 'text', message: 'required, 1–8000 characters' }],
      });
    }
    const rec = await this.liveRecord(runId, 'messages reach live runs only; start a new run in the conversation');
    if (rec.machine.state === 'validating')
      this.fail('wrong_state', `run ${runId} is validating its answer: too late for a message`, { status: rec.machine.state });
    const m = rec.inbox.post(mode, msg.text.trim(), msg.from);
    return { id: m.id, mode, status: rec.status.status };
  }

  /** Decides an `ask` tool call of a live run. Unknown id: not_found; already decided: wrong_state (409). */
  async decideApproval(runId: string, approvalId: string, d: { decision: unknown; reason?: unknown; by: DecisionSource; who?: string }): Promise<StepApproval> {
    if (d.decision !== 'approve' && d.decision !== 'deny')
      this.fail('invalid_request', `decision must be approve or deny, got ${JSON.stringify(d.decision)}`, {
        issues: [{ path: 'decision', message: 'must be approve or deny' }],
      });
    if (d.reason !== undefined && (typeof d.reason !== 'string' || d.reason.length > 2000))
      this.fail('invalid_request', 'reason must be a string of at most 2,000 characters', {
        issues: [{ path: 'reason', message: 'a string, at most 2000 characters' }],
      });
    const rec = await this.liveRecord(runId, 'its approvals were decided or denied when it ended');
    const r = rec.approvals?.decide(approvalId, d.decision, d.by, typeof d.reason === 'string' && d.reason.trim() ? d.reason.trim() : undefined, d.who) ?? {
      ok: false as const,
      code: 'not_found' as const,
    };
    if (r.ok) return r.approval;
    if (r.code === 'already_decided')
      this.fail(
        'wrong_state',
        `approval ${approvalId} was already ${r.approval!.status === 'approved' ? 'approved' : 'denied'} (by ${r.approval!.by ?? 'someone'})`,
        { approval: r.approval },
      );
    this.fail('not_found', `approval ${approvalId} not found in run ${runId}`, { pending: rec.approvals?.pending().map((a) => a.id) ?? [] });
  }

  /** The tool calls of a live run waiting for a decision. */
  pendingApprovals(runId: string): StepApproval[] {
    return this.live.get(runId)?.approvals?.pending() ?? [];
  }

  /** The live record of `runId`; not_found when there is no such run, wrong_state when it is not live here. */
  private async liveRecord(runId: string, whyNot: string): Promise<RunRecord> {
    const rec = this.live.get(runId);
    if (rec && !rec.machine.isTerminal) return rec;
    const s = await this.get(runId);
    if (!s) this.fail('not_found', `run ${runId} not found`);
    if (!isTerminalRunState(s.status))
      this.fail('wrong_state', `run ${runId} is ${s.status} in another runtrail process; send it there`, { status: s.status, elsewhere: true });
    this.fail('wrong_state', `run ${runId} is already ${s.status}: ${whyNot}`, { status: s.status });
  }

  events(runId: string, opts: { after?: number; signal?: AbortSignal } = {}): AsyncIterable<AgentEvent> {
    // the check, then the follower's own iterator: no generator layer of ours between a client and
    // the run's tail (a layer is a promise per event per client)
    return afterCheck(
      async () => {
        if (!this.live.has(runId) && !(await this.get(runId))) this.fail('not_found', `run ${runId} not found`);
      },
      () => this.fanout.follow(runId, opts.after ?? 0, opts.signal),
    );
  }

  async manifest(runId: string): Promise<unknown | null> {
    if (!isRunId(runId)) return null;
    return new RunFolder(this.runsDir, runId).readManifest();
  }

  async documentPath(runId: string, relPath: string): Promise<string | null> {
    const m = (await this.manifest(runId)) as { documents?: Array<{ path: string }> } | null;
    if (!m || typeof relPath !== 'string' || relPath.includes('\0')) return null;
    const doc = m.documents?.find((d) => d.path === relPath || d.path === `artifacts/${relPath}`);
    if (!doc) return null;
    const root = join(this.runsDir, runId);
    const abs = resolve(root, doc.path);
    // symlinks resolved before confining: a link in artifacts/ must not serve a file from outside the run
    const real = realpathLoose(abs);
    const artifacts = realpathLoose(join(root, 'artifacts'));
    if (real === artifacts || !isInside(real, artifacts) || !existsSync(abs)) return null;
    return abs;
  }

  async wait(runId: string): Promise<RunStatusFile> {
    const rec = this.live.get(runId);
    if (rec) return { ...(await rec.done) };
    const s = await this.get(runId);
    if (!s) this.fail('not_found', `run ${runId} not found`);
    if (isTerminalRunState(s.status) || !this.queue.shared) return s;
    // a run of another node: its terminal event ends the stream, then its record is final
    for await (const _ of this.fanout.follow(runId, s.last_seq > 0 ? s.last_seq - 1 : 0)) void _;
    return (await this.store.get(runId)) ?? s;
  }

  /** A run taken out of the queue before it started: its files written as cancelled. */
  private async cancelledWhileQueued(rec: RunRecord): Promise<void> {
    await finalise(rec, this.engineDeps(), {
      status: 'cancelled',
      text: '',
      diagnosis: new Diagnosis({
        code: 'cancelled',
        severity: 'warning',
        summary: `run cancelled while queued${rec.abort.signal.reason instanceof CancelledBecause ? `: ${rec.abort.signal.reason.message}` : ''}`,
      }).toDict(),
      metrics: new RunMetrics(),
      startedMs: Date.now(),
      pipeline: null,
      runReporter: null,
    });
    this.ended(rec);
  }

  /** A run this node does not hold: taken out of the queue while it waits, else its worker is told. */
  private async cancelElsewhere(runId: string): Promise<RunStatusFile> {
    if (await this.queue.remove(runId)) {
      const rec = await this.hydrate(runId);
      if (rec) {
        rec.abort.abort(new Error('cancelled'));
        await this.cancelledWhileQueued(rec);
        return { ...(await rec.done) };
      }
    }
    await this.queue.signalCancel(runId);
    return this.wait(runId);
  }

  /** A run whose worker died: failed as interrupted by this node, unless another node was first. */
  async interruptOrphan(runId: string, why: string): Promise<boolean> {
    const status = await this.store.get(runId);
    const store = this.store;
    if (!status || isTerminalRunState(status.status) || !store.claimTerminal || !store.insertEvents) return false;
    return interruptInSharedStore(
      this.runsDir,
      status,
      this.registry.get(status.plugin)?.artifacts ?? [],
      {
        readEvents: (id, after) => store.readEvents(id, after),
        insertEvents: (id, events) => store.insertEvents!(id, events),
        openLog: (id, root) => store.openLog(id, root),
        claimTerminal: (s) => store.claimTerminal!(s),
        save: (s, ws) => store.save(s, ws),
      },
      why,
    );
  }

  /**
   * What the shared queue lost (Redis flushed or restarted), from the store's records: queued runs go
   * back into it; runs whose worker is gone are interrupted (the stalled check that would have found
   * them lived in Redis).
   */
  private async reconcile(): Promise<void> {
    for (const runId of (await this.store.queuedRuns?.(5_000)) ?? []) {
      if (this.queue.has && !(await this.queue.has(runId))) await this.queue.enqueue(runId);
    }
    const gone = this.opts.workerGone;
    if (!gone) return;
    for (const runId of (await this.store.activeRuns?.(5_000)) ?? []) {
      if (!this.live.has(runId) && (await gone(runId))) await this.interruptOrphan(runId, 'its worker stopped (no sign of life from it)');
    }
  }

  stats(): RunServiceStats {
    return { byState: this.store.countByState(), ...this.queue.stats(), eventsPublished: this.eventsPublished, models: this.usageTotals.snapshot() };
  }

  /** Cancels queued and live runs (`because`: the reason their status gives) and waits until each has written its files. */
  async close(because?: string): Promise<void> {
    this.closed = true;
    clearInterval(this.reconciler);
    const recs = [...this.live.values()];
    await Promise.all(recs.map((r) => this.cancel(r.runId, because).catch(() => r.done)));
    this.releaseSignals?.();
    await this.queue.close();
    await this.queue.dispose?.();
    await this.fanout.close?.();
    await this.store.close?.();
  }

  /**
   * A worker's SIGTERM: it stops claiming, lets its runs finish for `drainMs`, then interrupts the
   * rest (failed as interrupted, files written), and closes.
   */
  async drain(drainMs: number): Promise<void> {
    this.closed = true;
    clearInterval(this.reconciler);
    await this.queue.close(drainMs);
    const left = [...this.live.values()];
    for (const r of left) r.abort.abort(new RunInterrupted(`the worker was stopped and its ${Math.round(drainMs / 1000)} s to drain ran out`));
    await Promise.all(left.map((r) => r.done));
    this.releaseSignals?.();
    await this.queue.dispose?.();
    await this.fanout.close?.();
    await this.store.close?.();
  }
}

/** What a run is built from: the admission's results, or (a worker's claim) its request file's. */
function maxQueueOf(opts: RunServiceOptions): number {
  return Math.max(0, opts.maxQueue ?? 100);
}
