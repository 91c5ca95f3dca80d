/**
 * One live run's checkpoint: the glue between the run's parts and runtime/checkpoint.jsonl. The loop
 * calls `onStep` after each model turn and tool result, the executor writes its tool-call journal
 * through `journal`, and approvals and a person's queued messages are recorded from the run's bus.
 * On a resumed attempt it also answers, from what the dead process recorded, what happened to a call.
 */
import type { AgentEventBus } from '../../events/agent-event-bus.js';
import { maskSecrets } from '../../events/secret-masker.js';
import type { ToolResult } from '../../tools/tool.js';
import { fileCheckpoints, type CheckpointStore } from './checkpoint-store.js';
import type { ResumePoint } from './resume-point.js';
import { RunCheckpoint, type CheckpointState } from './run-checkpoint.js';
import type { ToolCallJournal } from '../loop/tool-executor.js';

export class LiveCheckpoint {
  private readonly cp: RunCheckpoint;
  private system = '';
  private state: (() => CheckpointState) | null = null;
  private readonly off: () => void;
  readonly journal: ToolCallJournal;
  private readonly bus: AgentEventBus;

  /** `resume`: the point a resumed attempt starts from (its calls are answered from it); `attempt`:
   *  this attempt resumes the run (from its checkpoint, or from its start when it had none); `store`:
   *  where the records go (the run folder's file unless several nodes share PostgreSQL). */
  constructor(
    root: string,
    bus: AgentEventBus,
    private readonly resume: ResumePoint | null,
    attempt?: { attempt: number; fromSeq: number; usedMs: number },
    store: CheckpointStore = fileCheckpoints,
  ) {
    // a resumed attempt's file has the record the crash tore cut off first
    const log = store.open(bus.runId, root, { mask: maskSecrets, resumed: attempt !== undefined });
    this.cp = new RunCheckpoint(log, { lastSeq: () => bus.lastSeq, usedBeforeMs: attempt?.usedMs ?? 0 });
    // counted before anything of the attempt can kill the process again (an MCP server that starts,
    // a first turn): a run whose process dies every time reaches max_resumes instead of looping
    if (attempt) this.cp.resumed(attempt.attempt, attempt.fromSeq);
    this.journal = {
      prior: (id) => {
        const c = this.resume?.calls.get(id);
        if (!c) return undefined;
        return c.result ? { result: c.result as ToolResult } : { args: c.args, ...(c.intent !== undefined ? { intent: c.intent } : {}) };
      },
      // a sealed bus: the process is leaving the run to be resumed from what is recorded so far, and
      // what its calls do while they stop (a result saying they were aborted) is no part of it
      started: (id, name, args, durable, intent) => (bus.sealed ? undefined : this.cp.callStarted(id, name, args, durable, intent)),
      finished: (id, name, result) => (bus.sealed ? undefined : this.cp.callFinished(id, name, result)),
    };
    this.bus = bus;
    this.off = bus.subscribe((ev) => {
      if (ev.stream === 'tool' && ev.data.phase === 'approval') {
        const a = ev.data.approval;
        this.cp.approval(ev.data.toolCallId, {
          id: a.id,
          status: a.status,
          ...(a.by ? { by: a.by } : {}),
          ...(a.reason ? { reason: a.reason } : {}),
          ...(a.who ? { who: a.who } : {}),
        });
      } else if (ev.stream === 'run' && ev.data.type === 'message.received') {
        this.cp.message({ id: ev.data.id, mode: ev.data.mode, text: ev.data.text, from: ev.data.from });
      } else if (ev.stream === 'run' && ev.data.type === 'message.delivered') {
        this.cp.delivered(ev.data.ids);
      }
    });
  }

  /** Run time used over every attempt so far. */
  usedMs(): number {
    return this.cp.usedMs();
  }

  /** The loop exists: its whole conversation is written (the first record, or a resumed attempt's). */
  begin(system: string, state: () => CheckpointState): void {
    this.system = system;
    this.state = state;
    this.cp.base(system, state());
  }

  readonly onStep = (why: 'turn' | 'tool' | 'input' | 'compacted'): void => {
    if (!this.state || this.bus.sealed) return;
    if (why === 'compacted') this.cp.base(this.system, this.state());
    else this.cp.step(this.system, this.state());
  };

  /** Why the checkpoint stopped being written (a full disk), or null. */
  get failure(): Error | null {
    return this.cp.failure;
  }

  async close(): Promise<void> {
    this.off();
    await this.cp.close().catch(() => undefined);
  }
}
