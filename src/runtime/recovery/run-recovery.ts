/**
 * Recovery: runs a dead process or a lost queue left behind. At start a run whose process died is either
 * resumed from its checkpoint (run-resume.ts) or ended `interrupted` saying why (interrupted-runs.ts);
 * `resume` takes one up on request; a subagent whose parent is resumed is taken up by the parent's
 * run_agent call. On several nodes a run whose worker died comes back to the queue, and the worker
 * that claims it resumes it from its checkpoint in the shared store (shared-resume.ts) or ends it, under
 * the same rules; what a flushed Redis forgot is put back from the store's records (the reconciler).
 */
import { join } from 'node:path';
import type { DiagnosisDict } from '../../events/diagnosis.js';
import type { AgentSource } from '../agent-registry.js';
import { endLeftoverSessions, interruptInSharedStore, markInterrupted, ownedByLiveProcess } from '../storage/interrupted-runs.js';
import { canResumeShared, sharedIo, takeUpSharedRun } from './shared-resume.js';
import { repairEventsFile } from '../storage/event-store.js';
import { RUN_FILES } from '../storage/run-files.js';
import type { LiveRuns } from '../service/live-runs.js';
import { noteLeftovers } from '../checkpoint/run-checkpoint.js';
import type { RunHost } from '../service/run-host.js';
import type { RunQueue } from '../service/run-queue.js';
import type { RunRecord } from '../run/run-record.js';
import { DEFAULT_DURABILITY, planResume, type DurabilitySettings, type ResumeDecision } from './run-resume.js';
import type { RunStatusFile } from '../run-service-types.js';
import { isTerminalRunState } from '../run-state-machine.js';
import type { LocalRunStore, RunStore } from '../storage/run-store.js';
import { fail, resumeFailed } from '../errors.js';

/** What deciding about a crashed run needs: its folder, its agent, the operator's durability settings. */
export interface CrashContext {
  runsDir: string;
  registry: AgentSource;
  durability: () => Partial<DurabilitySettings> | undefined;
  /** One line per run taken up or ended in place of being resumed. */
  log: (line: string) => void;
}

function durabilityOf(c: CrashContext): DurabilitySettings {
  return { ...DEFAULT_DURABILITY, ...c.durability() };
}

/** A run whose process died: null when it can be resumed, else why it ends interrupted. */
export async function crashVerdict(c: CrashContext, status: RunStatusFile): Promise<DiagnosisDict | null> {
  const root = join(c.runsDir, status.run_id);
  repairEventsFile(join(root, RUN_FILES.events));
  const plugin = c.registry.get(status.plugin);
  const d = await planResume(root, status, { settings: durabilityOf(c), agentDurability: plugin ? (plugin.durability ?? 'resume') : null });
  if (d.kind === 'interrupt') {
    c.log(takenUpLine(status.run_id, status.plugin, d, ''));
    return d.diagnosis;
  }
  // the dead process's background sessions end now, not when (or if) the run is resumed
  const ended = await endLeftoverSessions(root);
  if (ended.text || ended.output) noteLeftovers(join(root, RUN_FILES.checkpoint), ended.text, ended.output);
  return null;
}

export interface RunRecoveryOptions extends CrashContext {
  live: LiveRuns;
  host: RunHost;
  queue: RunQueue;
  store: RunStore;
  /** the run folders of this data dir, when they are the store (runs are resumed from them) */
  local: LocalRunStore | null;
  /** Several nodes: whether the worker that claimed a run is gone. */
  workerGone?: (runId: string) => Promise<boolean>;
  /** How often a shared queue is checked for what it lost; default 10 s. */
  reconcileMs?: number;
  /** Whether the service is closed (then nothing is resumed on request). */
  gate: { readonly closed: boolean };
}

/** The log line of a run a start takes up: from where, which attempt, and why it had stopped. */
function takenUpLine(runId: string, plugin: string, d: ResumeDecision, where: string): string {
  if (d.kind === 'interrupt') return `run ${runId} (${plugin}) ended, not resumed: ${d.diagnosis.summary}`;
  const at = d.kind === 'resume' ? d.point : d.start;
  const from = d.kind === 'resume' ? `from its checkpoint (after event ${d.point.seq})` : 'from its request (it had not begun its first turn)';
  const stopped = at.left ? 'its last attempt was stopped on purpose' : 'its process died';
  return `run ${runId} (${plugin}) resumed ${where}${from}, attempt ${d.attempt}: ${stopped}`;
}

export class RunRecovery {
  private reconciler: NodeJS.Timeout | undefined;
  /** Resumes under way, by run: a run is taken up once even when its parent's call and a person ask together. */
  private readonly resuming = new Map<string, Promise<void>>();

  constructor(private readonly o: RunRecoveryOptions) {
    o.queue.onStalled?.((runId) => void this.interruptOrphan(runId, 'its worker stopped (lost or killed)').catch(() => undefined));
    o.host.takeUpStartedRunsWith((status) => this.takeUpShared(status));
    if (o.queue.shared && o.store.queuedRuns) {
      this.reconciler = setInterval(() => void this.reconcile().catch(() => undefined), o.reconcileMs ?? 10_000);
      this.reconciler.unref();
    }
  }

  /** No more looking for what the shared queue lost (the service is closing). */
  stop(): void {
    clearInterval(this.reconciler);
  }

  /** At start (`resumeOnStart`): every run whose process died and that can be resumed is taken up. */
  async resumeAtStart(): Promise<void> {
    const resumable = new Set(this.o.local?.resumable ?? []);
    for (const id of resumable) {
      // a subagent whose parent is resumed too is taken up by the parent's run_agent call, which waits for it
      const parent = (await this.o.store.get(id))?.parent_run_id;
      if (parent && resumable.has(parent)) continue;
      await this.resumeNow(id);
    }
  }

  /** Runs whose process died and that `resume` would take up. */
  resumableRuns(): string[] {
    return [...(this.o.local?.resumable ?? [])].filter((id) => !this.o.live.has(id));
  }

  /**
   * Takes up a run whose process died, from its checkpoint: same run_id, folder and event stream.
   * A run that cannot be resumed (no or a damaged checkpoint, too many resumes, its agent says
   * interrupt) ends `interrupted` saying why; either way the run's status is returned.
   */
  async resume(runId: string): Promise<RunStatusFile> {
    const { o } = this;
    if (o.gate.closed) fail('wrong_state', 'the run service is closed');
    if (o.live.has(runId)) fail('wrong_state', `run ${runId} is running in this process`);
    const status = await o.store.get(runId);
    if (!status) fail('not_found', `run ${runId} not found`);
    if (isTerminalRunState(status.status))
      fail('wrong_state', `run ${runId} is already ${status.status}: only a run whose process died can be resumed`, { status: status.status });
    if (await ownedByLiveProcess(o.runsDir, runId))
      fail('wrong_state', `run ${runId} is running in another runtrail process (pid in its runtime/owner.json)`, {
        status: status.status,
        elsewhere: true,
      });
    await this.resumeNow(runId);
    const live = o.live.get(runId);
    return live ? { ...live.status } : ((await o.store.get(runId)) ?? status);
  }

  /** The subagent run `parent`'s call `toolCallId` started before its process died (resumed beside the
   *  parent's queue slot when it died too), or null when the call started none. */
  async childOfCall(parent: RunRecord, toolCallId: string): Promise<RunStatusFile | null> {
    if (!toolCallId) return null;
    const { live, store } = this.o;
    for (const id of parent.children) {
      const s = live.get(id)?.status ?? (await store.get(id));
      if (s?.parent_tool_call_id !== toolCallId) continue;
      if (!isTerminalRunState(s.status) && !live.has(id)) await this.resumeNow(id, { beside: true });
      return { ...(live.get(id)?.status ?? (await store.get(id)) ?? s) };
    }
    return null;
  }

  private resumeNow(runId: string, o: { beside?: boolean } = {}): Promise<void> {
    let p = this.resuming.get(runId);
    if (!p) {
      p = this.resumeOnce(runId, o).finally(() => this.resuming.delete(runId));
      this.resuming.set(runId, p);
    }
    return p;
  }

  private async resumeOnce(runId: string, o: { beside?: boolean }): Promise<void> {
    const { live, store, runsDir, registry, host, queue } = this.o;
    this.o.local?.resumable.delete(runId);
    const status = await store.get(runId);
    if (!status || isTerminalRunState(status.status) || live.has(runId)) return;
    const root = join(runsDir, runId);
    const plugin = registry.get(status.plugin);
    const interrupt = async (why: DiagnosisDict) => {
      await markInterrupted(runsDir, status, plugin?.artifacts ?? [], why).catch(() => undefined);
      store.note(status);
    };
    try {
      repairEventsFile(join(root, RUN_FILES.events));
      const d = await planResume(root, status, { settings: durabilityOf(this.o), agentDurability: plugin ? (plugin.durability ?? 'resume') : null });
      this.o.log(takenUpLine(runId, status.plugin, d, ''));
      if (d.kind === 'interrupt') return await interrupt(d.diagnosis);
      // what the dead process left running ends before the run goes on
      const told = d.kind === 'resume' ? d.point : d.start;
      const now = await endLeftoverSessions(root);
      const leftovers = [...told.leftovers, now.text].filter(Boolean).join('; ');
      const leftoverOutput = [...told.leftoverOutput, now.output].filter(Boolean).join('\n\n');
      const rec = await host.rebuild(runId, { lastSeq: d.lastSeq });
      if (!rec) return;
      rec.durability =
        d.kind === 'resume' ? { checkpoint: true, resume: { ...d, leftovers, leftoverOutput } } : { checkpoint: true, restart: { ...d, leftovers } };
      store.note(rec.status);
      // a subagent runs beside its parent's queue slot, as when it was started
      if (o.beside) host.startBeside(rec);
      else await queue.enqueue(runId);
    } catch (e) {
      live.drop(runId);
      await interrupt(resumeFailed(status.status, e));
    }
  }

  /**
   * A run of the shared queue whose worker stopped, claimed by this process's worker: resumed here from
   * its checkpoint in the shared store, or ended interrupted, under the same rules as one process.
   */
  private async takeUpShared(status: RunStatusFile): Promise<RunRecord | null> {
    const { store, runsDir, registry, host, live } = this.o;
    const runId = status.run_id;
    if (!canResumeShared(store)) {
      await this.interruptOrphan(runId, 'its worker stopped (lost or killed)');
      return null;
    }
    const plugin = registry.get(status.plugin);
    try {
      const taken = await takeUpSharedRun(runsDir, status, {
        store,
        settings: durabilityOf(this.o),
        agentDurability: plugin ? (plugin.durability ?? 'resume') : null,
        contract: plugin?.artifacts ?? [],
      });
      if (taken.decision) this.o.log(takenUpLine(runId, status.plugin, taken.decision, 'on this worker '));
      if (taken.kind !== 'take up') return null;
      const rec = await host.rebuild(runId, { lastSeq: taken.decision.kind === 'interrupt' ? undefined : taken.decision.lastSeq });
      if (rec) rec.durability = taken.durability;
      return rec;
    } catch (e) {
      live.drop(runId);
      const diagnosis = resumeFailed(status.status, e);
      await interruptInSharedStore(runsDir, status, plugin?.artifacts ?? [], sharedIo(store), diagnosis).catch(() => undefined);
      return null;
    }
  }

  /** A run whose worker died: failed as interrupted by this node, unless another node was first. */
  async interruptOrphan(runId: string, why: string): Promise<boolean> {
    const { store, runsDir, registry } = this.o;
    const status = await store.get(runId);
    if (!status || isTerminalRunState(status.status) || !store.claimTerminal || !store.insertEvents) return false;
    return interruptInSharedStore(
      runsDir,
      status,
      registry.get(status.plugin)?.artifacts ?? [],
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
   * back into it; so do runs whose worker is gone (the stalled check that would have found them lived
   * in Redis), for the worker that claims them to resume them or end them under the durability rules.
   */
  private async reconcile(): Promise<void> {
    const { store, queue, live } = this.o;
    for (const runId of (await store.queuedRuns?.(5_000)) ?? []) {
      if (queue.has && !(await queue.has(runId))) await queue.enqueue(runId);
    }
    const gone = this.o.workerGone;
    if (!gone) return;
    for (const runId of (await store.activeRuns?.(5_000)) ?? []) {
      if (live.has(runId) || !(await gone(runId))) continue;
      if (queue.reclaim && canResumeShared(store) && (await this.mayBeTakenUp(runId))) await queue.reclaim(runId);
      else await this.interruptOrphan(runId, 'its worker stopped (no sign of life from it)');
    }
  }

  /** Whether a dead worker's run goes back in the queue: not when the operator or its agent said it
   *  is not resumed (no worker would take it up, so it would wait there for nothing); the worker that
   *  claims it decides the rest from its checkpoint. */
  private async mayBeTakenUp(runId: string): Promise<boolean> {
    if (!durabilityOf(this.o).resume) return false;
    const status = await this.o.store.get(runId);
    return !status || this.o.registry.get(status.plugin)?.durability !== 'interrupt';
  }
}
