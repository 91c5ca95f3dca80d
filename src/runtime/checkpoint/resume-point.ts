/**
 * Reading a run's checkpoint records back into the point a resumed attempt starts from: the
 * conversation, counters and plan of its last step, the tool-call journal, the approvals asked and
 * the messages not yet given to the model, or, for a run that stopped before its loop began, what
 * it had recorded before that.
 */
import type { ChatMessage } from '../../providers/model-provider.js';
import type { DecisionSource } from '../../events/agent-event.js';
import type { LoopCounters } from '../loop/agent-loop.js';
import { readCheckpointFile, type CheckpointRead } from './checkpoint-log.js';
import { CHECKPOINT_VERSION, type CheckpointRecord, type RecordedApproval, type RecordedResult } from './checkpoint-records.js';
import type { MetricsSnapshot, ModelTurnLine } from '../metrics/run-metrics.js';
import type { TodoState } from '../loop/plan-progress.js';

/** A tool call as the journal holds it: its arguments, and its result once it finished. */
export interface CallJournalEntry {
  name: string;
  args: unknown;
  /** what the call meant to leave behind (its tool's `intent`), when the tool says */
  intent?: unknown;
  /** absent while the call had started and not finished */
  result?: RecordedResult;
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
  /** of those, the attempts that followed a crash rather than a stop on purpose (what max_resumes bounds) */
  crashResumes: number;
  /** the last attempt was stopped on purpose (a deploy): taking the run up again is no crash's doing */
  left: boolean;
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
  crashResumes: number;
  left: boolean;
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
  // resumes that followed an attempt stopped on purpose, and whether the latest attempt was
  let resumesAfterLeaving = 0;
  let left = false;
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
          crashResumes: resumes - resumesAfterLeaving,
          left,
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
        if (left) resumesAfterLeaving++;
        left = false;
        if (point) Object.assign(point, { resumes, crashResumes: resumes - resumesAfterLeaving, left });
        // what earlier attempts left was told to the model then
        leftovers.length = 0;
        leftoverOutput.length = 0;
        break;
      case 'left':
        left = true;
        if (point) point.left = true;
        break;
      case 'leftovers':
        if (r.text) leftovers.push(r.text);
        if (r.output) leftoverOutput.push(r.output);
        break;
    }
  }
  if (!point)
    return {
      ok: true,
      point: null,
      start: { resumes, crashResumes: resumes - resumesAfterLeaving, left, queued, leftovers, leftoverOutput, tornTail: read.tornTail },
    };
  return { ok: true, point };
}

function noBase(file: string, i: number): LoadedCheckpoint {
  return { ok: false, code: 'checkpoint_corrupt', summary: `the run's checkpoint has a step before its base record (line ${i + 1})`, detail: file };
}
