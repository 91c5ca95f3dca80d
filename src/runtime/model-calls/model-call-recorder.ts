/**
 * Records every model call of a run at the provider boundary: a wrapper around the run's ModelProvider
 * that keeps what the model was sent (the request its API adapter received, or the request Runtrail
 * built for a local model) and what it answered, and appends it to runtime/model_calls.jsonl when the
 * call ends. Which span a call belongs to comes from the run's own events (a `model` start opens a
 * loop turn, a `compaction` start a compaction), so the loop itself knows nothing of the record.
 * Secrets are masked, images and files go to the run folder by content hash, and each line is capped.
 *
 * Over 400 lines on purpose: the wrapper, the span bookkeeping and the line writer share one call's
 * state from its start to its line; the record's format and reader are in model-call-record.ts.
 */
import { createHash } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentEvent } from '../../events/agent-event.js';
import { maskSecretValues } from '../../events/secret-values.js';
import { modelCost } from '../../providers/model-catalog.js';
import type {
  ChatMessage,
  ModelProvider,
  ModelRequest,
  ModelStreamPart,
  SentMessage,
  SentPart,
  SentRequest,
  TokenUsage,
  ToolSpec,
} from '../../providers/model-provider.js';
import { plainSettings, sentMessageOf } from '../../providers/sent-request.js';
import { capModelCallLine, DEFAULT_MAX_CALL_BYTES } from './model-call-cap.js';
import {
  MODEL_CALL_FILES_DIR,
  MODEL_CALLS_FILE,
  MODEL_TOOLS_FILE,
  type ModelCall,
  type ModelCallKind,
  type ModelCallLine,
  type ModelCallResponse,
} from './model-call-record.js';
import { tokenCounts } from '../metrics/run-metrics.js';
import { earlierAttemptCalls } from './earlier-attempt-calls.js';

/**
 * The masking every recorded text goes through: the same as the event log's (credential-looking
 * values). One function, so a server-wide masker (the server's own secrets) applies here once it does
 * to the event log.
 */
export function maskRecordedText(text: string): string {
  return maskSecretValues(text);
}

export interface ModelCallRecorderOptions {
  /** The run folder. */
  root: string;
  traceId: string;
  /** The run's events (its bus): which turn or compaction a call belongs to. */
  subscribe(listener: (event: AgentEvent) => void): () => void;
  /** A line over this is cut (capture.max_call_bytes); default 1 MB. */
  maxCallBytes?: number;
  /** Told each finished call, whole, while it listens (the spans' message attributes). Must not throw. */
  calls?: { readonly listening: boolean; publish(call: ModelCall): void };
  mask?: (text: string) => string;
}

const EXTENSIONS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pdf': 'pdf',
  'text/plain': 'txt',
};
const round3 = (n: number) => Math.round(n * 1000) / 1000;

/** One call while it streams. */
interface OpenCall {
  call: number;
  kind: ModelCallKind;
  spanId: string | null;
  turn: number | null;
  attempt: number | null;
  provider: string;
  model: string;
  request: ModelRequest;
  /** how many messages the request had: the loop's array grows only after the call has ended */
  count: number;
  startedAt: Date;
  started: number;
  firstToken: number | null;
  sent: SentRequest | null;
  text: string;
  reasoning: string;
  toolCalls: ModelCallResponse['tool_calls'];
  finish: string | null;
  usage: TokenUsage | undefined;
  error: { code: string; summary: string } | undefined;
  settled: boolean;
}

export class ModelCallRecorder {
  private calls = 0;
  private openTurn: { turn: number; attempt: number } | null = null;
  private compactions = 0;
  private inCompaction = false;
  private readonly open = new Set<OpenCall>();
  /** the previous turn's request (its messages as recorded, and for a local model the conversation's own
   *  message objects): the next turn shares its system prompt and first messages, found by identity */
  private lastTurn: { call: number; system: string; raw: ChatMessage[] | null; messages: SentMessage[] } | null = null;
  private fd: number | null = null;
  private lastSystem = { raw: '', masked: '' };
  /** a conversation message as recorded (converted, masked, its images in files), converted once */
  private readonly recorded = new WeakMap<ChatMessage, SentMessage>();
  private readonly keys = new WeakMap<SentMessage, string>();
  private readonly files = new Map<string, SentPart>();
  private readonly toolSets = new Map<string, ToolSpec[]>();
  private lastTools: { list: ToolSpec[]; json: string; set: string } | null = null;
  private writes: Promise<void> = Promise.resolve();
  private filesDir: Promise<void> | null = null;
  private failure: string | null = null;
  /** the file ends in a line a crash cut short: the first line written starts on a line of its own */
  private lineBreakFirst = false;
  private readonly unsubscribe: () => void;
  private readonly mask: (text: string) => string;
  private readonly maxBytes: number;

  constructor(private readonly o: ModelCallRecorderOptions) {
    this.mask = o.mask ?? maskRecordedText;
    this.maxBytes = o.maxCallBytes ?? DEFAULT_MAX_CALL_BYTES;
    // a resumed (or restarted) run records into its dead attempt's file: its calls go on numbering
    // after the last one there, its tool lists stay listed, and a line the crash cut stays on its own
    const earlier = earlierAttemptCalls(o.root);
    this.calls = earlier.lastCall;
    this.lineBreakFirst = earlier.tornTail;
    for (const [set, tools] of Object.entries(earlier.toolSets)) this.toolSets.set(set, tools);
    this.unsubscribe = o.subscribe((ev) => this.onEvent(ev));
  }

  private onEvent(ev: AgentEvent): void {
    if (ev.stream === 'model') {
      this.openTurn = ev.data.phase === 'start' ? { turn: ev.data.turn, attempt: ev.data.attempt } : null;
    } else if (ev.stream === 'compaction') {
      if (ev.data.phase === 'start') this.compactions++;
      this.inCompaction = ev.data.phase === 'start';
    }
  }

  /** The provider the run's loop and compaction use instead of `inner`: the same calls, recorded. */
  wrap(inner: ModelProvider): ModelProvider {
    return {
      get provider() {
        return inner.provider;
      },
      get model() {
        return inner.model;
      },
      stream: (request: ModelRequest) => {
        const call = this.begin(inner, request);
        // called now, as the loop would: a scripted model takes its turn when stream() is called
        return this.follow(inner.stream({ ...request, reportRequest: true }), call);
      },
    };
  }

  private begin(inner: ModelProvider, request: ModelRequest): OpenCall {
    const turn = this.openTurn;
    const kind: ModelCallKind = turn ? 'turn' : this.inCompaction ? 'compaction' : 'other';
    const call: OpenCall = {
      call: ++this.calls,
      kind,
      spanId: turn ? `model:${turn.turn}.${turn.attempt}` : kind === 'compaction' ? `compaction:${this.compactions}` : null,
      turn: turn?.turn ?? null,
      attempt: turn?.attempt ?? null,
      provider: inner.provider,
      model: inner.model,
      request,
      count: request.messages.length,
      startedAt: new Date(),
      started: performance.now(),
      firstToken: null,
      sent: null,
      text: '',
      reasoning: '',
      toolCalls: [],
      finish: null,
      usage: undefined,
      error: undefined,
      settled: false,
    };
    this.open.add(call);
    return call;
  }

  private async *follow(parts: AsyncIterable<ModelStreamPart>, call: OpenCall): AsyncGenerator<ModelStreamPart> {
    try {
      for await (const part of parts) {
        if (part.type === 'request') {
          call.sent = part.request;
          continue;
        }
        if (call.firstToken === null && part.type !== 'finish' && part.type !== 'notice') call.firstToken = performance.now() - call.started;
        switch (part.type) {
          case 'text-delta':
            call.text += part.text;
            break;
          case 'reasoning-delta':
            call.reasoning += part.text;
            break;
          case 'tool-call':
            call.toolCalls.push({ id: part.id || null, name: part.name, arguments: part.args });
            break;
          case 'finish':
            call.finish = part.reason;
            call.usage = part.usage;
            break;
          case 'error':
            call.error = { code: part.diagnosis.code, summary: part.diagnosis.summary };
            break;
          default:
            break;
        }
        // recorded before the loop hears of the end: the record precedes the call's `model` end event
        if (part.type === 'finish' || part.type === 'error') this.settle(call);
        yield part;
      }
    } catch (e) {
      call.error ??= { code: 'provider_exception', summary: `model provider failed: ${(e as Error)?.message ?? String(e)}` };
      throw e;
    } finally {
      this.settle(call);
    }
  }

  private settle(call: OpenCall): void {
    if (call.settled) return;
    call.settled = true;
    this.open.delete(call);
    try {
      this.write(call);
    } catch (e) {
      this.failure ??= (e as Error).message;
    }
  }

  private write(call: OpenCall): void {
    const latency = performance.now() - call.started;
    const sent = call.sent ?? this.asSent(call);
    const system = this.maskedSystem(sent.system);
    const previous = call.kind === 'turn' ? this.lastTurn : null;
    const shared = previous !== null && previous.system === system;
    const { kept, added, messages } =
      sent.source === 'model_request' ? this.sharedLocal(call, shared ? previous : null) : this.sharedApi(sent, shared ? previous : null);
    if (call.kind === 'turn' && sent.source === 'api') this.lastTurn = { call: call.call, system, raw: null, messages };
    const usage = call.usage ? tokenCounts(call.usage) : null;
    const line: ModelCallLine = {
      call: call.call,
      kind: call.kind,
      span_id: call.spanId,
      turn: call.turn,
      attempt: call.attempt,
      trace_id: this.o.traceId,
      provider: call.provider,
      model: call.model,
      started_at: call.startedAt.toISOString(),
      request: {
        source: sent.source,
        ...(shared ? { history: { from_call: previous.call, kept } } : { system }),
        message_count: kept + added.length,
        messages: added,
        tools: this.toolSetOf(sent.tools),
        settings: sent.settings.api ? { ...sent.settings, api: this.maskValue(sent.settings.api) as Record<string, unknown> } : sent.settings,
      },
      response: {
        text: this.mask(call.text),
        reasoning: this.mask(call.reasoning),
        tool_calls: call.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: this.maskValue(c.arguments) })),
        finish_reason: call.error ? 'error' : (call.finish ?? 'cancelled'),
        ...(call.error ? { error: { code: call.error.code, summary: this.mask(call.error.summary) } } : {}),
      },
      usage,
      cost_usd: call.usage ? modelCost(call.provider, call.model, call.usage, call.startedAt) : null,
      latency_ms: round3(latency),
      first_token_ms: call.firstToken === null ? null : round3(call.firstToken),
    };
    let text = JSON.stringify(line);
    let written = line;
    if (Buffer.byteLength(text) > this.maxBytes) {
      written = capModelCallLine(line, this.maxBytes);
      text = JSON.stringify(written);
    }
    this.appendLine(`${text}\n`);
    if (this.o.calls?.listening) {
      const { history, system: _own, ...request } = written.request;
      const whole: ModelCall = {
        ...written,
        request: { ...request, system, messages: [...messages.slice(0, kept), ...written.request.messages] },
        previous_call: previous?.call ?? null,
      };
      if (history) whole.request.shared_with = { call: history.from_call, messages: history.kept };
      try {
        this.o.calls.publish(whole);
      } catch {
        // a listener's failure is not the run's
      }
    }
  }

  /**
   * A local model's messages: the first ones it shares with the previous turn are found by identity
   * (the loop keeps its message objects), and only the new ones are converted — a long run does not
   * walk its whole conversation twice per turn.
   */
  private sharedLocal(call: OpenCall, previous: ModelCallRecorder['lastTurn']): { kept: number; added: SentMessage[]; messages: SentMessage[] } {
    const cur = call.request.messages;
    const count = Math.min(call.count, cur.length);
    let kept = 0;
    const raw = previous?.raw;
    if (raw) {
      const max = Math.min(raw.length, count);
      while (kept < max && raw[kept] === cur[kept]) kept++;
    }
    const added: SentMessage[] = [];
    for (let i = kept; i < count; i++) added.push(this.recordedMessage(cur[i]));
    if (call.kind !== 'turn') return { kept, added, messages: added };
    // the previous turn's arrays become this one's: cut to what is shared, then the new messages
    const next = previous && raw ? previous : { call: call.call, system: '', raw: [] as ChatMessage[], messages: [] as SentMessage[] };
    next.raw!.length = kept;
    next.messages.length = kept;
    for (let i = kept; i < count; i++) next.raw!.push(cur[i]);
    next.messages.push(...added);
    this.lastTurn = { call: call.call, system: this.maskedSystem(call.request.system), raw: next.raw, messages: next.messages };
    return { kept, added, messages: next.messages };
  }

  /** A request an API adapter received: new objects each call, compared by content. */
  private sharedApi(sent: SentRequest, previous: ModelCallRecorder['lastTurn']): { kept: number; added: SentMessage[]; messages: SentMessage[] } {
    const messages = sent.messages.map((m) => this.recordMessage(m));
    let kept = 0;
    if (previous) {
      const max = Math.min(previous.messages.length, messages.length);
      while (kept < max && this.same(previous.messages[kept], messages[kept])) kept++;
    }
    return { kept, added: messages.slice(kept), messages };
  }

  /** The system prompt is the same every turn: masked once. */
  private maskedSystem(text: string): string {
    if (this.lastSystem.raw !== text) this.lastSystem = { raw: text, masked: this.mask(text) };
    return this.lastSystem.masked;
  }

  /** A local model's request: Runtrail's own, as it handed it over. */
  private asSent(call: OpenCall): SentRequest {
    const r = call.request;
    return {
      source: 'model_request',
      system: r.system,
      messages: [],
      tools: r.tools,
      settings: plainSettings({ model: `${call.provider}:${call.model}`, reasoning: r.reasoning, cacheKey: r.cacheKey }),
    };
  }

  private recordedMessage(m: ChatMessage): SentMessage {
    let r = this.recorded.get(m);
    if (!r) {
      r = this.recordMessage(sentMessageOf(m));
      this.recorded.set(m, r);
    }
    return r;
  }

  /** A message as the record keeps it: texts masked, inline data moved to a file of the run. */
  private recordMessage(m: SentMessage): SentMessage {
    return { ...m, parts: m.parts.map((p) => this.recordPart(p)) };
  }

  private recordPart(p: SentPart): SentPart {
    switch (p.type) {
      case 'text':
      case 'reasoning':
        return { ...p, content: this.mask(p.content) };
      case 'tool_call':
        return { ...p, arguments: this.maskValue(p.arguments) };
      case 'tool_call_response':
        return { ...p, response: this.maskValue(p.response) };
      case 'blob':
        return this.fileOf(p);
      case 'uri':
        return { ...p, uri: this.mask(p.uri) };
      default:
        return p;
    }
  }

  private maskValue(v: unknown): unknown {
    if (typeof v === 'string') return this.mask(v);
    if (Array.isArray(v)) return v.map((x) => this.maskValue(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, this.maskValue(x)]));
    return v;
  }

  /** Inline data as a file of the run folder, named by its content: each image is written once. */
  private fileOf(p: Extract<SentPart, { type: 'blob' }>): SentPart {
    const known = this.files.get(p.content);
    if (known) return known;
    const bytes = Buffer.from(p.content, 'base64');
    const hash = createHash('sha256').update(bytes).digest('hex').slice(0, 32);
    const fileId = `${MODEL_CALL_FILES_DIR}/${hash}.${EXTENSIONS[p.mime_type] ?? 'bin'}`;
    const part: SentPart = {
      type: 'file',
      modality: p.modality,
      mime_type: p.mime_type,
      file_id: fileId,
      bytes: bytes.length,
      ...(p.label ? { label: this.mask(p.label) } : {}),
    };
    this.files.set(p.content, part);
    this.filesDir ??= mkdir(join(this.o.root, MODEL_CALL_FILES_DIR), { recursive: true }).then(() => undefined);
    const dir = this.filesDir;
    this.track(dir.then(() => writeFile(join(this.o.root, fileId), bytes, { mode: 0o600 })));
    return part;
  }

  private same(a: SentMessage | undefined, b: SentMessage | undefined): boolean {
    if (a === b) return true;
    if (!a || !b) return false;
    return this.keyOf(a) === this.keyOf(b);
  }

  private keyOf(m: SentMessage): string {
    let k = this.keys.get(m);
    if (k === undefined) {
      k = JSON.stringify(m);
      this.keys.set(m, k);
    }
    return k;
  }

  /** The set id of a tool list; a new list is added to runtime/model_tools.json. */
  private toolSetOf(tools: ToolSpec[]): { set: string; count: number } | null {
    if (!tools.length) return null;
    const last = this.lastTools;
    // the executor hands the same spec objects every turn: the same list is found without serialising it
    if (last && last.list.length === tools.length && last.list.every((t, i) => t === tools[i])) return { set: last.set, count: tools.length };
    const json = JSON.stringify(tools);
    if (last?.json === json) {
      this.lastTools = { ...last, list: tools };
      return { set: last.set, count: tools.length };
    }
    const set = `tools-${createHash('sha256').update(json).digest('hex').slice(0, 12)}`;
    this.lastTools = { list: tools, json, set };
    if (!this.toolSets.has(set)) {
      this.toolSets.set(set, tools);
      const file = JSON.stringify(Object.fromEntries(this.toolSets), null, 1);
      this.writeWhole(join(this.o.root, MODEL_TOOLS_FILE), file);
    }
    return { set, count: tools.length };
  }

  /**
   * A line to runtime/model_calls.jsonl, written at once on a descriptor kept open (as the event log
   * is): a call's line is on disk before the loop hears the call ended, and a 1,000-turn run does not
   * open the file 1,000 times.
   */
  private appendLine(text: string): void {
    try {
      this.fd ??= openSync(join(this.o.root, MODEL_CALLS_FILE), 'a', 0o600);
      const buf = Buffer.from(this.lineBreakFirst ? `\n${text}` : text);
      this.lineBreakFirst = false;
      for (let off = 0; off < buf.length; ) off += writeSync(this.fd, buf, off, buf.length - off);
    } catch (e) {
      this.failure ??= (e as Error).message;
    }
  }

  /** Replaces a whole file, after the writes before it; a failure is kept for close(). */
  private writeWhole(file: string, text: string): void {
    const write = this.writes.then(() => writeFile(file, text, { mode: 0o600 }));
    this.writes = write.catch((e: Error) => void (this.failure ??= e.message));
  }

  private track(p: Promise<void>): void {
    const done = p.catch((e: Error) => void (this.failure ??= e.message));
    this.writes = Promise.all([this.writes, done]).then(() => undefined);
  }

  /** Every line so far on disk. */
  settled(): Promise<void> {
    return this.writes;
  }

  /** Ends the recording: calls still open are recorded as cut off; resolves with what could not be written (or null). */
  async close(): Promise<string | null> {
    this.unsubscribe();
    for (const call of [...this.open]) this.settle(call);
    await this.writes;
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {
        // the lines are written; a failing close does not undo them
      }
      this.fd = null;
    }
    return this.failure;
  }
}
