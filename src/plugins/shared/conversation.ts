/** Reading a conversation back, for the offline procedures: which tools ran, with what result. */
import type { OfflineProcedure } from '../../runtime/business-plugin.js';

/** The loop's message type, taken through the runtime contract (plugins do not import providers). */
type ChatMessage = Parameters<OfflineProcedure>[0]['messages'][number];

export interface SeenToolResult {
  name: string;
  ok: boolean;
  /** parsed JSON content, or null when the content is not JSON */
  data: Record<string, unknown> | null;
  content: string;
  /** arguments of the call, found on the assistant message that asked for it */
  args: unknown;
}

export function toolResults(messages: ChatMessage[]): SeenToolResult[] {
  const argsById = new Map<string, unknown>();
  const out: SeenToolResult[] = [];
  for (const m of messages) {
    if (m.role === 'assistant') for (const c of m.toolCalls ?? []) argsById.set(c.id, c.args);
    if (m.role === 'tool') {
      let data: Record<string, unknown> | null = null;
      try {
        const v: unknown = JSON.parse(m.content);
        if (v && typeof v === 'object' && !Array.isArray(v)) data = v as Record<string, unknown>;
      } catch {
        data = null;
      }
      out.push({ name: m.toolName, ok: !m.isError && data?.ok !== false, data, content: m.content, args: argsById.get(m.toolCallId) });
    }
  }
  return out;
}

/** Latest successful result of a tool, optionally only calls whose args match. */
export function lastOk(results: SeenToolResult[], name: string, match?: (args: unknown) => boolean): SeenToolResult | undefined {
  for (let i = results.length - 1; i >= 0; i--) {
    const r = results[i];
    if (r.name === name && r.ok && (!match || match(r.args))) return r;
  }
  return undefined;
}

export function failures(results: SeenToolResult[], name: string, match?: (args: unknown) => boolean): SeenToolResult[] {
  return results.filter((r) => r.name === name && !r.ok && (!match || match(r.args)));
}

export function argPath(args: unknown): string | undefined {
  return args && typeof args === 'object' && typeof (args as { path?: unknown }).path === 'string' ? (args as { path: string }).path : undefined;
}

export function lastUserText(messages: ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'user') return m.content;
  }
  return '';
}

/**
 * The goal of the current run: the last user message before this run's first tool call
 * (earlier messages may be history from the same conversation; `[notice]` lines are the runtime's).
 */
export function currentGoal(messages: ChatMessage[]): string {
  let goal = '';
  for (const m of messages) {
    if (m.role === 'tool' || (m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0)) break;
    if (m.role === 'user' && !m.content.startsWith('[notice]')) goal = m.content;
  }
  return goal;
}
