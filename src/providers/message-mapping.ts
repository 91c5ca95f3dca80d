/** Our ChatMessage/ToolSpec shapes to the AI SDK's ModelMessage/ToolSet. */
import { jsonSchema, tool, type ModelMessage, type ToolSet, type JSONSchema7 } from 'ai';
import type { ChatMessage, ToolSpec } from './model-provider.js';

/**
 * Assistant tool calls become tool-call parts; consecutive tool results become one tool message
 * (providers such as Anthropic want all results of a batch together). Empty assistant turns are
 * dropped: several APIs reject empty content blocks.
 */
export function toModelMessages(messages: readonly ChatMessage[]): ModelMessage[] {
  const out: ModelMessage[] = [];
  for (const m of messages) {
    if (m.role === 'user') {
      out.push({ role: 'user', content: m.content });
    } else if (m.role === 'assistant') {
      const calls = m.toolCalls ?? [];
      if (calls.length === 0) {
        if (m.content) out.push({ role: 'assistant', content: m.content });
        continue;
      }
      out.push({
        role: 'assistant',
        content: [
          ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
          ...calls.map((c) => ({ type: 'tool-call' as const, toolCallId: c.id, toolName: c.name, input: c.args ?? {} })),
        ],
      });
    } else {
      const part = {
        type: 'tool-result' as const,
        toolCallId: m.toolCallId,
        toolName: m.toolName,
        output: m.isError ? { type: 'error-text' as const, value: m.content } : { type: 'text' as const, value: m.content },
      };
      const last = out[out.length - 1];
      if (last && last.role === 'tool') last.content.push(part);
      else out.push({ role: 'tool', content: [part] });
    }
  }
  return out;
}

/** Tools as JSON Schema and without `execute`: the runtime's executor runs them, the model only asks. */
export function toToolSet(tools: readonly ToolSpec[]): ToolSet {
  const set: ToolSet = {};
  for (const t of tools) {
    set[t.name] = tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema as JSONSchema7) });
  }
  return set;
}
