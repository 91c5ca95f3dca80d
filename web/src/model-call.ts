/**
 * What GET /api/runs/:id/model-calls answers, and what a call view computes from it: DOM-free so tests
 * can import it. The diff of two requests is what a turn added (and, after a compaction, what it
 * took out): the messages both share at the start and at the end are the same; the rest changed.
 */

export type Part =
  | { type: 'text'; content: string }
  | { type: 'reasoning'; content: string; signed?: true; redacted?: true }
  | { type: 'tool_call'; id: string; name: string; arguments: unknown }
  | { type: 'tool_call_response'; id: string; name: string; response: unknown; is_error?: true }
  | { type: 'file'; modality: string; mime_type: string; file_id: string; bytes: number; label?: string }
  | { type: 'uri'; modality: string; mime_type: string; uri: string }
  | { type: 'blob'; modality: string; mime_type: string; content: string };

export interface Message {
  role: 'system' | 'user' | 'assistant' | 'tool';
  parts: Part[];
  cache?: 'ephemeral';
}

export interface Tokens {
  input: number;
  output: number;
  cached_input: number;
  cache_write: number;
  reasoning: number;
}

export interface ModelCall {
  call: number;
  kind: 'turn' | 'compaction' | 'other';
  span_id: string | null;
  turn: number | null;
  attempt: number | null;
  provider: string;
  model: string;
  started_at: string;
  request: {
    source: 'api' | 'model_request';
    system: string;
    message_count: number;
    messages: Message[];
    shared_with?: { call: number; messages: number };
    tools: { set: string; count: number } | null;
    settings: {
      model: string;
      temperature: number | null;
      max_output_tokens: number | null;
      reasoning: string;
      cache_key: string | null;
      cache_breakpoints: string[];
      provider_options: Record<string, unknown> | null;
      api?: Record<string, unknown>;
    };
  };
  response: {
    text: string;
    reasoning: string;
    tool_calls: Array<{ id: string | null; name: string; arguments: unknown }>;
    finish_reason: string;
    error?: { code: string; summary: string };
  };
  usage: Tokens | null;
  cost_usd: number | null;
  latency_ms: number;
  first_token_ms: number | null;
  cut?: { limit_bytes: number; bytes_before: number; fields: Array<{ path: string; message?: number; kept_chars: number; original_chars: number }> };
  previous_call: number | null;
}

export interface ModelCallsPage {
  run_id: string;
  capture: 'on' | 'off' | 'unknown';
  total: number;
  /** the highest loop turn a recorded call belongs to */
  turns: number;
  offset: number;
  limit: number;
  calls: ModelCall[];
  tool_sets: Record<string, Array<{ name: string; description: string; inputSchema: unknown }>>;
}

export interface RequestDiff {
  /** messages at the start both requests share */
  head: number;
  /** messages at the end both share (after what changed) */
  tail: number;
  /** in the previous request only (a compaction took them out) */
  removed: Message[];
  /** index range [from, to) of this request's messages that are new */
  added: { from: number; to: number };
}

/** A message as compared: a cache breakpoint moves to the newest message each turn and is no change of content. */
function keyOf(m: Message): string {
  return JSON.stringify({ role: m.role, parts: m.parts });
}

export function requestDiff(previous: readonly Message[], current: readonly Message[]): RequestDiff {
  const a = previous.map(keyOf);
  const b = current.map(keyOf);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  return { head, tail, removed: previous.slice(head, previous.length - tail), added: { from: head, to: current.length - tail } };
}

/** The span id of a waterfall model bar (`model:<turn>.<attempt>`), parsed. */
export function turnOfSpan(spanId: string): { turn: number; attempt: number } | null {
  const m = /^model:(\d+)\.(\d+)$/.exec(spanId);
  return m ? { turn: Number(m[1]), attempt: Number(m[2]) } : null;
}

export function partText(p: Part): string {
  switch (p.type) {
    case 'text':
    case 'reasoning':
      return p.content;
    case 'tool_call':
      return JSON.stringify(p.arguments, null, 2) ?? '';
    case 'tool_call_response':
      return resultText(p.response);
    case 'file':
      return `${p.label ?? p.file_id} (${p.mime_type}, ${p.bytes} bytes)`;
    case 'uri':
      return p.uri;
    case 'blob':
      return `${p.mime_type} (inline)`;
  }
}

/** A tool's result as read: JSON (a value, or text that holds one) indented, other text as it is. */
export function resultText(response: unknown): string {
  if (typeof response !== 'string') return JSON.stringify(response, null, 2) ?? '';
  const t = response.trim();
  if ((t.startsWith('{') && t.endsWith('}')) || (t.startsWith('[') && t.endsWith(']'))) {
    try {
      return JSON.stringify(JSON.parse(t), null, 2);
    } catch {
      // text that only looks like JSON stays as it came
    }
  }
  return response;
}

/** Lines shown of a long text before it folds. */
export const FOLDED_LINES = 12;

/** A long text folded: its first lines, and how much more there is (null when it is short). */
export function folded(text: string): { head: string; more: string } | null {
  const lines = text.split('\n');
  if (lines.length <= FOLDED_LINES + 3 && text.length <= 2000) return null;
  const head = lines.length > FOLDED_LINES ? lines.slice(0, FOLDED_LINES).join('\n') : text.slice(0, 1200);
  const rest =
    lines.length > FOLDED_LINES ? `${lines.length - FOLDED_LINES} more lines` : `${(text.length - head.length).toLocaleString('en-US')} more characters`;
  return { head, more: rest };
}

/**
 * The reasoning setting as the call view says it: what was asked for, and whether the model reasoned
 * anyway (a model that always thinks answers with reasoning though none was asked for).
 */
export function reasoningSetting(call: Pick<ModelCall, 'request' | 'response'>): string {
  const asked = call.request.settings.reasoning;
  const thought = call.response.reasoning.length;
  if (asked === 'off' && thought > 0) return `reasoning not asked for (the model reasoned anyway: ${thought.toLocaleString('en-US')} characters)`;
  if (asked === 'off') return 'reasoning off';
  return `reasoning ${asked}${thought > 0 ? ` (${thought.toLocaleString('en-US')} characters)` : ' (none returned)'}`;
}
