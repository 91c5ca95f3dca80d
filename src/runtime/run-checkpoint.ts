/**
 * A run's checkpoint, `runtime/checkpoint.jsonl`: what the run needs to go on after its process died.
 * A `base` record holds the conversation as the model sees it (messages with their provider
 * metadata, e.g. signed reasoning blocks) and the system prompt; each later `step` record, written
 * after every model turn and every tool result, adds the messages since and the counters, plan and
 * model position at that point. `call` records are the tool-call journal: started (with its
 * arguments) before a handler runs, finished (with its result) after. Approvals and queued steering
 * messages have records of their own. A compaction writes a new base.
 *
 * events.jsonl stays the source of replay; this file is only read to resume.
 */
import type { DecisionSource } from '../events/agent-event.js';
import type { ChatMessage } from '../providers/model-provider.js';
import type { ToolResult } from '../tools/tool.js';
import { RUN_FILES } from './run-files.js';
import { appendFileSync } from 'node:fs';
import { maskSecrets } from '../events/secret-masker.js';
import { CheckpointLogWriter, checkpointLine, readCheckpointFile, repairCheckpointFile, type CheckpointLog, type CheckpointRead } from './checkpoint-log.js';
import type { MetricsSnapshot, ModelTurnLine } from './run-metrics.js';
import type { TodoState } from './plan-progress.js';

export const CHECKPOINT_FILE = RUN_FILES.checkpoint;
export const CHECKPOINT_VERSION = 1;

/** The loop's own counters, restored with the conversation. */
export interface LoopCounters {
  /** model turns taken; absent in records written before the loop kept it (its metrics' iterations counted the same) */
  iterations?: number;
  toolCalls: number;
  lastText: string;
  answerPrefix: string;
  continuations: number;
  callCounter: number;
}

/** What every record carries: the last event seq published when it was written, wall time, and
 *  the run time used so far over all attempts (the timeout counts it). */
interface Stamp {
  seq: number;
  at: number;
  usedMs: number;
}

/** What the run is at: written with the conversation (base) or the messages added since (step). */
interface StateParts {
  loop: LoopCounters;
  metrics: MetricsSnapshot;
  /** model-call lines recorded since the previous record */
  turns: ModelTurnLine[];
  /** a model that replays (script) or numbers its calls (offline): where it is */
  provider?: unknown;
  plan?: TodoState;
}

/** A tool message whose content is its call's `finished` record (written once, not twice). */
interface JournalledResult {
  role: 'tool';
  toolCallId: string;
  toolName: string;
  isError: boolean;
  contentInJournal: true;
}

/** A tool result as the journal keeps it: what the model is given. */
export interface RecordedResult {
  ok: boolean;
  content: string;
  details?: unknown;
  diagnosis?: ToolResult['diagnosis'];
}

export type CheckpointRecord =
  | ({ k: 'base'; v: number; system: string; messages: ChatMessage[] } & StateParts & Stamp)
  | ({ k: 'step'; add: Array<ChatMessage | JournalledResult> } & StateParts & Stamp)
  /** `intent`: what the call is about to leave behind, as its tool declares it (a file's size and hash) */
  | ({ k: 'call'; phase: 'started'; id: string; name: string; args: unknown; intent?: unknown } & Stamp)
  | ({ k: 'call'; phase: 'finished'; id: string; name: string; result: RecordedResult } & Stamp)
  | ({ k: 'approval'; id: string; toolCallId: string; status: 'pending' | 'approved' | 'denied'; by?: string; reason?: string; who?: string } & Stamp)
  | ({ k: 'message'; id: string; mode: 'steer' | 'follow_up'; text: string; from: DecisionSource } & Stamp)
  | ({ k: 'delivered'; ids: string[] } & Stamp)
  /** an attempt that resumed the run: the events it continued after */
  | ({ k: 'resumed'; attempt: number; fromSeq: number } & Stamp)
  /** background processes of the dead attempt, ended before the run was resumed (the model is told) */
  | ({ k: 'leftovers'; text: string; output?: string } & Stamp);

export interface CallJournalEntry {
  name: string;
  args: unknown;
  /** what the call meant to leave behind (its tool's `intent`), when the tool says */
  intent?: unknown;
  /** absent while the call had started and not finished */
  result?: RecordedResult;
}

export interface RecordedApproval {
  id: string;
  status: 'pending' | 'approved' | 'denied';
  /** who decided, as the approval step names them */
  by?: string;
  reason?: string;
  who?: string;
}

/** Everything a resumed attempt starts from. */
export interface ResumePoint {
  system: string;
  messages: ChatMessage[];
  loop: LoopCounters;
  metrics: MetricsSnapshot;
  turns: ModelTurnLine[];
  provider?: unknown;
  plan?: TodoState;
  /** the tool-call journal, by call id */
  calls: Map<string, CallJournalEntry>;
  /** approvals asked, by tool call id (the latest of each) */
  approvals: Map<string, RecordedApproval>;
  /** steering and follow-up messages that arrived and were not yet given to the model */
  queued: Array<{ id: string; mode: 'steer' | 'follow_up'; text: string; from: DecisionSource }>;
  /** seq of the last event the conversation reflects: events after it belong to lost work */
  seq: number;
  /** wall time of the last record and the run time used up to it */
  at: number;
  usedMs: number;
  /** attempts that resumed the run before (0 for a run never resumed) */
  resumes: number;
  /** the last record was cut short by the crash and left out */
  tornTail: boolean;
  /** what was said of the dead attempt's background processes when they were ended */
  leftovers: string[];
  /** what those background sessions printed last (bounded, masked), for the model */
  leftoverOutput: string[];
}

/**
 * A run that stopped before its loop began (no base record yet: queued, or opening its MCP servers):
 * nothing of its work is lost, it starts again from its request (input/request.json). What it had
 * recorded before that is kept: its attempts, and a person's messages that arrived meanwhile.
 */
export interface StartPoint {
  resumes: number;
  queued: ResumePoint['queued'];
  leftovers: string[];
  leftoverOutput: string[];
  tornTail: boolean;
}

export type LoadedCheckpoint =
  | { ok: true; point: ResumePoint }
  | { ok: true; point: null; start: StartPoint }
  | { ok: false; code: 'checkpoint_corrupt'; summary: string; detail: string };

/** Reads a run's checkpoint file into the point a resumed attempt starts from. */
export function loadCheckpoint(file: string): LoadedCheckpoint {
  return resumePointOf(readCheckpointFile<CheckpointRecord>(file), file);
}

/** The point a resumed attempt starts from, out of a checkpoint's records read from `file` (a path, or where else they are kept). */
export function resumePointOf(read: CheckpointRead<CheckpointRecord>, file: string): LoadedCheckpoint {
  if (!read.ok) {
    return {
      ok: false,
      code: 'checkpoint_corrupt',
      summary: `the run's checkpoint is damaged at line ${read.line}`,
      detail: `${file}: line ${read.line}: ${read.reason}`,
    };
  }
  let point: ResumePoint | null = null;
  const calls = new Map<string, CallJournalEntry>();
  const approvals = new Map<string, RecordedApproval>();
  const queued: ResumePoint['queued'] = [];
  const leftovers: string[] = [];
  const leftoverOutput: string[] = [];
  let resumes = 0;
  // the model-call lines of every record, a compaction's base included: they are the run's history
  const turns: ModelTurnLine[] = [];
  for (const [i, r] of read.records.entries()) {
    switch (r.k) {
      case 'base':
        if (r.v !== CHECKPOINT_VERSION) {
          return {
            ok: false,
            code: 'checkpoint_corrupt',
            summary: `the run's checkpoint has version ${r.v}, this Runtrail reads version ${CHECKPOINT_VERSION}`,
            detail: `${file}: line ${i + 1}`,
          };
        }
        turns.push(...r.turns);
        point = {
          system: r.system,
          messages: [...r.messages],
          loop: r.loop,
          metrics: r.metrics,
          turns,
          ...(r.provider !== undefined ? { provider: r.provider } : {}),
          ...(r.plan ? { plan: r.plan } : {}),
          calls,
          approvals,
          queued,
          seq: r.seq,
          at: r.at,
          usedMs: r.usedMs,
          resumes,
          tornTail: read.tornTail,
          leftovers,
          leftoverOutput,
        };
        break;
      case 'step':
        if (!point) return noBase(file, i);
        for (const m of r.add) {
          if (!('contentInJournal' in m)) {
            point.messages.push(m);
            continue;
          }
          const content = calls.get(m.toolCallId)?.result?.content;
          if (content === undefined)
            return {
              ok: false,
              code: 'checkpoint_corrupt',
              summary: `the run's checkpoint refers to the result of call ${m.toolCallId}, which it does not hold (line ${i + 1})`,
              detail: file,
            };
          point.messages.push({ role: 'tool', toolCallId: m.toolCallId, toolName: m.toolName, content, isError: m.isError });
        }
        turns.push(...r.turns);
        Object.assign(point, { loop: r.loop, metrics: r.metrics, seq: r.seq, at: r.at, usedMs: r.usedMs });
        if (r.provider !== undefined) point.provider = r.provider;
        if (r.plan) point.plan = r.plan;
        break;
      case 'call':
        if (r.phase === 'started') calls.set(r.id, { name: r.name, args: r.args, ...(r.intent !== undefined ? { intent: r.intent } : {}) });
        else calls.set(r.id, { name: r.name, args: calls.get(r.id)?.args ?? null, result: r.result });
        break;
      case 'approval':
        approvals.set(r.toolCallId, {
          id: r.id,
          status: r.status,
          ...(r.by ? { by: r.by } : {}),
          ...(r.reason ? { reason: r.reason } : {}),
          ...(r.who ? { who: r.who } : {}),
        });
        break;
      case 'message':
        queued.push({ id: r.id, mode: r.mode, text: r.text, from: r.from });
        break;
      case 'delivered':
        for (const id of r.ids) {
          const at = queued.findIndex((m) => m.id === id);
          if (at >= 0) queued.splice(at, 1);
        }
        break;
      case 'resumed':
        resumes = r.attempt;
        if (point) point.resumes = resumes;
        // what earlier attempts left was told to the model then
        leftovers.length = 0;
        leftoverOutput.length = 0;
        break;
      case 'leftovers':
        if (r.text) leftovers.push(r.text);
        if (r.output) leftoverOutput.push(r.output);
        break;
    }
  }
  if (!point) return { ok: true, point: null, start: { resumes, queued, leftovers, leftoverOutput, tornTail: read.tornTail } };
  return { ok: true, point };
}

function noBase(file: string, i: number): LoadedCheckpoint {
  return { ok: false, code: 'checkpoint_corrupt', summary: `the run's checkpoint has a step before its base record (line ${i + 1})`, detail: file };
}

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
