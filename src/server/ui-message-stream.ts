/**
 * A run's AgentEvents as the AI SDK's UI message stream (protocol v1), so `useChat` renders a run:
 * one assistant message per run (its id is the run id); a step per model call, holding that call's
 * reasoning, text and the tool calls it asked for; process events as `data-process` parts (one per
 * operation, updated in place); approvals as `tool-approval-request` (the response ends there while
 * the call waits); then `finish` (or `error` + `finish`, or `abort`) and `[DONE]`. A pure fold of the event sequence: a resumed stream replays
 * the same chunks from the start.
 *
 * A run resumed after its process died redoes the turn that was streaming: the UI message stream has
 * no way to take text back, so the partial deltas of that turn (the `discarded` ranges the log holds
 * when the stream starts) are not sent — a client reading the stream after the resume sees one answer.
 * A stream that was already sending them when the `resumed` event arrives ends their parts there.
 */
import type { UIMessageChunk } from 'ai';
import type { AgentEvent, AgentEventOf } from '../events/agent-event.js';
import { inRanges, type SeqRange } from '../runtime/storage/discarded-ranges.js';

export const UI_MESSAGE_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
} as const;

/** What the message's metadata says of its run. */
export interface RunMessageMetadata {
  run_id: string;
  trace_id: string;
  conversation_id: string;
  status?: 'completed' | 'failed' | 'cancelled' | 'awaiting_approval';
}

export function sseChunk(chunk: UIMessageChunk | '[DONE]'): string {
  return `data: ${chunk === '[DONE]' ? chunk : JSON.stringify(chunk)}\n\n`;
}

export class UiMessageStreamTranslator {
  private stepOpen = false;
  private text: string | null = null;
  private reasoning: string | null = null;
  private parts = 0;
  private readonly denied = new Set<string>();
  private done = false;

  constructor(
    private readonly meta: RunMessageMetadata,
    /** seq ranges of deltas a resume discarded (their turn was redone) */
    private readonly discarded: readonly SeqRange[] = [],
  ) {}

  get finished(): boolean {
    return this.done;
  }

  /** The first chunk of the message. */
  start(): UIMessageChunk {
    return { type: 'start', messageId: this.meta.run_id, messageMetadata: { ...this.meta } };
  }

  push(ev: AgentEvent): UIMessageChunk[] {
    if (this.done) return [];
    if ((ev.stream === 'assistant' || ev.stream === 'reasoning') && this.discarded.length && inRanges(this.discarded, ev.seq)) return [];
    switch (ev.stream) {
      case 'lifecycle':
        // the turn whose deltas this stream sent before it knew of the resume is redone: its parts end
        return ev.data.phase === 'resumed' && ev.data.discardFromSeq !== null ? [...this.closeReasoning(), ...this.closeText()] : [];
      case 'model':
        return this.model(ev);
      case 'reasoning': {
        const d = ev.data;
        if (d.phase === 'end') return this.closeReasoning();
        if (!d.delta) return [];
        const out: UIMessageChunk[] = [];
        if (this.reasoning === null) {
          this.reasoning = `reasoning-${++this.parts}`;
          out.push({ type: 'reasoning-start', id: this.reasoning });
        }
        out.push({ type: 'reasoning-delta', id: this.reasoning, delta: d.delta });
        return out;
      }
      case 'assistant': {
        const d = ev.data;
        if (d.phase === 'end') return this.closeText();
        if (!d.delta) return [];
        const out: UIMessageChunk[] = [];
        if (this.text === null) {
          this.text = `text-${++this.parts}`;
          out.push({ type: 'text-start', id: this.text });
        }
        out.push({ type: 'text-delta', id: this.text, delta: d.delta });
        return out;
      }
      case 'tool':
        return this.tool(ev);
      case 'process':
        return [{ type: 'data-process', id: ev.data.event.operationId, data: ev.data.event }];
      case 'run':
        return this.runFact(ev);
      default:
        return [];
    }
  }

  /**
   * Ends this response while the run waits for a person (as the AI SDK ends a step that needs approval):
   * the client shows the request; its answer comes back as a new POST /api/chat, whose stream goes on.
   */
  pause(): UIMessageChunk[] {
    return [
      ...this.closeReasoning(),
      ...this.closeText(),
      { type: 'finish', finishReason: 'tool-calls', messageMetadata: { ...this.meta, status: 'awaiting_approval' } },
    ];
  }

  private closeText(): UIMessageChunk[] {
    if (this.text === null) return [];
    const id = this.text;
    this.text = null;
    return [{ type: 'text-end', id }];
  }

  private closeReasoning(): UIMessageChunk[] {
    if (this.reasoning === null) return [];
    const id = this.reasoning;
    this.reasoning = null;
    return [{ type: 'reasoning-end', id }];
  }

  private closeStep(): UIMessageChunk[] {
    const out = [...this.closeReasoning(), ...this.closeText()];
    if (this.stepOpen) out.push({ type: 'finish-step' });
    this.stepOpen = false;
    return out;
  }

  private model(ev: AgentEventOf<'model'>): UIMessageChunk[] {
    if (ev.data.phase === 'start') {
      // a step is a model call and the tool calls it asked for: it ends when the next call starts
      const out = this.closeStep();
      this.stepOpen = true;
      out.push({ type: 'start-step' });
      return out;
    }
    return [...this.closeReasoning(), ...this.closeText()];
  }

  private tool(ev: AgentEventOf<'tool'>): UIMessageChunk[] {
    const d = ev.data;
    switch (d.phase) {
      case 'start': {
        // Runtrail's tools are not known to the client's code: dynamic tool parts
        const mcp = d.kind === 'mcp' && d.server ? `${d.server} · ${(d as { serverTool?: string }).serverTool ?? d.name}` : null;
        return [
          { type: 'tool-input-available', toolCallId: d.toolCallId, toolName: d.name, input: d.args ?? {}, dynamic: true, ...(mcp ? { title: mcp } : {}) },
        ];
      }
      case 'result':
        if (this.denied.has(d.toolCallId)) return [];
        return d.isError
          ? [{ type: 'tool-output-error', toolCallId: d.toolCallId, errorText: d.diagnosis?.summary || d.result || 'the tool failed', dynamic: true }]
          : [{ type: 'tool-output-available', toolCallId: d.toolCallId, output: d.result, dynamic: true }];
      default: {
        // A call that waits for a person. Its decision comes back on POST /api/chat (a tool part in
        // state approval-responded) or from anywhere else (API, IM, the run page, a timeout).
        const a = (d as { approval?: { id?: unknown; status?: unknown } }).approval;
        if (!a || typeof a.id !== 'string') return [];
        if (a.status === 'pending') return [{ type: 'tool-approval-request', approvalId: a.id, toolCallId: d.toolCallId }];
        if (a.status === 'denied') {
          // the model is told of the denial as a failed result; the client sees the denial itself
          this.denied.add(d.toolCallId);
          return [{ type: 'tool-output-denied', toolCallId: d.toolCallId }];
        }
        return [];
      }
    }
  }

  private runFact(ev: AgentEventOf<'run'>): UIMessageChunk[] {
    const d = ev.data;
    switch (d.type) {
      case 'notice':
        return [{ type: 'data-notice', data: { text: d.text }, transient: true }];
      case 'run.completed':
        this.done = true;
        return [...this.closeStep(), { type: 'finish', finishReason: 'stop', messageMetadata: { ...this.meta, status: 'completed' } }];
      case 'run.failed':
        this.done = true;
        return [
          ...this.closeStep(),
          { type: 'error', errorText: d.diagnosis?.summary || 'run failed' },
          { type: 'finish', finishReason: 'error', messageMetadata: { ...this.meta, status: 'failed' } },
        ];
      case 'run.cancelled':
        this.done = true;
        return [
          ...this.closeStep(),
          { type: 'message-metadata', messageMetadata: { ...this.meta, status: 'cancelled' } },
          { type: 'abort', reason: d.diagnosis?.summary || 'run cancelled' },
        ];
      default:
        return [];
    }
  }
}
