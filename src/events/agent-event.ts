/**
 * The single internal stream of a run: every step the loop takes is one AgentEvent.
 * `seq` is gap-free from 1 per run; the bus assigns it. Payloads are discriminated by `stream`.
 */
import type { DiagnosisDict } from './diagnosis.js';
import type { RuntimeProcessEvent } from './process-event.js';
import type { StepApproval, StepNode } from './engine-event.js';

export type LifecycleData =
  | { phase: 'start'; startedAt: number }
  | { phase: 'end'; endedAt: number }
  | { phase: 'error'; endedAt: number; diagnosis: DiagnosisDict }
  /** The run's process died and another took the run up from its checkpoint, made when the run had
   *  published `fromSeq`; its events go on after the last one the dead process published. Assistant
   *  and reasoning deltas from `discardFromSeq` up to this event belong to a turn that is redone:
   *  channels drop them rather than show two answers. */
  | { phase: 'resumed'; resumedAt: number; attempt: number; fromSeq: number; discardFromSeq: number | null; diagnosis: DiagnosisDict };

/** `text` is the full visible text of the current assistant message so far, `delta` what this event adds.
 *  `phase: 'end'` closes one assistant message (delta is ''). */
export interface AssistantData {
  phase?: 'update' | 'end';
  text: string;
  delta: string;
  mediaUrls?: string[];
}

export interface ReasoningData {
  phase?: 'update' | 'end';
  text: string;
  delta: string;
}

/** `kind` picks the wire step kind: a compute skill call is a `skill` step, an MCP call an `mcp` step. */
export type ToolStepKind = 'tool' | 'skill' | 'mcp' | 'agent' | 'kb' | 'media';

export type ToolData =
  /** `serverTool`: an MCP tool's own name on its `server` (the wire step's `name`; `name` is the one the model called). */
  | { phase: 'start'; name: string; toolCallId: string; args: unknown; kind?: ToolStepKind; server?: string; serverTool?: string }
  /** `node` links the step to what the call started (a subagent's run): the wire re-sends the step with it. */
  | { phase: 'update'; name: string; toolCallId: string; partialResult: unknown; node?: StepNode }
  /** The call waits for a person (`status: pending`), then is decided (`approved` | `denied`, with who). */
  | { phase: 'approval'; name: string; toolCallId: string; approval: StepApproval }
  | {
      phase: 'result';
      name: string;
      toolCallId: string;
      isError: boolean;
      result: string;
      details?: unknown;
      diagnosis?: DiagnosisDict;
      durationMs?: number;
    };

export type CompactionData =
  | { phase: 'start'; tokensBefore?: number }
  | { phase: 'end'; willRetry: boolean; tokensBefore?: number; tokensAfter?: number; replacedMessages?: number; failed?: string };

/** Tokens of one model call, as runtime/model_turns.jsonl counts them. */
export interface ModelTokens {
  /** all input tokens, cached ones included */
  input: number;
  /** all output tokens, reasoning included */
  output: number;
  cached_input: number;
  cache_write: number;
  reasoning: number;
}

/** One model call (a provider retry is a call of its own, `attempt` 1, 2, …): what traces and the UI stream's steps are cut on,
 *  and what a run's metrics are folded from. Built by model-call-event.ts. */
export type ModelData =
  | { phase: 'start'; turn: number; attempt: number; provider: string; model: string }
  | ({ phase: 'end'; turn: number; attempt: number; provider: string; model: string } & ModelCallOutcome);

/** How one model call went, as its end reports it. */
export interface ModelCallOutcome {
  /** stop, tool-calls, length, content-filter, other; `error` for a failed call */
  finishReason: string;
  /** null when the provider reported no usage */
  tokens: ModelTokens | null;
  /** null when the model has no known price or no usage was reported */
  costUsd: number | null;
  /** wall clock (epoch ms) when the call was sent */
  startedAt: number;
  latencyMs: number;
  firstTokenMs: number | null;
  /** the diagnosis code of a failed call */
  error?: string;
}

export interface ProcessData {
  event: RuntimeProcessEvent;
}

export type RunStatus =
  | 'queued'
  | 'created'
  | 'planning'
  | 'model_thinking'
  | 'tool_executing'
  | 'awaiting_approval'
  | 'validating'
  | 'completed'
  | 'failed'
  | 'cancelled';

/** What started a run other than a request: a schedule at one of its fire times (ISO). */
export interface RunTrigger {
  type: 'schedule';
  schedule_id: string;
  fire_time: string;
}

/** Run-level facts: state changes, plan/todo progress, hooks, validation and the final outcome. */
export type RunData =
  | { type: 'run.created'; runId: string; plugin: string; goal: string; conversationId: string; trigger?: RunTrigger }
  | { type: 'run.state'; from: RunStatus | null; to: RunStatus }
  | { type: 'plan.updated'; todos: Array<{ id: string; title: string; status: 'pending' | 'in_progress' | 'completed' | 'failed' }> }
  | { type: 'hook.blocked'; hook: string; reasons: string[] }
  | { type: 'artifact.written'; path: string; bytes: number }
  | { type: 'artifact.rejected'; path: string; reasons: string[] }
  | { type: 'notice'; text: string }
  /** A person's message to a live run: `steer` reaches the model at the next tool boundary, `follow_up` after its answer. */
  | { type: 'message.received'; id: string; mode: 'steer' | 'follow_up'; text: string; from: DecisionSource }
  | { type: 'message.delivered'; ids: string[]; mode: 'steer' | 'follow_up' }
  /** A subagent run this run started (its own run_id and workspace). */
  | { type: 'subagent.started'; childRunId: string; agent: string; toolCallId: string }
  | {
      type: 'run.completed' | 'run.failed' | 'run.cancelled';
      status: 'completed' | 'failed' | 'cancelled';
      messageId: string;
      conversationId: string;
      content: string;
      usedSkills: string[];
      usedMcp: string[];
      diagnosis?: DiagnosisDict;
    };

/** Every run state, in the order a run passes them. */
export const RUN_STATUSES: readonly RunStatus[] = [
  'queued',
  'created',
  'planning',
  'model_thinking',
  'tool_executing',
  'awaiting_approval',
  'validating',
  'completed',
  'failed',
  'cancelled',
];

/** Who sent a message or decided an approval. */
export type DecisionSource = 'api' | 'cli' | 'im' | 'web' | 'timeout' | 'mcp';

export interface AgentEventMap {
  lifecycle: LifecycleData;
  assistant: AssistantData;
  reasoning: ReasoningData;
  tool: ToolData;
  compaction: CompactionData;
  model: ModelData;
  process: ProcessData;
  run: RunData;
}

export type AgentStream = keyof AgentEventMap;
export const AGENT_STREAMS: readonly AgentStream[] = ['lifecycle', 'assistant', 'reasoning', 'tool', 'compaction', 'model', 'process', 'run'];

export type AgentEvent = {
  [S in AgentStream]: { runId: string; seq: number; ts: number; stream: S; data: AgentEventMap[S] };
}[AgentStream];

export type AgentEventOf<S extends AgentStream> = Extract<AgentEvent, { stream: S }>;

/** The run's last event: run.completed, run.failed or run.cancelled. */
export function isTerminalRunEvent(e: AgentEvent): boolean {
  return e.stream === 'run' && (e.data.type === 'run.completed' || e.data.type === 'run.failed' || e.data.type === 'run.cancelled');
}
