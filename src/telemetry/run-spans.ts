/**
 * A run's spans, folded from its AgentEvents: the run itself (`runtrail.run`), each model call
 * (GenAI semantic conventions, `chat <model>`), each tool call (`execute_tool <tool>`; an MCP call
 * `tools/call <tool>`, a subagent `invoke_agent <agent>`, by the call's step kind) and each compaction.
 * One fold feeds both the OpenTelemetry exporter and the page's trace view, so they show the same tree.
 * Pure: no clock, no I/O; span times are the events' `ts`.
 */
import type { AgentEvent, AgentEventOf, ModelTokens, ToolStepKind } from '../events/agent-event.js';

export type RunSpanKind = 'run' | 'model' | 'compaction' | ToolStepKind;
export type SpanAttributeValue = string | number | boolean | string[];
export type SpanAttributes = Record<string, SpanAttributeValue>;

export interface RunSpan {
  /** stable within the run: `run`, `model:<turn>.<attempt>`, `tool:<toolCallId>`, `compaction:<n>` */
  id: string;
  parentId: string | null;
  kind: RunSpanKind;
  /** the OpenTelemetry span name */
  name: string;
  /** what a person reads: the model, the tool, the MCP server and tool, the agent */
  label: string;
  startMs: number;
  endMs: number | null;
  status: 'running' | 'ok' | 'error' | 'cancelled';
  /** why it failed: a diagnosis code or summary */
  error: string | null;
  attributes: SpanAttributes;
  /** model calls: the tokens the provider reported (null: none reported) */
  tokens?: ModelTokens | null;
  costUsd?: number | null;
  toolCallId?: string;
}

/** Where folded spans go: opened once, closed once (with their final attributes and status). */
export interface RunSpanSink {
  open(span: RunSpan): void;
  close(span: RunSpan): void;
  /** A point in time on a span: a state change, a notice, an approval. */
  event?(span: RunSpan, name: string, attributes: SpanAttributes, ts: number): void;
}

/** What the events do not say about a run: who it is for and which channel started it. */
export interface RunSpanContext {
  runId: string;
  tenantId?: string | null;
  claw?: string;
}

const RUN_SPAN_ID = 'run';

function put(attrs: SpanAttributes, key: string, v: unknown): void {
  if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) attrs[key] = v;
}

function snake(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function argString(args: unknown, key: string): string | null {
  if (!args || typeof args !== 'object') return null;
  const v = (args as Record<string, unknown>)[key];
  return typeof v === 'string' && v.trim() ? v.trim() : null;
}

/** The span name, label and GenAI attributes of a tool call, by its step kind. */
function toolShape(d: Extract<AgentEventOf<'tool'>['data'], { phase: 'start' }>): { name: string; label: string; attrs: SpanAttributes } {
  const kind = d.kind ?? 'tool';
  const attrs: SpanAttributes = { 'gen_ai.tool.call.id': d.toolCallId, 'runtrail.step_kind': kind };
  if (kind === 'mcp') {
    // MCP semantic conventions: `{mcp.method.name} {target}`; the tool's own name on its server
    const tool = (d as { serverTool?: string }).serverTool ?? d.name;
    Object.assign(attrs, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': tool, 'mcp.method.name': 'tools/call', 'runtrail.tool.name': d.name });
    if (d.server) attrs['runtrail.mcp.server'] = d.server;
    return { name: `tools/call ${tool}`, label: d.server ? `${d.server} · ${tool}` : tool, attrs };
  }
  if (kind === 'agent') {
    const agent = argString(d.args, 'agent') ?? argString(d.args, 'name') ?? d.name;
    Object.assign(attrs, { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agent, 'gen_ai.tool.name': d.name });
    return { name: `invoke_agent ${agent}`, label: agent, attrs };
  }
  const label = kind === 'skill' ? (argString(d.args, 'skill') ?? d.name) : d.name;
  Object.assign(attrs, { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': d.name, 'gen_ai.tool.type': 'function' });
  return { name: `execute_tool ${d.name}`, label, attrs };
}

export class RunSpanFolder {
  private run: RunSpan | null = null;
  private readonly open = new Map<string, RunSpan>();
  private compactions = 0;
  private readonly base: SpanAttributes;

  constructor(
    private readonly sink: RunSpanSink,
    private readonly ctx: RunSpanContext,
  ) {
    this.base = { 'runtrail.run_id': ctx.runId };
    if (ctx.claw) this.base['runtrail.claw'] = ctx.claw;
    if (ctx.tenantId) this.base['runtrail.tenant_id'] = ctx.tenantId;
  }

  /** Spans still open (a live run); the run span included. */
  get openSpans(): RunSpan[] {
    return [...(this.run && this.run.endMs === null ? [this.run] : []), ...this.open.values()];
  }

  push(ev: AgentEvent): void {
    switch (ev.stream) {
      case 'model':
        return this.model(ev);
      case 'tool':
        return this.tool(ev);
      case 'compaction':
        return this.compaction(ev);
      case 'run':
        return this.runFact(ev);
      default:
        // assistant/reasoning deltas, process and lifecycle events add nothing to the tree
        return;
    }
  }

  private runSpan(ts: number): RunSpan {
    if (this.run) return this.run;
    // the first event of a run is run.created; a fold that starts later still has a root
    this.run = {
      id: RUN_SPAN_ID,
      parentId: null,
      kind: 'run',
      name: 'runtrail.run',
      label: this.ctx.runId,
      startMs: ts,
      endMs: null,
      status: 'running',
      error: null,
      attributes: { ...this.base },
    };
    this.sink.open(this.run);
    return this.run;
  }

  private child(id: string, kind: RunSpanKind, name: string, label: string, ts: number, attrs: SpanAttributes, toolCallId?: string): RunSpan {
    const parent = this.runSpan(ts);
    // one object shape for every span, no spreads: this runs once per model and tool call
    const attributes: SpanAttributes = Object.assign({}, this.base, attrs);
    const span: RunSpan = {
      id,
      parentId: parent.id,
      kind,
      name,
      label,
      startMs: ts,
      endMs: null,
      status: 'running',
      error: null,
      attributes,
      tokens: undefined,
      costUsd: undefined,
      toolCallId,
    };
    this.open.set(id, span);
    this.sink.open(span);
    return span;
  }

  private end(span: RunSpan, ts: number, status: RunSpan['status'], error: string | null = null): void {
    if (span.endMs !== null) return;
    span.endMs = Math.max(ts, span.startMs);
    span.status = status;
    span.error = error;
    this.open.delete(span.id);
    this.sink.close(span);
  }

  private model(ev: AgentEventOf<'model'>): void {
    const d = ev.data;
    const id = `model:${d.turn}.${d.attempt}`;
    if (d.phase === 'start') {
      this.child(id, 'model', `chat ${d.model}`, d.model, ev.ts, {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': d.provider,
        'gen_ai.provider.name': d.provider,
        'gen_ai.request.model': d.model,
        'runtrail.turn': d.turn,
        'runtrail.attempt': d.attempt,
      });
      return;
    }
    const span =
      this.open.get(id) ??
      this.child(id, 'model', `chat ${d.model}`, d.model, ev.ts, {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': d.provider,
        'gen_ai.request.model': d.model,
      });
    const a = span.attributes;
    a['gen_ai.response.model'] = d.model;
    a['gen_ai.response.finish_reasons'] = [d.finishReason];
    if (d.tokens) {
      a['gen_ai.usage.input_tokens'] = d.tokens.input;
      a['gen_ai.usage.output_tokens'] = d.tokens.output;
      a['gen_ai.usage.cache_read.input_tokens'] = d.tokens.cached_input;
      a['gen_ai.usage.cache_creation.input_tokens'] = d.tokens.cache_write;
      a['runtrail.usage.reasoning_tokens'] = d.tokens.reasoning;
    }
    put(a, 'runtrail.cost_usd', d.costUsd);
    put(a, 'runtrail.first_token_ms', d.firstTokenMs);
    if (d.error) a['error.type'] = d.error;
    span.tokens = d.tokens;
    span.costUsd = d.costUsd;
    this.end(span, ev.ts, d.error ? 'error' : 'ok', d.error ?? null);
  }

  private tool(ev: AgentEventOf<'tool'>): void {
    const d = ev.data;
    const id = `tool:${d.toolCallId}`;
    switch (d.phase) {
      case 'start': {
        const shape = toolShape(d);
        this.child(id, d.kind ?? 'tool', shape.name, shape.label, ev.ts, shape.attrs, d.toolCallId);
        return;
      }
      case 'result': {
        const span =
          this.open.get(id) ??
          this.child(
            id,
            'tool',
            `execute_tool ${d.name}`,
            d.name,
            ev.ts,
            { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': d.name, 'gen_ai.tool.call.id': d.toolCallId },
            d.toolCallId,
          );
        const code = d.isError ? (d.diagnosis?.code ?? 'tool_error') : null;
        if (code) span.attributes['error.type'] = code;
        this.end(span, ev.ts, d.isError ? 'error' : 'ok', d.isError ? (d.diagnosis?.summary ?? code) : null);
        return;
      }
      default: {
        // later phases (updates that link a subagent's run, approvals) mark the open span
        const span = this.open.get(id);
        if (!span) return;
        const extra = d as unknown as Record<string, unknown>;
        const node = extra.node as { id?: unknown; type?: unknown } | undefined;
        if (node && typeof node === 'object') {
          put(span.attributes, 'runtrail.node.id', node.id);
          put(span.attributes, 'runtrail.node.type', node.type);
        }
        const phase = String(extra.phase);
        if (phase !== 'update') {
          // e.g. `approval: { status, by }` becomes the point `runtrail.approval` with runtrail.approval.status, …
          const attrs: SpanAttributes = {};
          const detail = extra[phase];
          if (detail && typeof detail === 'object') for (const [k, v] of Object.entries(detail)) put(attrs, `runtrail.${phase}.${snake(k)}`, v);
          this.sink.event?.(span, `runtrail.${phase}`, attrs, ev.ts);
        }
      }
    }
  }

  private compaction(ev: AgentEventOf<'compaction'>): void {
    const d = ev.data as { phase: string } & Record<string, unknown>;
    if (d.phase === 'start') {
      this.compactions++;
      const attrs: SpanAttributes = {};
      for (const [k, v] of Object.entries(d)) if (k !== 'phase') put(attrs, `runtrail.compaction.${snake(k)}`, v);
      this.child(`compaction:${this.compactions}`, 'compaction', 'runtrail.compaction', 'compaction', ev.ts, attrs);
      return;
    }
    const span = this.open.get(`compaction:${this.compactions}`);
    if (!span) return;
    for (const [k, v] of Object.entries(d)) if (k !== 'phase') put(span.attributes, `runtrail.compaction.${snake(k)}`, v);
    const failed = typeof d.failed === 'string' && d.failed ? d.failed : null;
    this.end(span, ev.ts, failed ? 'error' : 'ok', failed);
  }

  private runFact(ev: AgentEventOf<'run'>): void {
    const d = ev.data;
    const run = this.runSpan(ev.ts);
    switch (d.type) {
      case 'run.created':
        run.attributes['runtrail.plugin'] = d.plugin;
        run.attributes['runtrail.conversation_id'] = d.conversationId;
        for (const s of this.open.values()) s.attributes['runtrail.plugin'] = d.plugin;
        this.base['runtrail.plugin'] = d.plugin;
        return;
      case 'run.state':
        this.sink.event?.(run, 'runtrail.state', { 'runtrail.state.to': d.to, ...(d.from ? { 'runtrail.state.from': d.from } : {}) }, ev.ts);
        return;
      case 'notice':
        this.sink.event?.(run, 'runtrail.notice', { 'runtrail.notice.text': d.text.slice(0, 500) }, ev.ts);
        return;
      case 'hook.blocked':
        this.sink.event?.(run, 'runtrail.hook_blocked', { 'runtrail.hook': d.hook, 'runtrail.reasons': d.reasons.slice(0, 20) }, ev.ts);
        return;
      case 'run.completed':
      case 'run.failed':
      case 'run.cancelled': {
        // what the run left open (a call cut off by cancel or timeout) ends with it
        for (const s of [...this.open.values()]) this.end(s, ev.ts, 'cancelled', 'the run ended first');
        run.attributes['runtrail.status'] = d.status;
        if (d.diagnosis) run.attributes['error.type'] = d.diagnosis.code;
        this.end(run, ev.ts, d.status === 'completed' ? 'ok' : d.status === 'failed' ? 'error' : 'cancelled', d.diagnosis?.summary ?? null);
        return;
      }
      default:
        return;
    }
  }
}
