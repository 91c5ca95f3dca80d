/**
 * The seam between the run pipeline and its front doors (CLI, HTTP server, IM endpoint).
 * RunService (run-service.ts) implements it; the server and the CLI only speak this.
 */
import type { AgentEvent, DecisionSource, RunStatus, RunTrigger } from '../events/agent-event.js';
export type { RunTrigger } from '../events/agent-event.js';
import type { StepApproval } from '../events/engine-event.js';
import type { AgentEventBus } from '../events/agent-event-bus.js';
import type { RunTraceContext } from '../events/trace-context.js';
import type { DiagnosisDict } from '../events/diagnosis.js';
import type { ReasoningEffort } from '../providers/model-provider.js';
import type { ModelUsageSnapshot } from './metrics/model-usage-totals.js';
import type { ModelCallFeed } from './model-calls/model-call-feed.js';
import type { Agent } from './agent.js';
import type { RunLimits } from './run-limits.js';

export type { RunLimits } from './run-limits.js';

/** The body of POST /api/runs and of `runtrail run`. */
export interface CreateRunRequest {
  plugin: string;
  goal?: string;
  input: Record<string, unknown>;
  model?: string | { provider: string; model?: string };
  limits?: Partial<RunLimits>;
  /** Reasoning effort of the model (off, low, medium, high); default off. */
  reasoning?: ReasoningEffort;
  skill?: string;
  conversation_id?: string;
  tenant_id?: string;
}

export type RunErrorCode =
  | 'invalid_request' // 400
  | 'input_outside_roots' // 400
  | 'unknown_plugin' // 404
  | 'not_found' // 404
  | 'wrong_state' // 409
  | 'incompatible' // 422 skill/plugin incompatible, provider not configured
  | 'queue_full' // 429
  | 'service_unavailable'; // 503: Redis or PostgreSQL away (several nodes); retry after details.retry_after_s

export interface RunErrorDetails {
  /** zod-style issues: `path` names the field. */
  issues?: Array<{ path: string; message: string }>;
  validPlugins?: string[];
  [k: string]: unknown;
}

export interface PublicDocument {
  path: string; // relative to the run folder, e.g. artifacts/insight_report.md
  audience: string;
  sensitivity: string;
  type: string;
  description: string;
  bytes: number;
}

/** runtime/run_status.json */
export interface RunStatusFile {
  run_id: string;
  status: RunStatus;
  plugin: string;
  plugin_version: string;
  skill: string | null;
  goal: string;
  conversation_id: string;
  provider: string;
  model: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  final_answer: string;
  diagnosis: DiagnosisDict | null;
  last_seq: number;
  public_documents: PublicDocument[];
  /** a subagent's: the run that started it, and its run_agent call */
  parent_run_id?: string;
  parent_tool_call_id?: string;
  /** the subagent runs this run started */
  children?: string[];
  /** The run's OpenTelemetry trace id (32 hex digits), also the wire's `trace_id`; absent in runs written before traces. */
  trace_id?: string;
  /** What started the run when no one asked for it (a schedule); absent for requested runs. */
  trigger?: RunTrigger;
  /** The tenant the run belongs to; absent: tenant `default` (every run from before tenants). */
  tenant_id?: string;
}

/** A completion webhook a front door checked (its URL allowed, its secret well-formed); the runtime
 *  only hands it to the run's observers, which deliver it. */
export interface RunWebhook {
  url: string;
  secret?: string;
}

/** What a front door says about a run beside its request body. */
export interface CreateRunOptions {
  /** The caller's W3C `traceparent`: the run's trace becomes part of the caller's. */
  traceparent?: string;
  /** The channel the run came in by (web, im, cli, chat): `runtrail.claw` on its spans. */
  claw?: string;
  /** What started the run (a schedule's fire): written into its status and its run.created event. */
  trigger?: RunTrigger;
  /** Where to report the run's end (and its waits for approval); told to observers, never written by the runtime. */
  webhook?: RunWebhook;
  /** The request came over the network (the HTTP API): its `limits` may exceed the agent's own only as far
   *  as config.json's `request_limits` allows. A local caller (the CLI) is the operator. */
  fromNetwork?: boolean;
}

/** A run as an observer (tracing) sees it: told once, when its bus exists and before its first event. */
export interface ObservedRun {
  runId: string;
  plugin: string;
  tenantId: string | null;
  conversationId: string;
  claw: string;
  trace: RunTraceContext;
  bus: AgentEventBus;
  /** A subagent's parent run and the run_agent call that started it. */
  parent?: { runId: string; toolCallId: string };
  /** Its model calls, whole, as they are recorded (none when capture.model_io is off). */
  modelCalls?: Pick<ModelCallFeed, 'subscribe'>;
  trigger?: RunTrigger;
  /** The create's webhook (only where the run was created: a worker that claims it sees none). */
  webhook?: RunWebhook;
}

export type RunObserver = (run: ObservedRun) => void;

export interface RunListQuery {
  status?: RunStatus;
  /** any of these statuses, read at one moment (one status per query could miss a run moving between two) */
  statuses?: readonly RunStatus[];
  plugin?: string;
  /** `provider:model`, or the model name alone */
  model?: string;
  /** words the goal contains (any case) */
  goal?: string;
  conversation?: string;
  /** only the runs of this tenant (`default` includes the runs that name none) */
  tenant?: string;
  limit?: number;
  offset?: number;
}

export interface RunServiceStats {
  byState: Partial<Record<RunStatus, number>>;
  queueDepth: number;
  running: number;
  eventsPublished: number;
  /** Tokens and cost of every model call since the service started. */
  models?: ModelUsageSnapshot;
}

export interface RunServiceApi {
  /** Makes the service ready before the first request (RunService: loads its runs, ends or resumes
   *  those a crash left live). Idempotent; a service with nothing to load has none. */
  init?(): Promise<void>;
  /** Validates and queues; throws RunRequestError on bad input. */
  create(req: unknown, opts?: CreateRunOptions): Promise<RunStatusFile>;
  get(runId: string): Promise<RunStatusFile | null>;
  /** Newest first (by run id). */
  list(q?: RunListQuery): Promise<{ runs: RunStatusFile[]; total: number }>;
  cancel(runId: string): Promise<RunStatusFile>;
  /** History from events.jsonl after `after`, then live; no gap, no duplicate; ends after the run's terminal event. */
  events(runId: string, opts?: { after?: number; signal?: AbortSignal }): AsyncIterable<AgentEvent>;
  /** The seq ranges [from, to) of the partial answers the run's resumes discarded so far (the turns
   *  redone after its process died), for a stream that cannot take back what it sent. */
  discardedRanges?(runId: string): Promise<Array<{ from: number; to: number }>>;
  manifest(runId: string): Promise<unknown | null>;
  /** Absolute path of a document the manifest lists, or null. */
  documentPath(runId: string, relPath: string): Promise<string | null>;
  wait(runId: string): Promise<RunStatusFile>;
  stats(): RunServiceStats;
  /** A person's message to a live run; a finished run throws wrong_state. */
  sendMessage?(
    runId: string,
    msg: { text: unknown; mode?: unknown; from: DecisionSource },
  ): Promise<{ id: string; mode: 'steer' | 'follow_up'; status: RunStatus }>;
  /** Decides an `ask` tool call; unknown: not_found, already decided: wrong_state. */
  decideApproval?(runId: string, approvalId: string, d: { decision: unknown; reason?: unknown; by: DecisionSource; who?: string }): Promise<StepApproval>;
  pendingApprovals?(runId: string): StepApproval[];
  close(): Promise<void>;
  /** The service's data folder, when it has one (RunService does): uploads and run files are under it. */
  readonly dataDir?: string;
  /** The folders skills are loaded from, when the service knows them. */
  readonly skillDirs?: readonly string[];
  /** The agents it serves, by name (asked again each time: a watched project replaces them). */
  agentNames?(): string[];
  getAgent?(name: string): Agent | undefined;
}
