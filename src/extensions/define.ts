/**
 * What a code plugin is (`.runtrail/plugins/*.{js,mjs,ts}` or an npm package named in config.json):
 * a plain object whose default export names its tools and, optionally, full agents and chat channels.
 * `definePlugin`, `defineTool` and `defineChannel` are typed identity helpers; a plain object works the same.
 */
import type { OperationReporter } from '../events/operation-reporter-types.js';
import type { Agent, WorkspaceAccess } from '../runtime/agent.js';
import type { Schema } from '../tools/schema.js';
import type { ChannelDefinition } from '../channels/channel-types.js';

export { defineChannel } from '../channels/define-channel.js';
export type {
  ChannelContext,
  ChannelConnection,
  ChannelDefinition,
  InboundMessage,
  InboundPress,
  OutboundMessage,
  SendResult,
} from '../channels/channel-types.js';

export interface PluginToolContext {
  /** Aborted when the run is cancelled or the tool times out; `signal.reason` says which (the
   *  run's cancel reason, or an Error whose message is `timeout`). */
  signal: AbortSignal;
  /** Progress of long work, shown live as process events of this call. */
  reporter: OperationReporter;
  /** The run's folder: resolveRead, resolveWrite, readText, writeArtifact, listArtifacts. */
  workspace: WorkspaceAccess;
  runId: string;
  toolCallId: string;
}

/** A string is an ok result; `content` that is not a string is sent to the model as JSON. */
export type PluginToolResult = string | { ok: boolean; content: unknown; details?: Record<string, unknown> };

// a plugin tool's arguments are whatever its schema says; `any` keeps plain-object plugins easy to write
// biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
export interface PluginTool<Args = any> {
  name: string;
  description: string;
  /** JSON Schema (checked with ajv) or a zod schema. */
  parameters: Schema<Args>;
  execute(args: Args, ctx: PluginToolContext): PluginToolResult | Promise<PluginToolResult>;
  /** The executor ends a call that runs longer (default 120 s). */
  timeoutMs?: number;
  /** True when the tool only reads: the loop may run it beside other read-only calls of a turn. */
  readOnly?: boolean;
  /** True when running a call twice has the effect of running it once: after a crash mid-call the
   *  resumed run runs it again (otherwise the model is told its effect is unknown). */
  idempotent?: boolean;
}

export interface RuntrailPlugin {
  name: string;
  version?: string;
  tools?: PluginTool[];
  /** Full agents, as the builtins are. */
  // agents of many input types, each validated by its own schema
  // biome-ignore lint/suspicious/noExplicitAny: values of many types share this type, each checks its own (see the comment above)
  agents?: Array<Agent<any>>;
  /** Chat channels (`defineChannel`), started from channels.json like the builtin telegram, slack and feishu. */
  channels?: ChannelDefinition[];
}

export function definePlugin<P extends RuntrailPlugin>(plugin: P): P {
  return plugin;
}

export function defineTool<Args>(tool: PluginTool<Args>): PluginTool<Args> {
  return tool;
}
