/**
 * The records of a run's checkpoint, `runtime/checkpoint.jsonl`: what the run needs to go on after
 * its process died. A `base` record holds the conversation as the model sees it (messages with their
 * provider metadata, e.g. signed reasoning blocks) and the system prompt; each later `step` record,
 * written after every model turn and every tool result, adds the messages since and the counters,
 * plan and model position at that point. `call` records are the tool-call journal: started (with its
 * arguments) before a handler runs, finished (with its result) after. Approvals and queued steering
 * messages have records of their own. A compaction writes a new base.
 *
 * events.jsonl stays the source of replay; this file is only read to resume. The writer is
 * `run-checkpoint.ts`; reading the records back into where a resumed attempt starts is `resume-point.ts`.
 */
import type { DecisionSource } from '../../events/agent-event.js';
import type { ChatMessage } from '../../providers/model-provider.js';
import type { ToolResult } from '../../tools/tool.js';
import type { LoopCounters } from '../loop/agent-loop.js';
import type { MetricsSnapshot, ModelTurnLine } from '../metrics/run-metrics.js';
import type { TodoState } from '../loop/plan-progress.js';

export const CHECKPOINT_VERSION = 1;

/** What every record carries: the last event seq published when it was written, wall time, and
 *  the run time used so far over all attempts (the timeout counts it). */
export interface Stamp {
  seq: number;
  at: number;
  usedMs: number;
}

/** What the run is at: written with the conversation (base) or the messages added since (step). */
export interface StateParts {
  loop: LoopCounters;
  metrics: MetricsSnapshot;
  /** model-call lines recorded since the previous record */
  turns: ModelTurnLine[];
  /** a model that replays (script) or numbers its calls (offline): where it is */
  provider?: unknown;
  plan?: TodoState;
}

/** A tool message whose content is its call's `finished` record (written once, not twice). */
export interface JournalledResult {
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
  /** an attempt stopped on purpose (a deploy, a worker drained): the attempt that takes the run up
   *  next is not counted against durability.max_resumes, which bounds crashes */
  | ({ k: 'left'; why: string } & Stamp)
  /** background processes of the dead attempt, ended before the run was resumed (the model is told) */
  | ({ k: 'leftovers'; text: string; output?: string } & Stamp);

/** An approval as its record keeps it. */
export interface RecordedApproval {
  id: string;
  status: 'pending' | 'approved' | 'denied';
  /** who decided, as the approval step names them */
  by?: string;
  reason?: string;
  who?: string;
}
