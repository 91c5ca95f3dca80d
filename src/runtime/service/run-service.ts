/**
 * RunService: the front of a run's core, and only its front. It makes the parts, each with one job, and
 * answers RunServiceApi through them:
 * - intake (run-intake.ts): a request checked (run-admission.ts), prepared (run-preparation.ts) and queued;
 * - hosting (run-host.ts): the live runs (live-runs.ts), run by the engine (run-engine.ts), which returns
 *   how each ended; runs a worker claims are rebuilt from their folders;
 * - subagents (run-subagents.ts): what a run's run_agent call is given;
 * - recovery (run-recovery.ts): runs a dead process or a lost queue left, resumed or interrupted;
 * - access (run-access.ts): status, list, events, documents, wait, cancel, messages, approvals;
 * - shutdown (run-shutdown.ts): close and drain.
 * The parts share the live runs, the queue and the store as objects; none reaches into another's state.
 */
import { join, resolve } from 'node:path';
import type { AgentEvent, DecisionSource, RunStatus } from '../../events/agent-event.js';
import type { StepApproval } from '../../events/engine-event.js';
import { ThinkingTagFilter } from '../../events/thinking-tag-filter.js';
import { registerEnvSecrets } from '../../events/secret-masker.js';
import { defaultProcessRegistry } from '../../tools/default-process-registry.js';
import type { Agent } from '../agent.js';
import { defaultDataDir, defaultInputRoots } from '../data-dir.js';
import { ownerOnlyDataDir, ownerOnlyUmask } from '../storage/owner-only.js';
import { defaultSkillsDir } from '../package-root.js';
import { AgentRegistry, type AgentSource } from '../agent-registry.js';
import { defaultProviderResolver, type ProviderResolver } from './run-admission.js';
import { isTerminalRunState } from '../run-state-machine.js';
import type { MessageMode } from '../loop/run-inbox.js';
import { LocalRunQueue, type RunQueue } from './run-queue.js';
import { discardedRanges } from '../storage/discarded-ranges.js';
import { LocalRunStore, type RunStore } from '../storage/run-store.js';
import { checkpointsInLines } from '../checkpoint/checkpoint-store.js';
import { LocalEventFanout, type EventFanout } from '../storage/event-fanout.js';
import { ownedByLiveProcess } from '../storage/interrupted-runs.js';
import type { CreateRunOptions, RunListQuery, RunServiceApi, RunServiceStats, RunStatusFile } from '../run-service-types.js';
import type { RunServiceOptions } from './run-service-options.js';
import { LiveRuns } from './live-runs.js';
import { RunHost } from './run-host.js';
import { RunIntake } from './run-intake.js';
import { RunSubagents } from './run-subagents.js';
import { crashVerdict, RunRecovery } from '../recovery/run-recovery.js';
import { RunAccess } from './run-access.js';
import { RunShutdown } from './run-shutdown.js';
import { runtrailDirs } from '../../sandbox/sandbox-paths.js';

export type { ProviderResolver };
export type { RunServiceOptions, RunServiceDefaults } from './run-service-options.js';
export { defaultProviderResolver };

export class RunService implements RunServiceApi {
  readonly dataDir: string;
  readonly runsDir: string;
  readonly skillsDir: string;
  readonly skillDirs: string[];
  readonly registry: AgentSource;
  readonly store: RunStore;
  private readonly queue: RunQueue;
  private readonly host: RunHost;
  private readonly intake: RunIntake;
  private readonly recovery: RunRecovery;
  private readonly access: RunAccess;
  private readonly shutdown: RunShutdown;
  private initDone: Promise<void> | null = null;
  private dataDirClosed: Promise<void> | null = null;

  constructor(private readonly opts: RunServiceOptions) {
    this.dataDir = resolve(opts.dataDir ?? defaultDataDir(opts.env ?? process.env));
    this.runsDir = join(this.dataDir, 'runs');
    this.skillsDir = resolve(opts.skillsDir ?? defaultSkillsDir());
    this.skillDirs = opts.skillDirs?.map((d) => resolve(d)) ?? [this.skillsDir];
    const registry = opts.agentSource ?? new AgentRegistry(opts.agents ?? []);
    this.registry = registry;
    const runsDir = this.runsDir;
    const maxQueue = Math.max(0, opts.maxQueue ?? 100);
    const queue = opts.queue ?? new LocalRunQueue(Math.max(1, opts.concurrency ?? 4), maxQueue);
    this.queue = queue;
    const env = opts.env ?? process.env;
    // the keys and tokens the service's environment holds are masked in all its runs write and send
    registerEnvSecrets(env);
    ownerOnlyUmask();
    const cwd = opts.cwd ?? process.cwd();
    // the sandbox's relative paths are the project's, whatever folder the CLI was started from
    const projectDir = resolve(opts.projectDir ?? registryProjectDir(registry) ?? cwd);
    const resolver = opts.providerResolver ?? defaultProviderResolver;
    const defaults = () => opts.defaults?.() ?? {};
    const live = new LiveRuns();
    const log = opts.log ?? (() => undefined);
    const crash = { runsDir, registry, durability: () => defaults().durability, log };
    const local = new LocalRunStore(
      runsDir,
      (p) => registry.get(p)?.artifacts ?? [],
      (id) => live.has(id),
      (s) => crashVerdict(crash, s),
    );
    const store = opts.store ?? local;
    this.store = store;
    const fanout: EventFanout =
      opts.fanout ??
      new LocalEventFanout(
        runsDir,
        (id) => live.get(id),
        async (id) => {
          const s = await local.readStatusFile(id);
          return s !== null && !isTerminalRunState(s.status) && (await ownedByLiveProcess(runsDir, id));
        },
      );
    this.host = new RunHost({
      live,
      queue,
      store,
      runsDir,
      dataDir: this.dataDir,
      env,
      skillDirs: this.skillDirs,
      registry,
      resolver,
      projectDir,
      sandboxDefaults: () => defaults().sandbox,
      observers: opts.observers ?? [],
      engine: {
        extraHooks: opts.hooks,
        processRegistry: opts.processRegistry === undefined ? defaultProcessRegistry() : (opts.processRegistry ?? undefined),
        createTextFilter: opts.createTextFilter ?? (() => new ThinkingTagFilter()),
        sleep: opts.sleep,
        backoffMs: opts.backoffMs,
        killScopeTimeoutMs: opts.killScopeTimeoutMs,
        // several nodes keep checkpoints where the worker that takes up a dead worker's run reads them
        ...(opts.store?.checkpoints ? { checkpoints: checkpointsInLines(opts.store.checkpoints) } : {}),
      },
      // a run may start runs: run_agent admits its children through the intake made below
      subagents: (parentOf, front) => subagents.hostFor(parentOf, front),
    });
    this.access = new RunAccess({ live, host: this.host, queue, store, fanout, runsDir });
    this.shutdown = new RunShutdown({
      live,
      access: this.access,
      queue,
      fanout,
      store,
      drainsOnSignal: opts.drainsOnSignal ?? false,
      resumesRuns: () => defaults().durability?.resume !== false,
      log,
    });
    const gate = this.shutdown;
    this.recovery = new RunRecovery({
      ...crash,
      live,
      host: this.host,
      queue,
      store,
      local: opts.store ? null : local,
      workerGone: opts.workerGone,
      reconcileMs: opts.reconcileMs,
      gate,
    });
    this.intake = new RunIntake({
      host: this.host,
      queue,
      store,
      registry,
      runsDir,
      skillDirs: this.skillDirs,
      env,
      cwd,
      projectDir,
      protectedDirs: runtrailDirs(projectDir, this.dataDir),
      inputRoots: opts.inputRoots ?? defaultInputRoots(this.dataDir),
      resolver,
      defaults,
      maxQueue,
      gate,
    });
    const subagents = new RunSubagents({ intake: this.intake, recovery: this.recovery, access: this.access, runsDir });
  }

  agentNames(): string[] {
    return this.registry.names();
  }

  getAgent(name: string): Agent<Record<string, unknown>> | undefined {
    return this.registry.get(name);
  }

  /** Loads existing runs; runs a crash left live become failed (`interrupted`) with a terminal event. Idempotent. */
  init(): Promise<void> {
    this.dataDirClosed ??= ownerOnlyDataDir(this.dataDir).catch(() => undefined);
    this.initDone ??= this.dataDirClosed.then(async () => {
      await this.store.init();
      if (this.opts.resumeOnStart) await this.recovery.resumeAtStart();
    });
    return this.initDone;
  }

  /** Runs whose process died and that `resume` would take up. */
  resumableRuns(): string[] {
    return this.recovery.resumableRuns();
  }

  /**
   * Takes up a run whose process died, from its checkpoint: same run_id, folder and event stream.
   * A run that cannot be resumed ends `interrupted` saying why; either way the run's status is returned.
   */
  async resume(runId: string): Promise<RunStatusFile> {
    await this.init();
    return this.recovery.resume(runId);
  }

  async create(raw: unknown, opts: CreateRunOptions = {}): Promise<RunStatusFile> {
    await this.init();
    return this.intake.admit(raw, opts, null);
  }

  get(runId: string): Promise<RunStatusFile | null> {
    return this.access.get(runId);
  }

  async list(q: RunListQuery = {}): Promise<{ runs: RunStatusFile[]; total: number }> {
    await this.init();
    return this.access.list(q);
  }

  /** `because`: the reason the run's status gives (`run cancelled: <because>`). */
  cancel(runId: string, because?: string): Promise<RunStatusFile> {
    return this.access.cancel(runId, because);
  }

  /** A person's message to a live run: `steer` reaches the model at the next tool boundary (a queued
   *  run's first turn), `follow_up` after its answer. A finished run answers wrong_state (409). */
  sendMessage(runId: string, msg: { text: unknown; mode?: unknown; from: DecisionSource }): Promise<{ id: string; mode: MessageMode; status: RunStatus }> {
    return this.access.sendMessage(runId, msg);
  }

  /** Decides an `ask` tool call of a live run. Unknown id: not_found; already decided: wrong_state (409). */
  decideApproval(runId: string, approvalId: string, d: { decision: unknown; reason?: unknown; by: DecisionSource; who?: string }): Promise<StepApproval> {
    return this.access.decideApproval(runId, approvalId, d);
  }

  /** The tool calls of a live run waiting for a decision. */
  pendingApprovals(runId: string): StepApproval[] {
    return this.access.pendingApprovals(runId);
  }

  events(runId: string, opts: { after?: number; signal?: AbortSignal } = {}): AsyncIterable<AgentEvent> {
    return this.access.events(runId, opts);
  }

  async discardedRanges(runId: string): Promise<Array<{ from: number; to: number }>> {
    return discardedRanges(await this.store.readEvents(runId, 0));
  }

  manifest(runId: string): Promise<unknown | null> {
    return this.access.manifest(runId);
  }

  documentPath(runId: string, relPath: string): Promise<string | null> {
    return this.access.documentPath(runId, relPath);
  }

  wait(runId: string): Promise<RunStatusFile> {
    return this.access.wait(runId);
  }

  /** A run whose worker died: failed as interrupted by this node, unless another node was first. */
  interruptOrphan(runId: string, why: string): Promise<boolean> {
    return this.recovery.interruptOrphan(runId, why);
  }

  stats(): RunServiceStats {
    return {
      byState: this.store.countByState(),
      ...this.queue.stats(),
      eventsPublished: this.host.eventsPublished,
      models: this.host.usageTotals.snapshot(),
    };
  }

  /** Cancels queued and live runs (`because`: the reason their status gives) and waits until each has written its files.
   *  `leaveResumable` (a server that stops): the runs that can be resumed are left to be, the others cancelled;
   *  `graceMs`: how long the tool calls in flight of the runs left are given to finish first. */
  close(because?: string, o: { leaveResumable?: boolean; graceMs?: number } = {}): Promise<void> {
    if (o.graceMs !== undefined && !(o.graceMs >= 0)) throw new RangeError(`close: graceMs must be a number ≥ 0, got ${o.graceMs}`);
    this.recovery.stop();
    return this.shutdown.close(because, o);
  }

  /**
   * A worker's SIGTERM: it stops claiming, lets its runs finish for `drainMs`, then leaves the rest to
   * be resumed by another worker (interrupts those that cannot be: failed as interrupted, files
   * written), and closes.
   */
  drain(drainMs: number): Promise<void> {
    if (!(drainMs >= 0)) throw new RangeError(`drain: drainMs must be a number ≥ 0, got ${drainMs}`);
    this.recovery.stop();
    return this.shutdown.drain(drainMs);
  }
}

/** The project folder an extension registry was loaded from, when the agent source is one. */
function registryProjectDir(source: AgentSource): string | undefined {
  const dir = (source as { projectDir?: unknown }).projectDir;
  return typeof dir === 'string' ? dir : undefined;
}
