/** Reading a conversation back, for the offline procedures: which tools ran, with what result. */
import type { OfflineProcedure } from '../../runtime/agent.js';
import { SUMMARY_PREFIX } from '../../events/summary-marker.js';

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

/** Marks the JSON block of tool results an offline procedure keeps through a compaction. */
const STATE_FENCE = '```json runtrail-state';

/** Tool results kept in a compaction summary written by `summarizeToolResults`. */
function keptResults(content: string): SeenToolResult[] {
  const at = content.indexOf(STATE_FENCE);
  if (at < 0) return [];
  const end = content.indexOf('\n```', at + STATE_FENCE.length);
  try {
    const v = JSON.parse(content.slice(at + STATE_FENCE.length, end < 0 ? undefined : end)) as unknown;
    return Array.isArray(v) ? (v as SeenToolResult[]).filter((r) => r && typeof r.name === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * An offline procedure's compaction summary: the tool results it reads back later, as JSON (each
 * passed through `shrink`, which keeps what matters and may drop a result by returning null), so the
 * procedure goes on where it was once the turns themselves are gone.
 */
export function summarizeToolResults(turns: ChatMessage[], shrink: (r: SeenToolResult) => SeenToolResult | null = (r) => r): string {
  const kept = toolResults(turns).flatMap((r) => shrink(r) ?? []);
  const lines = kept.map((r) => `- ${r.name} ${r.ok ? 'ok' : 'failed'}`);
  return `The tool results so far (the facts are kept below):\n${lines.join('\n')}\n\n${STATE_FENCE}\n${JSON.stringify(kept)}\n\`\`\``;
}

export function toolResults(messages: ChatMessage[]): SeenToolResult[] {
  const argsById = new Map<string, unknown>();
  const out: SeenToolResult[] = [];
  for (const m of messages) {
    if (m.role === 'user' && m.content.startsWith(SUMMARY_PREFIX)) out.push(...keptResults(m.content));
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
    if (m.role === 'user' && !m.content.startsWith('[notice]') && !m.content.startsWith(SUMMARY_PREFIX)) goal = m.content;
  }
  return goal;
}
