/**
 * Access: what callers ask of a run once it exists — its status, the list, its events, manifest and
 * documents, waiting for its end, and acting on it while it runs (cancel, a person's message, an
 * approval's decision). A run this process holds is answered from its live record; any other from the
 * store, and on several nodes a cancel or a wait reaches the node that runs it through the queue and
 * the event fanout.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { AgentEvent, DecisionSource, RunStatus } from '../../events/agent-event.js';
import type { StepApproval } from '../../events/engine-event.js';
import { isInside, realpathLoose } from '../../tools/confine-path.js';
import { afterCheck } from '../loop/after-check.js';
import type { EventFanout } from '../storage/event-fanout.js';
import type { LiveRuns } from './live-runs.js';
import { RunFolder } from '../storage/run-folder.js';
import type { RunHost } from './run-host.js';
import { isRunId } from '../storage/run-id.js';
import type { MessageMode } from '../loop/run-inbox.js';
import type { RunQueue } from './run-queue.js';
import type { RunRecord } from '../run/run-record.js';
import type { RunListQuery, RunStatusFile } from '../run-service-types.js';
import { isTerminalRunState } from '../run-state-machine.js';
import type { RunStore } from '../storage/run-store.js';
import { fail, stopRun } from '../errors.js';

export interface RunAccessOptions {
  live: LiveRuns;
  host: RunHost;
  queue: RunQueue;
  store: RunStore;
  fanout: EventFanout;
  runsDir: string;
}

export class RunAccess {
  constructor(private readonly o: RunAccessOptions) {}

  async get(runId: string): Promise<RunStatusFile | null> {
    if (!isRunId(runId)) return null;
    const live = this.o.live.get(runId);
    if (live) return { ...live.status };
    return this.o.store.get(runId);
  }

  list(q: RunListQuery): Promise<{ runs: RunStatusFile[]; total: number }> {
    return this.o.store.list(q);
  }

  /** `because`: the reason the run's status gives (`run cancelled: <because>`). */
  async cancel(runId: string, because?: string): Promise<RunStatusFile> {
    const rec = this.o.live.get(runId);
    if (!rec) {
      const s = await this.get(runId);
      if (!s) fail('not_found', `run ${runId} not found`);
      if (!isTerminalRunState(s.status) && this.o.queue.shared) return this.cancelElsewhere(runId);
      if (!isTerminalRunState(s.status)) {
        // e.g. a CLI run watched through a server on the same data dir: only its own process can stop it
        fail('wrong_state', `run ${runId} is ${s.status} in another runtrail process; cancel it there (Ctrl-C for a CLI run)`, {
          status: s.status,
          elsewhere: true,
        });
      }
      fail('wrong_state', `run ${runId} is already ${s.status}`, { status: s.status });
    }
    if (rec.machine.isTerminal) return rec.done;
    stopRun(rec.abort, { kind: 'cancelled', reason: because || null });
    if (await this.o.queue.remove(runId)) await this.o.host.cancelledWhileQueued(rec);
    return rec.done;
  }

  /** A run this node does not hold: taken out of the queue while it waits, else its worker is told. */
  private async cancelElsewhere(runId: string): Promise<RunStatusFile> {
    if (await this.o.queue.remove(runId)) {
      const rec = await this.o.host.rebuild(runId);
      if (rec) {
        stopRun(rec.abort, { kind: 'cancelled', reason: null });
        await this.o.host.cancelledWhileQueued(rec);
        return { ...(await rec.done) };
      }
    }
    await this.o.queue.signalCancel(runId);
    return this.wait(runId);
  }

  /** A person's message to a live run: `steer` reaches the model at the next tool boundary (a queued
   *  run's first turn), `follow_up` after its answer. A finished run answers wrong_state (409). */
  async sendMessage(
    runId: string,
    msg: { text: unknown; mode?: unknown; from: DecisionSource },
  ): Promise<{ id: string; mode: MessageMode; status: RunStatus }> {
    const mode = msg.mode ?? 'steer';
    if (mode !== 'steer' && mode !== 'follow_up')
      fail('invalid_request', `mode must be steer or follow_up, got ${JSON.stringify(mode)}`, {
        issues: [{ path: 'mode', message: 'must be steer or follow_up' }],
      });
    if (typeof msg.text !== 'string' || !msg.text.trim() || msg.text.length > 8000) {
      fail('invalid_request', 'text must be a non-empty string of at most 8,000 characters', {
        issues: [{ path: 'text', message: 'required, 1–8000 characters' }],
      });
    }
    const rec = await this.liveRecord(runId, 'messages reach live runs only; start a new run in the conversation');
    if (rec.machine.state === 'validating') fail('wrong_state', `run ${runId} is validating its answer: too late for a message`, { status: rec.machine.state });
    const m = rec.inbox.post(mode, msg.text.trim(), msg.from);
    return { id: m.id, mode, status: rec.status.status };
  }

  /** Decides an `ask` tool call of a live run. Unknown id: not_found; already decided: wrong_state (409). */
  async decideApproval(runId: string, approvalId: string, d: { decision: unknown; reason?: unknown; by: DecisionSource; who?: string }): Promise<StepApproval> {
    if (d.decision !== 'approve' && d.decision !== 'deny')
      fail('invalid_request', `decision must be approve or deny, got ${JSON.stringify(d.decision)}`, {
        issues: [{ path: 'decision', message: 'must be approve or deny' }],
      });
    if (d.reason !== undefined && (typeof d.reason !== 'string' || d.reason.length > 2000))
      fail('invalid_request', 'reason must be a string of at most 2,000 characters', {
        issues: [{ path: 'reason', message: 'a string, at most 2000 characters' }],
      });
    const rec = await this.liveRecord(runId, 'its approvals were decided or denied when it ended');
    const r = rec.approvals?.decide(approvalId, d.decision, d.by, typeof d.reason === 'string' && d.reason.trim() ? d.reason.trim() : undefined, d.who) ?? {
      ok: false as const,
      code: 'not_found' as const,
    };
    if (r.ok) return r.approval;
    if (r.code === 'already_decided')
      fail(
        'wrong_state',
        `approval ${approvalId} was already ${r.approval!.status === 'approved' ? 'approved' : 'denied'} (by ${r.approval!.by ?? 'someone'})`,
        {
          approval: r.approval,
        },
      );
    fail('not_found', `approval ${approvalId} not found in run ${runId}`, { pending: rec.approvals?.pending().map((a) => a.id) ?? [] });
  }

  /** The tool calls of a live run waiting for a decision. */
  pendingApprovals(runId: string): StepApproval[] {
    return this.o.live.get(runId)?.approvals?.pending() ?? [];
  }

  /** The live record of `runId`; not_found when there is no such run, wrong_state when it is not live here. */
  private async liveRecord(runId: string, whyNot: string): Promise<RunRecord> {
    const rec = this.o.live.get(runId);
    if (rec && !rec.machine.isTerminal) return rec;
    const s = await this.get(runId);
    if (!s) fail('not_found', `run ${runId} not found`);
    if (!isTerminalRunState(s.status))
      fail('wrong_state', `run ${runId} is ${s.status} in another runtrail process; send it there`, { status: s.status, elsewhere: true });
    fail('wrong_state', `run ${runId} is already ${s.status}: ${whyNot}`, { status: s.status });
  }

  events(runId: string, opts: { after?: number; signal?: AbortSignal } = {}): AsyncIterable<AgentEvent> {
    // the check, then the follower's own iterator: no generator layer of ours between a client and
    // the run's tail (a layer is a promise per event per client)
    return afterCheck(
      async () => {
        if (!this.o.live.has(runId) && !(await this.get(runId))) fail('not_found', `run ${runId} not found`);
      },
      () => this.o.fanout.follow(runId, opts.after ?? 0, opts.signal),
    );
  }

  async manifest(runId: string): Promise<unknown | null> {
    if (!isRunId(runId)) return null;
    return new RunFolder(this.o.runsDir, runId).readManifest();
  }

  async documentPath(runId: string, relPath: string): Promise<string | null> {
    const m = (await this.manifest(runId)) as { documents?: Array<{ path: string }> } | null;
    if (!m || typeof relPath !== 'string' || relPath.includes('\0')) return null;
    const doc = m.documents?.find((d) => d.path === relPath || d.path === `artifacts/${relPath}`);
    if (!doc) return null;
    const root = join(this.o.runsDir, runId);
    const abs = resolve(root, doc.path);
    // symlinks resolved before confining: a link in artifacts/ must not serve a file from outside the run
    const real = realpathLoose(abs);
    const artifacts = realpathLoose(join(root, 'artifacts'));
    if (real === artifacts || !isInside(real, artifacts) || !existsSync(abs)) return null;
    return abs;
  }

  async wait(runId: string): Promise<RunStatusFile> {
    const rec = this.o.live.get(runId);
    if (rec) return { ...(await rec.done) };
    const s = await this.get(runId);
    if (!s) fail('not_found', `run ${runId} not found`);
    if (isTerminalRunState(s.status) || !this.o.queue.shared) return s;
    // a run of another node: its terminal event ends the stream, then its record is final
    for await (const _ of this.o.fanout.follow(runId, s.last_seq > 0 ? s.last_seq - 1 : 0)) void _;
    return (await this.o.store.get(runId)) ?? s;
  }
}
