/**
 * A recorded model call as the OpenTelemetry GenAI conventions' content attributes
 * (`gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages`), JSON strings on
 * the call's `chat` span. They are set only when OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is
 * true: content is opt-in in the conventions, and the record it comes from is already masked.
 */
import type { ModelCall } from '../runtime/model-calls/model-call-record.js';

type Part = ModelCall['request']['messages'][number]['parts'][number];
/** The conventions' part type for thinking (not a wire frame: named so the wire-literal sentinel can tell). */
const REASONING_PART = 'reasoning' as const;

export const CAPTURE_CONTENT_ENV = 'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT';

export function captureMessageContent(env: Record<string, string | undefined>): boolean {
  return env[CAPTURE_CONTENT_ENV]?.trim().toLowerCase() === 'true';
}

/** The conventions' finish reasons (stop, length, content_filter, tool_call, error). */
const FINISH: Record<string, string> = { stop: 'stop', length: 'length', 'content-filter': 'content_filter', 'tool-calls': 'tool_call', error: 'error' };

export function genAiMessageAttributes(call: ModelCall): Record<string, string> {
  const r = call.response;
  const output: Part[] = [
    ...(r.reasoning ? [{ type: REASONING_PART, content: r.reasoning }] : []),
    ...(r.text ? [{ type: 'text' as const, content: r.text }] : []),
    ...r.tool_calls.map((c) => ({ type: 'tool_call' as const, id: c.id ?? '', name: c.name, arguments: c.arguments })),
  ];
  return {
    'gen_ai.system_instructions': JSON.stringify(call.request.system ? [{ type: 'text', content: call.request.system }] : []),
    'gen_ai.input.messages': JSON.stringify(call.request.messages),
    'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: output, finish_reason: FINISH[r.finish_reason] ?? r.finish_reason }]),
  };
}
