/**
 * Writing a run's checkpoint (the records are `checkpoint-records.ts`): `RunCheckpoint`, which a
 * live attempt appends with after every model turn, tool call, approval and steering message, and
 * the note added to a dead run's file that its background processes were ended.
 */
import type { DecisionSource } from '../../events/agent-event.js';
import type { ChatMessage } from '../../providers/model-provider.js';
import type { ToolResult } from '../../tools/tool.js';
import type { LoopCounters } from '../loop/agent-loop.js';
import { appendFileSync } from 'node:fs';
import { maskSecrets } from '../../events/secret-masker.js';
import { CheckpointLogWriter, checkpointLine, repairCheckpointFile, type CheckpointLog } from './checkpoint-log.js';
import {
  CHECKPOINT_VERSION,
  type CheckpointRecord,
  type JournalledResult,
  type RecordedApproval,
  type RecordedResult,
  type Stamp,
  type StateParts,
} from './checkpoint-records.js';
import type { MetricsSnapshot, ModelTurnLine } from '../metrics/run-metrics.js';
import type { TodoState } from '../loop/plan-progress.js';

/** The record saying a dead run's background processes were ended (before it is resumed), and what they printed last. */
export function leftoversRecord(text: string, output = ''): CheckpointRecord {
  return { k: 'leftovers', text, ...(output ? { output } : {}), seq: 0, at: Date.now(), usedMs: 0 };
}

/** Notes in a dead run's checkpoint file that its background processes were ended (before it is resumed). */
export function noteLeftovers(file: string, text: string, output = ''): void {
  repairCheckpointFile(file);
  appendFileSync(file, checkpointLine(leftoversRecord(text, output), maskSecrets));
}

/** The state the loop and the engine hand over at each step. Every part but `messages` is a snapshot
 *  of that moment: a step's record may be made a little later (at the end of its burst of writes). */
export interface CheckpointState {
  messages: readonly ChatMessage[];
  loop: LoopCounters;
  metrics: MetricsSnapshot;
  turns: ModelTurnLine[];
  provider?: unknown;
  plan?: TodoState;
}

/**
 * Writes a run's checkpoint records. `lastSeq` is the run's bus; `usedBeforeMs` the run time of the
 * attempts before this one. Write failures (a full disk) are kept, not thrown into the run: the run
 * goes on, and `failure` says its checkpoint stopped (a resume then starts from the last good record).
 */
export class RunCheckpoint {
  private readonly log: CheckpointLog<CheckpointRecord>;
  /** messages of the conversation already in the file */
  private recorded = 0;
  private recordedOf: readonly ChatMessage[] | null = null;
  private readonly attemptStart = Date.now();
  /** results of calls finished in this attempt whose tool message is not written yet, by call id */
  private readonly finished = new Map<string, string>();
  /** steps not made into a record yet: their messages and model-call lines, and the state of the last */
  private unwrittenStep: { add: Array<ChatMessage | JournalledResult>; turns: ModelTurnLine[]; state: CheckpointState; stamp: Stamp } | null = null;
  failure: Error | null = null;

  /** `log`: a file's path, or a log a CheckpointStore opened (PostgreSQL for several nodes). */
  constructor(
    log: string | CheckpointLog<CheckpointRecord>,
    private readonly o: { lastSeq: () => number; usedBeforeMs?: number; mask?: (json: string) => string },
  ) {
    this.log = typeof log === 'string' ? new CheckpointLogWriter<CheckpointRecord>(log, o.mask) : log;
  }

  /** Run time used over all attempts, now. */
  usedMs(): number {
    return (this.o.usedBeforeMs ?? 0) + (Date.now() - this.attemptStart);
  }

  private stamp(): Stamp {
    return { seq: this.o.lastSeq(), at: Date.now(), usedMs: this.usedMs() };
  }

  private append(r: CheckpointRecord): void {
    try {
      this.log.append(r);
    } catch (e) {
      this.failure ??= e as Error;
    }
  }

  /** The whole conversation: at the start, and after a compaction replaced its beginning. */
  base(system: string, s: CheckpointState): void {
    this.append({ k: 'base', v: CHECKPOINT_VERSION, system, messages: [...s.messages], ...parts(s), ...this.stamp() });
    // the tool messages written whole here need none of the results waiting for a step
    this.finished.clear();
    this.recorded = s.messages.length;
    this.recordedOf = s.messages;
  }

  /**
   * After a model turn or a tool result: the messages added since the last record, and the counters.
   *
   * Steps of tool results with no other record between them are written as one (the results of
   * all, the state of the last): the results of a turn's parallel read-only calls arrive together
   * and were one step record each, each repeating the counters, metrics and plan (~0.9 KB). Made
   * into one line, a 1,000-call run of 10 parallel read-only calls a turn serialises 200 step
   * records instead of 1,100, and its checkpoint shrinks from 1,341 KiB to 641 KiB. Nothing is
   * lost: the steps of one burst went to the file in the same write anyway, so the file never held
   * the intermediate ones alone.
   */
  step(system: string, s: CheckpointState): void {
    // a conversation that shrank or was replaced (compaction) is written whole
    if (s.messages !== this.recordedOf || s.messages.length < this.recorded) return this.base(system, s);
    // a tool result the journal holds already is not written a second time
    const add = s.messages.slice(this.recorded).map((m): ChatMessage | JournalledResult => {
      if (m.role !== 'tool' || m.images || this.finished.get(m.toolCallId) !== m.content) return m;
      this.finished.delete(m.toolCallId);
      return { role: 'tool', toolCallId: m.toolCallId, toolName: m.toolName, isError: m.isError, contentInJournal: true };
    });
    this.recorded = s.messages.length;
    const p = this.unwrittenStep;
    if (p) {
      p.add.push(...add);
      p.turns.push(...s.turns);
      p.state = s;
      p.stamp = this.stamp();
    } else this.unwrittenStep = { add, turns: [...s.turns], state: s, stamp: this.stamp() };
    this.log.appendLast(this.writeStep);
    // a step that adds more than results the journal holds is made at once: its messages (an
    // assistant turn's call arguments) are objects that hooks and handlers are given next
    if (!add.every((m) => 'contentInJournal' in m)) this.log.settleLast();
  }

  /** The step record of the steps since the last record, made when it is written. */
  private readonly writeStep = (): CheckpointRecord => {
    const p = this.unwrittenStep;
    this.unwrittenStep = null;
    if (!p) throw new Error('no step to write');
    return { k: 'step', add: p.add, ...parts(p.state), turns: p.turns, ...p.stamp };
  };

  /** Before a handler runs. `durable`: the record is on the disk before this resolves (a call that
   *  is not idempotent must never run without it, or a resume could run it twice). */
  callStarted(id: string, name: string, args: unknown, durable: boolean, intent?: unknown): Promise<void> | void {
    this.append({ k: 'call', phase: 'started', id, name, args, ...(intent !== undefined ? { intent } : {}), ...this.stamp() });
    if (durable) return this.log.durable().catch((e: Error) => void (this.failure ??= e));
  }

  callFinished(id: string, name: string, result: ToolResult): void {
    const kept: RecordedResult = { ok: result.ok, content: result.content };
    if (result.details !== undefined) kept.details = result.details;
    if (result.diagnosis) kept.diagnosis = result.diagnosis;
    this.append({ k: 'call', phase: 'finished', id, name, result: kept, ...this.stamp() });
    this.finished.set(id, result.content);
  }

  approval(toolCallId: string, a: RecordedApproval): void {
    this.append({ k: 'approval', toolCallId, ...a, ...this.stamp() });
  }

  message(m: { id: string; mode: 'steer' | 'follow_up'; text: string; from: DecisionSource }): void {
    this.append({ k: 'message', ...m, ...this.stamp() });
  }

  delivered(ids: string[]): void {
    if (ids.length) this.append({ k: 'delivered', ids, ...this.stamp() });
  }

  resumed(attempt: number, fromSeq: number): void {
    this.append({ k: 'resumed', attempt, fromSeq, ...this.stamp() });
  }

  /** Every record so far on the disk. */
  durable(): Promise<void> {
    return this.log.durable();
  }

  close(): Promise<void> {
    return this.log.close();
  }
}

function parts(s: CheckpointState): StateParts {
  return {
    loop: { ...s.loop },
    metrics: s.metrics,
    turns: s.turns,
    ...(s.provider !== undefined ? { provider: s.provider } : {}),
    ...(s.plan ? { plan: s.plan } : {}),
  };
}
