/**
 * A deterministic summary of conversation turns, one line each: what the offline and script models
 * write when the loop compacts their context (and the fallback when a model's own summary fails).
 */
import { SUMMARY_PREFIX } from '../events/summary-marker.js';
import type { ChatMessage } from './model-provider.js';

export { SUMMARY_PREFIX };

function clip(text: string, n: number): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > n ? `${t.slice(0, n - 1)}…` : t;
}

export function extractiveSummary(messages: readonly ChatMessage[], maxLines = 60): string {
  const lines: string[] = [];
  const argsById = new Map<string, string>();
  for (const m of messages) {
    if (m.role === 'user') {
      // an earlier summary's lines are carried on whole, so facts survive a second compaction
      if (m.content.startsWith(SUMMARY_PREFIX)) lines.push(...m.content.split('\n').filter((l) => l.startsWith('- ')));
      else lines.push(`- user: ${clip(m.content, 240)}`);
    } else if (m.role === 'assistant') {
      if (m.content.trim()) lines.push(`- you said: ${clip(m.content, 240)}`);
      for (const c of m.toolCalls ?? []) argsById.set(c.id, clip(JSON.stringify(c.args ?? {}), 120));
    } else {
      lines.push(`- you called ${m.toolName} ${argsById.get(m.toolCallId) ?? ''} → ${m.isError ? 'failed' : 'ok'}: ${clip(m.content, 200)}`);
    }
  }
  if (lines.length <= maxLines) return lines.join('\n');
  const head = lines.slice(0, 5);
  const tail = lines.slice(-(maxLines - 6));
  return [...head, `- … ${lines.length - head.length - tail.length} more steps …`, ...tail].join('\n');
}
