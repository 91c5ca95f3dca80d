/** The one shape every tool has: the executor, the model specs and the plugins all speak it. */
import type { Schema } from './schema.js';
import type { DiagnosisInit } from '../events/diagnosis.js';
import type { OperationReporter } from '../events/operation-reporter-types.js';

/**
 * An image a tool hands the model (a screenshot, a PNG it read). The same shape as
 * `ImageAttachment` in providers/model-provider.ts (tools may not import providers).
 */
export interface ToolImage {
  /** image/png, image/jpeg, image/gif or image/webp */
  mediaType: string;
  /** base64, without a `data:` prefix */
  data: string;
  /** What it is (e.g. the file name), for the text that replaces it when a model cannot see images. */
  label?: string;
}

export interface ToolResult {
  ok: boolean;
  /** What the model reads as the observation. */
  content: string;
  /** Images that go with the observation: image parts for vision models, a "withheld" line for others. */
  images?: ToolImage[];
  /** Structured data for hooks, validators and UIs. */
  details?: Record<string, unknown>;
  diagnosis?: DiagnosisInit;
}

export interface ToolExecutionContext {
  /** Present when run by the executor: aborted when the call is cancelled or times out; its
   *  `reason` says which (the run's cancel reason, or an Error whose message is `timeout`). */
  signal?: AbortSignal;
  toolCallId?: string;
  /** Present when run by the executor: report progress of long work here. */
  reporter?: OperationReporter;
  /** True when a person approved this very call (its permission said ask, or `needsApproval` did). */
  approvedByPerson?: boolean;
}

export interface ToolDefinition<Args = unknown> {
  name: string;
  description: string;
  /** Schema of the arguments (zod, or JSON Schema checked with ajv); also what the model is shown. */
  parameters: Schema<Args>;
  /** Optional schema that `details` must satisfy (output validation). */
  output?: Schema;
  /** Executor-enforced timeout; default set by the executor. */
  timeoutMs?: number;
  /** Step kind on the wire; `skill` for compute skills. */
  kind?: 'tool' | 'skill' | 'mcp' | 'agent';
  /** MCP tools: the server and the tool's own name there, which the wire's `mcp` step shows. */
  mcp?: { server: string; tool: string };
  /** True for calls that observe changing state (e.g. polling a process): the loop's
   *  repeated-identical-call guard does not count them. */
  repeatable?: (args: Args) => boolean;
  /** True when a call only reads: the loop may run it beside the other read-only calls of a turn. */
  readOnly?: boolean;
  /** True when running a call twice has the effect of running it once: a resumed run re-runs a call
   *  its dead process started and never finished (read-only tools are re-run too; any other is not). */
  idempotent?: boolean;
  /**
   * What this call is about to leave behind, recorded with its `started` record before the handler
   * runs (e.g. the size and hash of the file it writes), so that a call a crash cut short can be
   * checked against it (`completedBefore`).
   */
  intent?: (args: Args) => unknown;
  /**
   * A call the run's dead process started and never finished, with its recorded `intent`: its result
   * when what it does is complete (the call counts as finished and is not run again), or null when it
   * is to be run again (idempotent tools) or reported interrupted (others).
   */
  completedBefore?: (args: Args, intent: unknown) => Promise<ToolResult | null>;
  /**
   * Why this particular call needs a person's approval even where the tool is allowed (exec with
   * `elevated: true` where the operator says ask), or null. The executor asks before it runs it.
   */
  needsApproval?: (args: Args) => string | null;
  execute(args: Args, ctx?: ToolExecutionContext): Promise<ToolResult>;
}

// registries hold tools of many argument types
// biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
export type AnyToolDefinition = ToolDefinition<any>; // any: each tool validates its own args via `parameters`
