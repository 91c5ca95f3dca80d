/**
 * The durable side of runs (the RunStore seam, one of the three a cluster swaps): each run's status record and its event log,
 * listing, reading back and replay. Locally these are the files of the run folder
 * (`runtime/run_status.json`, `runtime/events.jsonl`) and an index in memory; a shared store
 * (PostgreSQL) keeps the same records and events for every node.
 */
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentEvent, RunStatus } from '../../events/agent-event.js';
import type { DiagnosisDict } from '../../events/diagnosis.js';
import type { ArtifactContract } from '../agent.js';
import { EventStore, readEvents } from './event-store.js';
import { completeTerminalEvent, endedOnDisk, endLeftovers, markInterrupted, ownedByLiveProcess } from './interrupted-runs.js';
import { isRunId } from './run-id.js';
import type { RunListQuery, RunStatusFile } from '../run-service-types.js';
import { isTerminalRunState } from '../run-state-machine.js';
import { RunFolder } from './run-folder.js';
import { RunStatusWriter } from './run-status-writer.js';
import type { RunWorkspace } from './run-workspace.js';
import type { CheckpointLineStore } from '../checkpoint/checkpoint-store.js';
import { interrupted } from '../errors.js';

/** Where a run's events go, in seq order, as the bus publishes them. */
export interface RunEventLog {
  append(event: AgentEvent): void;
  /** Events published to the log and not yet durable (a full disk holds them back). */
  unwritten(after?: number): AgentEvent[];
  close(): void;
  /** Resolves once every appended event is durable (a shared store commits in batches). */
  settled?(): Promise<void>;
}

export interface RunStore {
  /** True when other processes (API nodes, workers) read and write the same records. */
  readonly shared: boolean;
  /** Loads what exists and repairs what a crash left behind; idempotent. */
  init(): Promise<void>;
  get(runId: string): Promise<RunStatusFile | null>;
  /** Newest first (by run id). */
  list(q: RunListQuery): Promise<{ runs: RunStatusFile[]; total: number }>;
  /** The runs of a conversation that ended, oldest first (the history a new run in it receives). */
  endedInConversation(conversationId: string, limit: number): Promise<RunStatusFile[]>;
  /** Keeps the latest status in memory at once (stats, list) before it is written. */
  note(status: RunStatusFile): void;
  /** Writes the status record of a run. */
  save(status: RunStatusFile, workspace: RunWorkspace): Promise<void>;
  /** Drops every record of a run whose creation failed: no phantom `queued` run is left behind. */
  forget(runId: string): Promise<void>;
  openLog(runId: string, root: string): RunEventLog;
  /** The run's events after `after`, from the durable log. */
  readEvents(runId: string, after: number): Promise<AgentEvent[]>;
  countByState(): Partial<Record<RunStatus, number>>;
  close?(): Promise<void>;
  /** A shared store: take a run to its terminal status exactly once across the nodes. */
  claimTerminal?(status: RunStatusFile): Promise<boolean>;
  /** A shared store: take up a resumed attempt of a run exactly once across the nodes; false when another did. */
  claimResume?(runId: string, attempt: number): Promise<boolean>;
  /** Where checkpoints are kept when not in the run folders (a shared store: PostgreSQL), as lines. */
  readonly checkpoints?: CheckpointLineStore;
  /** A shared store: add events (a dead worker's, from its file) that were never committed. */
  insertEvents?(runId: string, events: AgentEvent[]): Promise<void>;
  /** A shared store: runs claimed by a worker and not finished, unchanged for `olderThanMs`. */
  activeRuns?(olderThanMs: number): Promise<string[]>;
  /** A shared store: throws (ServiceUnavailableError) when it cannot be reached now. */
  ping?(): Promise<void>;
  /** A shared store: runs waiting longer than `olderThanMs` (a flushed Redis may have lost their jobs). */
  queuedRuns?(olderThanMs: number): Promise<string[]>;
}

/** One machine, no services: the run folders under `runsDir`. */
export class LocalRunStore implements RunStore {
  readonly shared = false;
  private readonly index = new Map<string, RunStatusFile>();
  private initPromise: Promise<void> | null = null;

  constructor(
    readonly runsDir: string,
    /** The artifact contract of a plugin by name (an interrupted run's manifest lists what it made). */
    private readonly artifactsOf: (plugin: string) => ArtifactContract[],
    /** Runs this process holds live: init leaves them alone. */
    private readonly isLive: (runId: string) => boolean = () => false,
    /** A run whose process died: left as it is to be resumed (null), or the diagnosis it ends
     *  `interrupted` with. Without it every such run ends interrupted. */
    private readonly afterCrash?: (status: RunStatusFile) => Promise<DiagnosisDict | null>,
  ) {}

  /** Runs whose process died and that can be resumed (init left them as they were). */
  readonly resumable = new Set<string>();

  init(): Promise<void> {
    this.initPromise ??= this.load();
    return this.initPromise;
  }

  /** Runs a crash left live become failed (`interrupted`) with a terminal event; their leftover processes end. */
  private async load(): Promise<void> {
    await mkdir(this.runsDir, { recursive: true });
    const names = (await readdir(this.runsDir)).filter(isRunId).sort();
    for (const id of names) {
      if (this.isLive(id)) continue;
      const status = await this.readStatusFile(id);
      if (!status) continue;
      if (!isTerminalRunState(status.status) && !(await ownedByLiveProcess(this.runsDir, id))) {
        try {
          // a run whose terminal event is on disk ended: neither resumed nor interrupted
          if (await endedOnDisk(this.runsDir, status, this.artifactsOf(status.plugin))) {
            await endLeftovers(join(this.runsDir, id));
            this.index.set(id, status);
            continue;
          }
          const why = this.afterCrash ? await this.afterCrash(status) : undefined;
          if (why === null) {
            this.resumable.add(id);
            this.index.set(id, status);
            continue;
          }
          await markInterrupted(this.runsDir, status, this.artifactsOf(status.plugin), why);
        } catch (e) {
          // one unreadable run folder must not fail init() (and with it every later call): the run is
          // still not live, so it is failed/interrupted here and its status written when possible
          const folder = new RunFolder(this.runsDir, id);
          const writer = new RunStatusWriter(status, (s) => folder.writeStatus(s));
          writer.ended({
            status: 'failed',
            finished_at: status.finished_at ?? new Date().toISOString(),
            final_answer: status.final_answer,
            diagnosis: interrupted(
              status.status,
              'the runtime stopped before it finished',
              `its files could not be closed: ${(e as Error)?.message ?? String(e)}`,
            ),
            last_seq: status.last_seq,
          });
          await writer.save().catch(() => undefined);
        }
      } else if (isTerminalRunState(status.status) && !(await ownedByLiveProcess(this.runsDir, id))) {
        // a live owner writes its status just before its terminal event: only a dead owner's run is repaired
        await completeTerminalEvent(this.runsDir, status, this.artifactsOf(status.plugin)).catch(() => false);
        // killed while it finished: what it still ran is ended too
        await endLeftovers(join(this.runsDir, id));
      }
      this.index.set(id, status);
    }
  }

  async readStatusFile(runId: string): Promise<RunStatusFile | null> {
    return new RunFolder(this.runsDir, runId).readStatus();
  }

  async get(runId: string): Promise<RunStatusFile | null> {
    await this.init();
    const s = this.index.get(runId) ?? (await this.readStatusFile(runId));
    return s ? { ...s } : null;
  }

  /** Picks up runs another process (e.g. the CLI beside a server) created since init. */
  private async refresh(): Promise<void> {
    let names: string[];
    try {
      names = (await readdir(this.runsDir)).filter((n) => isRunId(n) && !this.index.has(n));
    } catch {
      return;
    }
    for (const id of names) {
      const s = await this.readStatusFile(id);
      if (s) this.index.set(id, s);
    }
  }

  async list(q: RunListQuery): Promise<{ runs: RunStatusFile[]; total: number }> {
    await this.init();
    await this.refresh();
    let runs = [...this.index.values()].sort((a, b) => b.run_id.localeCompare(a.run_id));
    if (q.status) runs = runs.filter((r) => r.status === q.status);
    if (q.statuses) {
      const any = q.statuses;
      runs = runs.filter((r) => any.includes(r.status));
    }
    if (q.plugin) runs = runs.filter((r) => r.plugin === q.plugin);
    if (q.model) runs = runs.filter((r) => r.model === q.model || `${r.provider}:${r.model}` === q.model);
    if (q.conversation) runs = runs.filter((r) => r.conversation_id === q.conversation);
    if (q.tenant !== undefined) runs = runs.filter((r) => (r.tenant_id || 'default') === q.tenant);
    if (q.goal) {
      const words = q.goal.toLowerCase();
      runs = runs.filter((r) => r.goal.toLowerCase().includes(words));
    }
    const total = runs.length;
    const offset = Math.max(0, q.offset ?? 0);
    const limit = Math.max(0, q.limit ?? 50);
    return { runs: runs.slice(offset, offset + limit).map((r) => ({ ...r })), total };
  }

  async endedInConversation(conversationId: string, limit: number): Promise<RunStatusFile[]> {
    return [...this.index.values()]
      .filter((s) => s.conversation_id === conversationId && isTerminalRunState(s.status))
      .sort((a, b) => a.run_id.localeCompare(b.run_id))
      .slice(-limit);
  }

  note(status: RunStatusFile): void {
    this.index.set(status.run_id, status);
  }

  save(status: RunStatusFile, workspace: RunWorkspace): Promise<void> {
    return workspace.folder.writeStatus(status);
  }

  async forget(runId: string): Promise<void> {
    this.index.delete(runId);
  }

  openLog(_runId: string, root: string): RunEventLog {
    return new EventStore(RunFolder.at(root).path('events'));
  }

  readEvents(runId: string, after: number): Promise<AgentEvent[]> {
    return readEvents(new RunFolder(this.runsDir, runId).path('events'), after);
  }

  countByState(): Partial<Record<RunStatus, number>> {
    const byState: Partial<Record<RunStatus, number>> = {};
    for (const s of this.index.values()) byState[s.status] = (byState[s.status] ?? 0) + 1;
    return byState;
  }
}
