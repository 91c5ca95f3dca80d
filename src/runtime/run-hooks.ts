/** Hook points of a run: around each tool call and at the stop. */
import type { ToolResult } from '../tools/tool.js';
import type { ValidationIssue } from './agent.js';

export interface ToolCallInfo {
  name: string;
  toolCallId: string;
  args: unknown;
}

export type PreToolUseDecision = { action: 'allow' } | { action: 'deny'; reason: string } | { action: 'rewrite'; args: unknown };

export interface PreToolUseHook {
  name: string;
  beforeTool(call: ToolCallInfo): PreToolUseDecision | void | Promise<PreToolUseDecision | void>;
}

export interface PostToolUseHook {
  name: string;
  /** Return a ToolResult to replace the output; nothing to keep it. */
  afterTool(call: ToolCallInfo, result: ToolResult): ToolResult | void | Promise<ToolResult | void>;
}

export interface StopHook {
  name: string;
  check(): Promise<ValidationIssue[]>;
}

export interface RunHooks {
  preToolUse: PreToolUseHook[];
  postToolUse: PostToolUseHook[];
  stop: StopHook[];
}

export function emptyHooks(): RunHooks {
  return { preToolUse: [], postToolUse: [], stop: [] };
}
