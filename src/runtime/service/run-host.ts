/**
 * Hosting: where a run lives while the engine (run-engine.ts) runs it. The host holds the live runs
 * (live-runs.ts), runs the ones this process's worker claims or starts beside a queue slot (a
 * subagent, a resumed subagent), rebuilds a run another node created from its request file, and acts
 * on the outcome the engine returns: the run leaves the live runs, its slot is freed, then wait() is
 * answered. It is also what preparation (run-preparation.ts) needs of the service: the conversation's
 * history, a subagent's artifacts, the event counter and the subagents' host.
 */
import { join } from 'node:path';
import type { ChatMessage } from '../../providers/model-provider.js';
import type { ModelSpec } from '../../providers/resolve-model-provider.js';
import type { OperatorSandboxSettings, SandboxPolicy } from '../../sandbox/sandbox-policy.js';
import { pinnedRunPolicy, runtrailDirs } from '../../sandbox/sandbox-paths.js';
import { loadSkill } from '../../skills/skill-loader.js';
import type { ConfinedPath } from '../../tools/confined-files.js';
import type { Agent } from '../agent.js';
import type { AgentSource } from '../agent-registry.js';
import { resolveCapture } from '../model-calls/capture-settings.js';
import type { ParsedCreateRunRequest } from '../create-run-request.js';
import type { LiveRuns } from './live-runs.js';
import { ModelUsageTotals } from '../metrics/model-usage-totals.js';
import { grantedSkills, providerFor, type ProviderResolver } from './run-admission.js';
import { executeRun, finalise, type EngineDeps, type EngineResult } from '../run/run-engine.js';
import { RunFolder } from '../storage/run-folder.js';
import { RunMetrics } from '../metrics/run-metrics.js';
import { prepareRun, type ParentLink, type PreparationHost, type RunSpec } from '../run/run-preparation.js';
import type { RunQueue } from './run-queue.js';
import type { RunRecord } from '../run/run-record.js';
import type { CreateRunOptions, RunObserver, RunStatusFile } from '../run-service-types.js';
import { isTerminalRunState } from '../run-state-machine.js';
import type { RunStore } from '../storage/run-store.js';
import type { SubagentHost } from '../loop/subagent-tool.js';
import { cancelled, reasonOf, stopOf, stopRun } from '../errors.js';

/** What run_agent of one parent run is given: made by whoever can admit runs (the run service). */
export type SubagentHosts = (parentOf: () => RunRecord, front: CreateRunOptions) => SubagentHost;

export interface RunHostOptions {
  live: LiveRuns;
  queue: RunQueue;
  store: RunStore;
  runsDir: string;
  dataDir: string;
  env: Record<string, string | undefined>;
  /** Where a rebuilt run's skills are loaded from. */
  skillDirs: string[];
  registry: AgentSource;
  resolver: ProviderResolver;
  /** Base of a rebuilt run's relative sandbox paths when its request file has none resolved: the project folder. */
  projectDir: string;
  /** config.json's sandbox settings, read when a run is rebuilt. */
  sandboxDefaults: () => OperatorSandboxSettings | undefined;
  observers: readonly RunObserver[];
  /** What the engine is given besides the usage totals, which are the host's. */
  engine: Omit<EngineDeps, 'dataDir' | 'usageTotals'>;
  subagents: SubagentHosts;
}

export class RunHost implements PreparationHost {
  readonly runsDir: string;
  readonly dataDir: string;
  readonly env: Record<string, string | undefined>;
  readonly store: RunStore;
  readonly observers: readonly RunObserver[];
  /** Tokens and cost of every model call of this process's runs (/metrics). */
  readonly usageTotals = new ModelUsageTotals();
  private published = 0;
  private readonly live: LiveRuns;
  private readonly queue: RunQueue;
  private readonly engineDeps: EngineDeps;

  constructor(private readonly o: RunHostOptions) {
    this.runsDir = o.runsDir;
    this.dataDir = o.dataDir;
    this.env = o.env;
    this.store = o.store;
    this.observers = o.observers;
    this.live = o.live;
    this.queue = o.queue;
    this.engineDeps = { ...o.engine, dataDir: o.dataDir, usageTotals: this.usageTotals };
    this.queue.process((runId, release) => this.runClaimed(runId, release));
    // a cancel sent to any node reaches the worker that runs it
    this.queue.onCancel((runId) => {
      const rec = this.live.get(runId);
      if (rec) stopRun(rec.abort, { kind: 'cancelled', reason: null });
    });
  }

  /** Events published on the buses of this process's runs. */
  get eventsPublished(): number {
    return this.published;
  }

  /** A run's record made from its spec (`resume`: a run whose status and events exist). */
  prepare(runId: string, spec: RunSpec, parent: ParentLink | null, resume: Parameters<typeof prepareRun>[4]): Promise<RunRecord> {
    return prepareRun(this, runId, spec, parent, resume);
  }

  /** A run this process runs: held live from now until it ends. */
  hold(rec: RunRecord): void {
    this.live.hold(rec);
  }

  /** A run that never started (its create was refused after its record was made): not held any more. */
  drop(runId: string): void {
    this.live.drop(runId);
  }

  /** Starts `rec` at once, beside the queue (a subagent runs in its parent's slot). */
  startBeside(rec: RunRecord): void {
    void this.execute(rec);
  }

  /** Who takes up a run of the shared queue that a worker had started and stopped (recovery). */
  private takeUp: ((status: RunStatusFile) => Promise<RunRecord | null>) | null = null;

  takeUpStartedRunsWith(takeUp: (status: RunStatusFile) => Promise<RunRecord | null>): void {
    this.takeUp = takeUp;
  }

  /** A run a worker of this process claimed: prepared here by create(), or rebuilt, run to its end. */
  private async runClaimed(runId: string, release: () => void): Promise<'left' | undefined> {
    const rec = this.live.get(runId) ?? (this.queue.shared ? await this.claimShared(runId) : undefined);
    if (!rec || rec.machine.isTerminal) return;
    rec.releaseSlot = release;
    // the run starts after the current I/O callbacks: a free slot claims a run inside its create, and
    // the run's synchronous start (prompt, plan, start files issued) would otherwise go before the
    // create's answer (POST → 201 about 1 ms later, unloaded; more in a burst of creates)
    await new Promise<void>((r) => setImmediate(r));
    return (await this.execute(rec)) === 'left' ? 'left' : undefined;
  }

  /**
   * A run of the shared queue this process's worker claimed: a queued one is rebuilt from its request
   * file; one a worker had started, and stopped (its job came back to the queue), is taken up by
   * recovery (resumed from its checkpoint, or ended under the durability rules).
   */
  private async claimShared(runId: string): Promise<RunRecord | null> {
    const status = await this.store.get(runId);
    if (!status || isTerminalRunState(status.status)) return null;
    if (status.status === 'queued' || !this.takeUp) return this.rebuild(runId);
    return this.takeUp(status);
  }

  /** Runs `rec` to its end, then ends its hosting. A run whose engine threw stays as it was. */
  private async execute(rec: RunRecord): Promise<EngineResult | null> {
    // executeRun finalises its own failures: it resolves once every file is written (or, a run left
    // to be resumed, closed)
    const ended = await executeRun(rec, this.engineDeps).catch(() => null);
    if (ended) this.ended(rec);
    return ended;
  }

  /** A run whose files are all written (or closed, left to be resumed): no longer live here, its slot
   *  free, then wait() answered. */
  private ended(rec: RunRecord): void {
    this.store.note(rec.status);
    this.live.drop(rec.runId);
    // the slot is free before wait()/cancel() callers resume
    rec.releaseSlot?.();
    rec.resolveDone(rec.status);
  }

  /** A run taken out of the queue before it started: its files written as cancelled. */
  async cancelledWhileQueued(rec: RunRecord): Promise<void> {
    await finalise(rec, this.engineDeps, {
      status: 'cancelled',
      text: '',
      diagnosis: cancelled(reasonOf(stopOf(rec.abort.signal)), 'while queued'),
      metrics: new RunMetrics(),
      startedMs: Date.now(),
      pipeline: null,
      runReporter: null,
    });
    this.ended(rec);
  }

  /** A run another node created (claimed by a worker of this process, or resumed): rebuilt from its
   *  request file and held live. Null when it is gone or already ended. `lastSeq`: the seq of its last
   *  event, when the caller read its events already (a resume's decision did: they are not read twice). */
  async rebuild(runId: string, known: { lastSeq?: number } = {}): Promise<RunRecord | null> {
    const status = await this.store.get(runId);
    if (!status || isTerminalRunState(status.status)) return null;
    const file = await new RunFolder(this.runsDir, runId).readRequest();
    if (!file) throw new Error(`run ${runId} has no readable input/request.json`);
    const plugin = this.o.registry.get(file.plugin) as Agent<Record<string, unknown>> | undefined;
    const r = file.resolved;
    if (!plugin || !r)
      throw new Error(plugin ? `run ${runId} has no resolved section in input/request.json` : `plugin "${file.plugin}" is not available on this worker`);
    const loaded = file.skill_active ? await loadSkill(this.o.skillDirs, file.skill_active) : null;
    if (loaded && !loaded.ok) throw new Error(`skill ${file.skill_active} cannot be loaded on this worker: ${loaded.message}`);
    const skill = loaded?.ok ? loaded.skill : null;
    const skills = await grantedSkills(plugin, this.o.skillDirs);
    const provider = providerFor(plugin, { spec: r.model_spec as ModelSpec, cwd: r.model_cwd }, { env: this.env, resolver: this.o.resolver });
    const lastSeq = known.lastSeq ?? (await this.store.readEvents(runId, 0)).at(-1)?.seq ?? 0;
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
      sandbox: r.sandbox ?? this.rebuiltSandbox(plugin),
      requested: { model: file.model, limits: file.limits, skill: file.skill },
      trace: { traceId: file.trace.trace_id, parentSpanId: file.trace.parent_span_id, sampled: true },
      claw: r.claw,
      depth: 1,
      sourcesRecorded: file.input_sources,
    };
    const rec = await this.prepare(runId, spec, null, { status, lastSeq });
    await rec.workspace.folder.writeOwner();
    this.live.hold(rec);
    return rec;
  }

  /** The sandbox of a rebuilt run whose record has none: pinned as a new run's is, or the run cannot go on. */
  private rebuiltSandbox(plugin: Agent): SandboxPolicy {
    const pinned = pinnedRunPolicy(this.o.sandboxDefaults(), plugin.sandbox, {
      projectDir: this.o.projectDir,
      protectedDirs: runtrailDirs(this.o.projectDir, this.dataDir),
      agentName: plugin.name,
    });
    if (!pinned.ok) throw new Error(`${pinned.refused.field}: ${pinned.refused.message}`);
    return pinned.policy;
  }

  countEvent(): void {
    this.published++;
  }

  async historyFor(conversationId: string): Promise<ChatMessage[]> {
    const earlier = await this.store.endedInConversation(conversationId, 20);
    const out: ChatMessage[] = [];
    for (const s of earlier) {
      out.push({ role: 'user', content: s.goal });
      out.push({ role: 'assistant', content: s.final_answer || `(run ${s.run_id} ended ${s.status} without an answer)` });
    }
    return out;
  }

  /** `run://<child_run_id>/artifacts/<path>` of one of `rec`'s subagents, confined to that run's artifacts/. */
  childArtifact(rec: RunRecord | null, rest: string): ConfinedPath {
    const [id, dir, ...path] = rest.split('/');
    if (!rec?.children.includes(id)) throw new Error(`run ${id} is not a subagent of this run (subagents: ${rec?.children.join(', ') || 'none'})`);
    if (dir !== 'artifacts') throw new Error("only a subagent's artifacts/ can be read: run://<run_id>/artifacts/<path>");
    // opened from that run's folder: an artifacts/ its commands swapped for a link is seen as one
    return {
      root: join(this.runsDir, id),
      rel: ['artifacts', ...path].join('/'),
      what: `the folder of ${id}`,
      allow: (names) => (names[0] === 'artifacts' ? null : `outside the artifacts of ${id}`),
    };
  }

  subagentHost(parentOf: () => RunRecord, front: CreateRunOptions): SubagentHost {
    return this.o.subagents(parentOf, front);
  }
}
