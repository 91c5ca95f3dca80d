/**
 * runtime/model_calls.jsonl: one line per model call of a run (each attempt, each compaction summary),
 * what the model was sent and what it answered. A line keeps only the messages its call added: its
 * `history` says which earlier call's system prompt and first messages it shares, so a long run does
 * not write its whole conversation again at every turn. Readers get whole calls from readModelCalls.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SentMessage, SentSettings, ToolSpec } from '../../providers/model-provider.js';
import { RUN_FILES } from '../storage/run-files.js';
import type { TokenCounts } from '../metrics/run-metrics.js';

export const MODEL_CALLS_FILE = RUN_FILES.modelCalls;
/** The tool lists the calls were sent, by set id (a call names its set instead of repeating it). */
export const MODEL_TOOLS_FILE = RUN_FILES.modelTools;
/** Images and files the calls carried, by content hash (`file` parts point here). */
export const MODEL_CALL_FILES_DIR = RUN_FILES.modelCallFiles;

/** What a call was made for: a loop turn (its `chat` span), a compaction's summary, or neither. */
export type ModelCallKind = 'turn' | 'compaction' | 'other';

export interface ModelCallCut {
  /** the record's limit (capture.max_call_bytes) */
  limit_bytes: number;
  /** how large the record would have been */
  bytes_before: number;
  /** each shortened text: where, and how many characters it kept of how many */
  fields: Array<{ path: string; message?: number; kept_chars: number; original_chars: number }>;
}

export interface ModelCallResponse {
  text: string;
  reasoning: string;
  /** `id` as the provider gave it (the id of the tool call's span and result); null when it gave none */
  tool_calls: Array<{ id: string | null; name: string; arguments: unknown }>;
  /** stop, tool-calls, length, content-filter, other; `error` for a failed call, `cancelled` for one cut off */
  finish_reason: string;
  error?: { code: string; summary: string };
}

export interface ModelCallRequest {
  source: 'api' | 'model_request';
  /** The system prompt and the first `kept` messages are those of call `from_call` (only the rest is on this line). */
  history?: { from_call: number; kept: number };
  /** Absent on a line with `history`: it is the one of `from_call`. */
  system?: string;
  /** How many messages the request had, all told. */
  message_count: number;
  messages: SentMessage[];
  /** The tool list sent, by reference to MODEL_TOOLS_FILE; null for a call without tools. */
  tools: { set: string; count: number } | null;
  settings: SentSettings;
}

/** One line of runtime/model_calls.jsonl. */
export interface ModelCallLine {
  /** 1-based, in the order the calls started */
  call: number;
  kind: ModelCallKind;
  /** The trace span it belongs to: `model:<turn>.<attempt>` (its `chat` span), `compaction:<n>`; null for neither */
  span_id: string | null;
  turn: number | null;
  attempt: number | null;
  trace_id: string;
  provider: string;
  model: string;
  started_at: string;
  request: ModelCallRequest;
  response: ModelCallResponse;
  /** null when the provider reported none */
  usage: TokenCounts | null;
  cost_usd: number | null;
  latency_ms: number;
  first_token_ms: number | null;
  /** Present when the line was over the limit: what was shortened. */
  cut?: ModelCallCut;
}

/** A call with its whole request: every message, the system prompt, and the previous call of its kind. */
export interface ModelCall extends Omit<ModelCallLine, 'request'> {
  request: Omit<ModelCallRequest, 'history' | 'system'> & { system: string; shared_with?: { call: number; messages: number } };
  /** The call before it of the same kind (the previous turn for a turn): what a diff compares with. */
  previous_call: number | null;
}

export type CaptureState = 'on' | 'off' | 'unknown';

export interface ModelCallsPage {
  run_id: string;
  /** `off`: the run was configured not to record model calls (capture.model_io: false). */
  capture: CaptureState;
  total: number;
  /** The highest loop turn any recorded call belongs to (0 for none): what `turn` can name. */
  turns: number;
  offset: number;
  limit: number;
  calls: ModelCall[];
  /** The tool lists the calls on this page name, by set id. */
  tool_sets: Record<string, ToolSpec[]>;
}

export interface ModelCallQuery {
  offset?: number;
  limit?: number;
  /** only the calls of this loop turn (its attempts) */
  turn?: number;
  /** only this call */
  call?: number;
}

export function parseModelCallLines(text: string): ModelCallLine[] {
  const out: ModelCallLine[] = [];
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as ModelCallLine);
    } catch {
      // a line cut by a crash mid-write: the calls before it still read
    }
  }
  return out;
}

/**
 * Whole requests of the chosen lines. A line's history points at an earlier line: the messages are
 * rebuilt forward along that chain, once per chosen line (never a copy per line of the run).
 */
export function resolveModelCalls(lines: readonly ModelCallLine[], chosen: readonly ModelCallLine[]): ModelCall[] {
  const byCall = new Map(lines.map((l) => [l.call, l]));
  const previous = previousOfKind(lines);
  return chosen.map((line) => {
    const chain: ModelCallLine[] = [line];
    for (let l = line; l.request.history; ) {
      const from = byCall.get(l.request.history.from_call);
      if (!from || from.call >= l.call) break;
      chain.push(from);
      l = from;
    }
    chain.reverse();
    const messages: SentMessage[] = [];
    let fields: ModelCallCut['fields'] = [];
    let limit = 0;
    let system = '';
    for (const l of chain) {
      const h = l.request.history;
      if (h) {
        messages.length = Math.min(messages.length, h.kept);
        // an earlier line's cuts still show in the messages (and the system prompt) this one shares
        fields = fields.filter((f) => (f.message !== undefined && f.message < h.kept) || (f.path === 'request.system' && l.request.system === undefined));
      } else {
        messages.length = 0;
        fields = [];
      }
      if (l.request.system !== undefined) system = l.request.system;
      for (const m of l.request.messages) messages.push(m);
      if (l.cut) {
        fields = [...fields, ...l.cut.fields];
        limit = l.cut.limit_bytes;
      }
    }
    const { history, system: _shared, ...request } = line.request;
    const cut: ModelCallCut | undefined = fields.length || line.cut ? { limit_bytes: limit, bytes_before: line.cut?.bytes_before ?? 0, fields } : undefined;
    const { cut: _own, ...rest } = line;
    return {
      ...rest,
      request: { ...request, system, messages, ...(history ? { shared_with: { call: history.from_call, messages: history.kept } } : {}) },
      ...(cut ? { cut } : {}),
      previous_call: previous.get(line.call) ?? null,
    };
  });
}

function previousOfKind(lines: readonly ModelCallLine[]): Map<number, number> {
  const last = new Map<ModelCallKind, number>();
  const out = new Map<number, number>();
  for (const l of lines) {
    const p = last.get(l.kind);
    if (p !== undefined) out.set(l.call, p);
    last.set(l.kind, l.call);
  }
  return out;
}

/** The capture setting the run was started with, from its resolved_config.json. */
export async function captureStateOf(runRoot: string): Promise<CaptureState> {
  try {
    const cfg = JSON.parse(await readFile(join(runRoot, RUN_FILES.resolvedConfig), 'utf8')) as { capture?: { model_io?: unknown } };
    if (typeof cfg.capture?.model_io === 'boolean') return cfg.capture.model_io ? 'on' : 'off';
  } catch {
    // a run that has not started (or predates the setting)
  }
  return 'unknown';
}

async function readToolSets(runRoot: string): Promise<Record<string, ToolSpec[]>> {
  try {
    return JSON.parse(await readFile(join(runRoot, MODEL_TOOLS_FILE), 'utf8')) as Record<string, ToolSpec[]>;
  } catch {
    return {};
  }
}

/** A page of a run's model calls, whole, oldest first; `turn` or `call` narrow it. */
export async function readModelCalls(runId: string, runRoot: string, q: ModelCallQuery = {}): Promise<ModelCallsPage> {
  const [text, capture] = await Promise.all([readFile(join(runRoot, MODEL_CALLS_FILE), 'utf8').catch(() => ''), captureStateOf(runRoot)]);
  const lines = parseModelCallLines(text);
  let matching = lines;
  if (q.turn !== undefined) matching = matching.filter((l) => l.turn === q.turn);
  if (q.call !== undefined) matching = matching.filter((l) => l.call === q.call);
  const offset = Math.max(0, q.offset ?? 0);
  const limit = Math.max(0, q.limit ?? 20);
  const calls = resolveModelCalls(lines, matching.slice(offset, offset + limit));
  const sets = calls.some((c) => c.request.tools) ? await readToolSets(runRoot) : {};
  const tool_sets: Record<string, ToolSpec[]> = {};
  for (const c of calls) if (c.request.tools && sets[c.request.tools.set]) tool_sets[c.request.tools.set] = sets[c.request.tools.set];
  const turns = lines.reduce((max, l) => Math.max(max, l.turn ?? 0), 0);
  return { run_id: runId, capture, total: matching.length, turns, offset, limit, calls, tool_sets };
}
