/**
 * Runs one tool call in a fixed order: lookup → validate args → permission → PreToolUse → handler
 * (timeout, AbortSignal, OperationReporter) → validate output → PostToolUse → ToolResult.
 * Every failure becomes an error result with a Diagnosis for the model; nothing here throws.
 */
import { checkSchema, issuesText, jsonSchemaOf } from '../../tools/schema.js';
import { isFlatRecord } from '../../tools/flat-record.js';
import type { DiagnosisInit } from '../../events/diagnosis.js';
import type { OperationReporter } from '../../events/operation-reporter-types.js';
import type { ToolData, ToolStepKind } from '../../events/agent-event.js';
import type { ToolCallRequest, ToolSpec } from '../../providers/model-provider.js';
import type { AnyToolDefinition, ToolResult } from '../../tools/tool.js';
import { ToolSourceError, type ToolSource } from '../../tools/tool-source.js';
import type { RunHooks, ToolCallInfo } from '../run-hooks.js';
import { emptyHooks } from '../run-hooks.js';
import { permissionFor, type ApprovalCall, type ApprovalDecision, type Permission } from './approvals.js';
import { noopPublish, type PublishFn } from '../run-publisher.js';
import { CallReporter } from './call-reporter.js';
import { ToolCallFlight, ToolDeadlines } from './tool-call-flight.js';

/** What the PreToolUse hooks made of a call: the call to run (its arguments maybe rewritten), or its refusal as the call's result. */
type PreToolUseOutcome = { kind: 'call'; call: ToolCallInfo } | { kind: 'refused'; result: ToolResult };
export const DEFAULT_TOOL_TIMEOUT_MS = 120_000;

export interface ToolExecutorOptions {
  tools: AnyToolDefinition[];
  /** Names the capability snapshot allows; a registered tool outside it is denied. */
  allowedTools: Iterable<string>;
  hooks?: RunHooks;
  publish?: PublishFn;
  /** The process pipeline's reporter for this call (operationId = toolCallId). */
  reporterFor?: (call: ToolCallInfo) => OperationReporter | undefined;
  defaultTimeoutMs?: number;
  /** The run's signal: aborting it aborts the running handler. */
  signal?: AbortSignal;
  /** Tools known only once connected (MCP servers): added by openSources(), allowed as their source grants. */
  sources?: ToolSource[];
  /** allow | ask | deny per tool name, glob or `*` (an agent's `permissions`); default allow. */
  permissions?: Record<string, Permission>;
  /** Holds an `ask` call until a person decides (the run's ApprovalBroker). */
  requestApproval?: (call: ApprovalCall) => Promise<ApprovalDecision>;
  /** The run's tool-call journal (its checkpoint): each call recorded as started before its handler
   *  and as finished after; on a resumed run, what the dead process recorded of a call. */
  journal?: ToolCallJournal;
}

export interface ToolCallJournal {
  /** What an earlier attempt of the run recorded: a result (finished), or none (started, never
   *  finished: then the arguments it ran with and the tool's `intent`, when recorded). */
  prior(toolCallId: string): { result?: ToolResult; args?: unknown; intent?: unknown } | undefined;
  /** `durable`: resolve only once the record is on the disk (the call is not safe to run twice).
   *  `intent`: what the call is about to leave behind (its tool's `intent`). */
  started(toolCallId: string, name: string, args: unknown, durable: boolean, intent?: unknown): Promise<void> | void;
  finished(toolCallId: string, name: string, result: ToolResult): void;
}

export interface ExecutedToolCall {
  call: ToolCallInfo;
  result: ToolResult;
  durationMs: number;
}

function toolFailure(code: string, summary: string, detail = '', hint = '', retryable = false): ToolResult {
  const diagnosis: DiagnosisInit = { code, severity: 'error', summary, detail, hint, retryable };
  return { ok: false, content: `Error: ${summary}${detail ? ` — ${detail}` : ''}${hint ? ` (hint: ${hint})` : ''}`, diagnosis };
}

/** A definition's spec, kept while its name, description and parameters stay the same objects. */
const specOf = new WeakMap<AnyToolDefinition, { name: string; description: string; parameters: unknown; spec: ToolSpec }>();

/**
 * What the model is told of a tool. Every turn asks for the specs (twice: the context check and the
 * request); converting a zod schema to JSON Schema each time was a good part of a turn, and a new
 * spec object each turn defeated the per-spec token counts.
 */
export function toolSpecOf(tool: AnyToolDefinition): ToolSpec {
  const c = specOf.get(tool);
  if (c && c.name === tool.name && c.description === tool.description && c.parameters === tool.parameters) return c.spec;
  const spec = { name: tool.name, description: tool.description, inputSchema: jsonSchemaOf(tool.parameters) };
  specOf.set(tool, { name: tool.name, description: tool.description, parameters: tool.parameters, spec });
  return spec;
}

export class ToolExecutor {
  private readonly tools = new Map<string, AnyToolDefinition>();
  private readonly allowed: Set<string>;
  private readonly hooks: RunHooks;
  private readonly publish: PublishFn;
  private readonly deadlines: ToolDeadlines;
  /** The names each open source added, replaced when its list changes. */
  private readonly sourceTools = new Map<ToolSource, string[]>();

  constructor(private readonly opts: ToolExecutorOptions) {
    for (const t of opts.tools) this.tools.set(t.name, t);
    this.allowed = new Set(opts.allowedTools);
    this.hooks = opts.hooks ?? emptyHooks();
    this.publish = opts.publish ?? noopPublish;
    this.deadlines = new ToolDeadlines(opts.signal);
  }

  /** The specs the model sees: registered and allowed tools only. */
  /** Whether the loop may see this exact call again without calling it a loop (polling). */
  isRepeatable(call: ToolCallRequest): boolean {
    const tool = this.tools.get(call.name);
    try {
      return tool?.repeatable?.(call.args) === true;
    } catch {
      return false;
    }
  }

  specs(): ToolSpec[] {
    return [...this.tools.values()].filter((t) => this.allowed.has(t.name)).map(toolSpecOf);
  }

  /** Opens the tool sources side by side and adds their tools; the first failure's diagnosis, or null. */
  async openSources(signal: AbortSignal = this.opts.signal ?? new AbortController().signal): Promise<DiagnosisInit | null> {
    const sources = this.opts.sources ?? [];
    const opened = await Promise.allSettled(sources.map((s) => s.open(signal)));
    let failure: DiagnosisInit | null = null;
    opened.forEach((r, i) => {
      const source = sources[i];
      if (r.status === 'fulfilled') {
        this.useSourceTools(source, r.value);
        source.onChange?.((tools) => this.useSourceTools(source, tools));
        return;
      }
      const e = r.reason as Error;
      failure ??=
        e instanceof ToolSourceError
          ? e.diagnosis
          : { code: 'tool_source_failed', severity: 'error', summary: `${source.name} failed: ${e?.message ?? String(e)}` };
    });
    return failure;
  }

  /** Tells every source the run is done with it. */
  async closeSources(): Promise<void> {
    await Promise.all((this.opts.sources ?? []).map((s) => s.close().catch(() => undefined)));
  }

  private useSourceTools(source: ToolSource, tools: AnyToolDefinition[]): void {
    for (const n of this.sourceTools.get(source) ?? []) {
      this.tools.delete(n);
      this.allowed.delete(n);
    }
    const names: string[] = [];
    for (const t of tools) {
      if (this.tools.has(t.name)) continue; // a run's own tool (or another source's) keeps its name
      this.tools.set(t.name, t);
      this.allowed.add(t.name);
      names.push(t.name);
    }
    this.sourceTools.set(source, names);
  }

  async execute(req: ToolCallRequest): Promise<ExecutedToolCall> {
    const started = performance.now();
    const tool = this.tools.get(req.name);
    const call: ToolCallInfo = { name: req.name, toolCallId: req.id, args: req.args };
    const kind: ToolStepKind = tool?.kind ?? 'tool';
    // a resumed run: a call the dead process finished is never run again (the model gets its recorded
    // result; its events are in the log already); one it started and never finished runs again only
    // when running it twice is safe
    const prior = this.opts.journal?.prior(req.id);
    if (prior?.result) return { call, result: prior.result, durationMs: 0 };
    // one whose tool can tell that what it does is complete (a file whole on the disk) counts as finished
    const done = prior && tool?.completedBefore ? await this.completedBefore(tool, prior.args ?? req.args, prior.intent) : null;
    if (done) return this.endedByCrash(call, done, performance.now() - started);
    if (prior && !(tool?.readOnly || tool?.idempotent)) return this.interruptedCall(call, performance.now() - started);
    // a snapshot: a hook or tool that mutates its (nested) arguments must not change the event a slow
    // live reader serialises later, or live frames would differ from events.jsonl and its replay
    const mcp = tool?.mcp;
    this.publish(
      'tool',
      mcp
        ? { phase: 'start', name: req.name, toolCallId: req.id, args: snapshot(req.args), kind, server: mcp.server, serverTool: mcp.tool }
        : { phase: 'start', name: req.name, toolCallId: req.id, args: snapshot(req.args), kind },
    );
    const result = await this.run(tool, call);
    this.opts.journal?.finished(req.id, req.name, result);
    const durationMs = performance.now() - started;
    // built field by field (no empty objects spread in): the key order is events.jsonl's
    const data: Extract<ToolData, { phase: 'result' }> = { phase: 'result', name: req.name, toolCallId: req.id, isError: !result.ok, result: result.content };
    if (result.details !== undefined) data.details = result.details;
    if (result.diagnosis) data.diagnosis = { detail: '', hint: '', retryable: false, ...result.diagnosis };
    data.durationMs = Math.round(durationMs * 1000) / 1000;
    this.publish('tool', data);
    return { call, result, durationMs };
  }

  /** A call that was running when the run's process died, of a tool not safe to run twice: not run
   *  again; the model is told its effect is unknown. */
  private interruptedCall(call: ToolCallInfo, durationMs: number): ExecutedToolCall {
    const result = toolFailure(
      'interrupted_during_call',
      `${call.name} was running when the run's process stopped; it was not run again, and whether it took effect is unknown`,
      `arguments: ${JSON.stringify(call.args ?? null).slice(0, 300)}`,
      'check whether its effect happened (look at what it changes) before calling it again',
    );
    return this.endedByCrash(call, result, durationMs);
  }

  /** A cut-short call's check of its own effect; a check that fails counts as "not complete". */
  private async completedBefore(tool: AnyToolDefinition, args: unknown, intent: unknown): Promise<ToolResult | null> {
    try {
      return (await tool.completedBefore?.(args, intent)) ?? null;
    } catch {
      return null;
    }
  }

  /** A call the dead process started settled without running it: recorded as finished, and its result
   *  published (its start event is in the log already). */
  private endedByCrash(call: ToolCallInfo, result: ToolResult, durationMs: number): ExecutedToolCall {
    this.opts.journal?.finished(call.toolCallId, call.name, result);
    const data: Extract<ToolData, { phase: 'result' }> = {
      phase: 'result',
      name: call.name,
      toolCallId: call.toolCallId,
      isError: !result.ok,
      result: result.content,
    };
    if (result.details !== undefined) data.details = result.details;
    if (result.diagnosis) data.diagnosis = { detail: '', hint: '', retryable: false, ...result.diagnosis };
    data.durationMs = 0;
    this.publish('tool', data);
    return { call, result, durationMs };
  }

  /** lookup → arguments → permission → PreToolUse → handler → output → PostToolUse */
  private async run(tool: AnyToolDefinition | undefined, call: ToolCallInfo): Promise<ToolResult> {
    if (!tool) return this.notFound(call.name);
    const parsed = checkSchema(tool.parameters, call.args);
    if (!parsed.ok) {
      return toolFailure(
        'invalid_args',
        `invalid arguments for ${tool.name}`,
        issuesText(parsed.issues),
        'fix the arguments to match the tool schema and call it again',
      );
    }
    // the capability snapshot, then the agent's allow | ask | deny
    if (!this.allowed.has(tool.name)) {
      return toolFailure('permission_denied', `tool "${tool.name}" is not allowed in this run`, 'it is outside the capability snapshot');
    }
    const checked = parsed.value === call.args ? call : { ...call, args: parsed.value };
    // most calls are allowed outright: no await for them
    const askWhy = tool.needsApproval ? tool.needsApproval(checked.args) : null;
    let approved = false;
    if (askWhy !== null || permissionFor(this.opts.permissions, tool.name) !== 'allow') {
      const denied = await this.permit(tool.name, checked, askWhy !== null);
      if (denied) return denied;
      approved = permissionFor(this.opts.permissions, tool.name) === 'ask' || askWhy !== null;
    }
    const pre: PreToolUseOutcome = this.hooks.preToolUse.length ? await this.preToolUse(tool, checked) : { kind: 'call', call: checked };
    if (pre.kind === 'refused') return pre.result;
    // a hook that rewrote the arguments made a call nobody approved
    const result = this.checkedOutput(tool, await this.invoke(tool, pre.call, approved && pre.call === checked));
    return this.hooks.postToolUse.length ? this.postToolUse(pre.call, result) : result;
  }

  private notFound(name: string): ToolResult {
    const known = [...this.allowed].filter((n) => this.tools.has(n)).sort();
    return toolFailure('tool_not_found', `unknown tool "${name}"`, '', known.length ? `available tools: ${known.join(', ')}` : '');
  }

  /** The call as the PreToolUse hooks leave it (a hook may rewrite its arguments), or the failure. */
  private async preToolUse(tool: AnyToolDefinition, call: ToolCallInfo): Promise<PreToolUseOutcome> {
    let args = call.args;
    for (const h of this.hooks.preToolUse) {
      let d;
      try {
        const r = h.beforeTool({ ...call, args });
        d = isPromise(r) ? await r : r;
      } catch (e) {
        return { kind: 'refused', result: toolFailure('hook_error', `PreToolUse hook ${h.name} failed`, (e as Error).message) };
      }
      if (!d || d.action === 'allow') continue;
      if (d.action === 'deny') return { kind: 'refused', result: toolFailure('hook_denied', `${h.name} denied ${tool.name}`, d.reason) };
      const again = checkSchema(tool.parameters, d.args);
      if (!again.ok)
        return { kind: 'refused', result: toolFailure('hook_error', `PreToolUse hook ${h.name} rewrote invalid arguments`, issuesText(again.issues)) };
      args = again.value;
    }
    return { kind: 'call', call: args === call.args ? call : { ...call, args } };
  }

  private checkedOutput(tool: AnyToolDefinition, result: ToolResult): ToolResult {
    if (!result.ok || !tool.output) return result;
    const out = checkSchema(tool.output, result.details);
    return out.ok ? result : toolFailure('invalid_output', `${tool.name} returned output that does not match its schema`, issuesText(out.issues));
  }

  private async postToolUse(call: ToolCallInfo, result: ToolResult): Promise<ToolResult> {
    for (const h of this.hooks.postToolUse) {
      try {
        const r = h.afterTool(call, result);
        const replaced = isPromise(r) ? await r : r;
        if (replaced) result = replaced;
      } catch (e) {
        return toolFailure('hook_error', `PostToolUse hook ${h.name} failed`, (e as Error).message);
      }
    }
    return result;
  }

  /** What the call is about to leave behind, as its tool declares it (recorded with its start). */
  private intentOf(tool: AnyToolDefinition, args: unknown): unknown {
    if (!tool.intent || !this.opts.journal) return undefined;
    try {
      return tool.intent(args);
    } catch {
      // a tool that cannot say is re-run (or reported interrupted) after a crash, as one that declares nothing
      return undefined;
    }
  }

  /** Whether a call of this tool that a crash cut short may have finished: it checks its own effect. */
  checksCompletion(name: string): boolean {
    return this.tools.get(name)?.completedBefore !== undefined;
  }

  /** Whether a call of this tool that a crash cut short may run again: read-only or idempotent. */
  safeToRepeat(name: string): boolean {
    const tool = this.tools.get(name);
    return tool?.readOnly === true || tool?.idempotent === true;
  }

  /** Whether calls of this tool may run beside other calls of a turn: read-only, and allowed without asking. */
  isParallelSafe(call: ToolCallRequest): boolean {
    const tool = this.tools.get(call.name);
    return tool?.readOnly === true && this.allowed.has(call.name) && permissionFor(this.opts.permissions, call.name) === 'allow';
  }

  /** A failed result when the agent's permissions deny the call or a person does; null to go on. */
  private async permit(name: string, call: ToolCallInfo, askAnyway = false): Promise<ToolResult | null> {
    const rule = permissionFor(this.opts.permissions, name);
    if (rule === 'allow' && !askAnyway) return null;
    if (rule === 'deny')
      return toolFailure('permission_denied', `tool "${name}" is denied to this agent`, 'its permissions say deny', 'do the task another way');
    if (!this.opts.requestApproval) return toolFailure('approval_unavailable', `tool "${name}" needs a person's approval and nobody can be asked here`);
    const d = await this.opts.requestApproval({ name, toolCallId: call.toolCallId, args: call.args });
    if (d.cancelled) return toolFailure('cancelled', `${name} cancelled while it waited for approval`);
    if (d.approved) return null;
    const why = d.by === 'timeout' ? `no one decided in time (${d.reason ?? 'approval timeout'})` : `denied by ${d.by}${d.reason ? `: ${d.reason}` : ''}`;
    return toolFailure(
      'approval_denied',
      `${name} was not approved: ${why}`,
      d.reason ?? '',
      'do not call it again with these arguments; do the task another way or explain what you need',
    );
  }

  private invoke(tool: AnyToolDefinition, call: ToolCallInfo, approved = false): Promise<ToolResult> {
    const runSignal = this.opts.signal;
    if (runSignal?.aborted) return Promise.resolve(toolFailure('cancelled', `${tool.name} not started: the run was cancelled`));
    // recorded before the handler runs: on the disk first when running the call twice would not be safe
    const recorded = this.opts.journal?.started(call.toolCallId, tool.name, call.args, !(tool.readOnly || tool.idempotent), this.intentOf(tool, call.args));
    if (recorded) return recorded.then(() => this.invokeNow(tool, call, approved));
    return this.invokeNow(tool, call, approved);
  }

  private invokeNow(tool: AnyToolDefinition, call: ToolCallInfo, approved = false): Promise<ToolResult> {
    if (this.opts.signal?.aborted) return Promise.resolve(toolFailure('cancelled', `${tool.name} not started: the run was cancelled`));
    const timeoutMs = tool.timeoutMs ?? this.opts.defaultTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    if (!this.opts.reporterFor) return new ToolCallFlight(tool, call.args, call.toolCallId, timeoutMs, this.deadlines, toolFailure, undefined, approved).result;
    return this.invokeReported(tool, call, timeoutMs, approved);
  }

  /** A call whose progress goes to a reporter: one its tool started but never ended is ended here. */
  private async invokeReported(tool: AnyToolDefinition, call: ToolCallInfo, timeoutMs: number, approved = false): Promise<ToolResult> {
    const reporter = new CallReporter(() => this.opts.reporterFor?.(call));
    const result = await new ToolCallFlight(tool, call.args, call.toolCallId, timeoutMs, this.deadlines, toolFailure, reporter, approved).result;
    if (reporter.used && !reporter.ended) {
      if (result.ok) reporter.complete();
      else if (result.diagnosis?.code === 'cancelled') reporter.cancel(result.content);
      else reporter.fail(result.content);
    }
    return result;
  }
}

/** Hooks may answer synchronously: awaiting only a promise saves a turn of the microtask queue per hook and call. */
function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null | undefined)?.then === 'function';
}

/** A copy as events.jsonl will hold it (model arguments are JSON); flat objects take the cheap path. */
function snapshot(v: unknown): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (isFlatRecord(v)) return { ...v };
  try {
    return JSON.parse(JSON.stringify(v)) as unknown;
  } catch {
    return v; // BigInt or a cycle: the store writes its own safe copy
  }
}
