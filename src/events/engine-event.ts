/**
 * The wire contract of every channel: one factory per event, one serialisation (`toWire`), a degraded
 * text form (`toText`) and `fromWire` to lift legacy plain objects. Keys are snake_case on the wire;
 * legacy keys are always written, added keys only when non-empty.
 *
 * Over 400 lines on purpose: it is the whole wire contract, each event's type, factory and wire form
 * side by side, so a change to one event is seen against all the others.
 */
import { Diagnosis, type DiagnosisDict, type DiagnosisInit } from './diagnosis.js';
import type { RuntimeProcessEvent } from './process-event.js';
import { makeProcessEvent, type ProcessEventFields } from './process-event-factory.js';

export type EngineEventType = 'delta' | 'reasoning' | 'step' | 'done' | 'error' | 'process';
export const ENGINE_EVENT_TYPES: readonly EngineEventType[] = ['delta', 'reasoning', 'step', 'done', 'error', 'process'];
export const STEP_KINDS = ['thinking', 'skill', 'mcp', 'agent', 'kb', 'media', 'tool'] as const;
export type StepKind = (typeof STEP_KINDS)[number];
export type StepPhase = 'start' | 'ok' | 'fail';
const PHASES: readonly string[] = ['start', 'ok', 'fail'];

/** Graph-node identity of a step. */
export interface StepNode {
  id: string;
  type: string;
  label: string;
}

/** A tool call waiting for a person: sent on the step while it waits, and once decided. */
export interface StepApproval {
  id: string;
  status: 'pending' | 'approved' | 'denied';
  tool: string;
  args: Record<string, unknown>;
  /** Who decided: api, cli, im, web, or timeout. */
  by?: string;
  /** The person who decided, when the front door knows (`telegram:123456`). */
  who?: string;
  reason?: string;
}

/** The `step` object on the wire (what the web page's process block renders). */
export interface WireStep {
  type: StepKind;
  text?: string;
  server?: string;
  name?: string;
  args?: Record<string, unknown>;
  result?: string;
  diagnosis?: DiagnosisDict;
  phase?: StepPhase;
  node?: StepNode;
  approval?: StepApproval;
}

/** Observability keys, top-level on every frame, written only when non-empty. */
export interface WireMeta {
  seq?: number;
  trace_id?: string;
  tenant_id?: string;
  claw?: string;
}

export type WireDelta = { type: 'delta'; content: string } & WireMeta;
export type WireReasoning = { type: 'reasoning'; content: string } & WireMeta;
export type WireStepFrame = { type: 'step'; step: WireStep; index?: number } & WireMeta;
export type WireDone = {
  type: 'done';
  message_id: string;
  conversation_id: string;
  content: string;
  process_steps: WireStep[];
  used_skills: string[];
  used_mcp: string[];
  generating: boolean;
} & WireMeta;
export type WireError = { type: 'error'; message: string; diagnosis?: DiagnosisDict } & WireMeta;
export type WireProcess = { type: 'process'; event: RuntimeProcessEvent } & WireMeta;
export type WireFrame = WireDelta | WireReasoning | WireStepFrame | WireDone | WireError | WireProcess;

export interface EngineMetaOptions {
  seq?: number;
  traceId?: string;
  tenantId?: string;
  claw?: string;
}

export interface StepOptions extends EngineMetaOptions {
  name?: string;
  text?: string;
  server?: string;
  args?: Record<string, unknown> | null;
  result?: string;
  phase?: StepPhase | '';
  index?: number | null;
  diagnosis?: Diagnosis | DiagnosisInit | null;
  node?: StepNode | null;
  approval?: StepApproval | null;
}

export interface DoneOptions extends EngineMetaOptions {
  messageId: string;
  conversationId: string;
  content?: string;
  processSteps?: WireStep[] | null;
  usedSkills?: string[] | null;
  usedMcp?: string[] | null;
  generating?: boolean;
}

export interface ErrorOptions extends EngineMetaOptions {
  diagnosis?: Diagnosis | DiagnosisInit | null;
}

/** The step part of a `step` event, camelCase. */
export interface EngineStep {
  kind: StepKind;
  name: string;
  text: string;
  server: string;
  args: Record<string, unknown>;
  result: string;
  phase: StepPhase | '';
  diagnosis: Diagnosis | null;
  node: StepNode | null;
  approval: StepApproval | null;
}

/** Which observability keys `toWire` writes: all (default), none, or only trace_id. */
export type WireMetaMode = 'all' | 'none' | 'trace';

interface EngineEventInit extends Required<EngineMetaOptions> {
  type: EngineEventType;
  content?: string;
  message?: string;
  step?: EngineStep;
  index?: number | null;
  diagnosis?: Diagnosis | null;
  messageId?: string;
  conversationId?: string;
  processSteps?: WireStep[];
  usedSkills?: string[];
  usedMcp?: string[];
  generating?: boolean;
  event?: RuntimeProcessEvent;
}

const FACTORY = Symbol('EngineEvent.factory');

export class EngineEvent {
  readonly type: EngineEventType;
  /** delta / reasoning / done text */
  readonly content: string;
  /** error text */
  readonly message: string;
  readonly step: EngineStep | null;
  readonly index: number | null;
  /** error-level diagnosis (a step's sits inside `step`) */
  readonly diagnosis: Diagnosis | null;
  readonly messageId: string;
  readonly conversationId: string;
  readonly processSteps: WireStep[];
  readonly usedSkills: string[];
  readonly usedMcp: string[];
  readonly generating: boolean;
  readonly event: RuntimeProcessEvent | null;
  readonly seq: number;
  readonly traceId: string;
  readonly tenantId: string;
  readonly claw: string;

  /** Use the make* factories; the constructor is theirs alone. */
  constructor(token: symbol, init: EngineEventInit) {
    if (token !== FACTORY) throw new TypeError('EngineEvent: build events with makeDelta/makeReasoning/makeStep/makeDone/makeError/makeProcess');
    this.type = init.type;
    this.content = init.content ?? '';
    this.message = init.message ?? '';
    this.step = init.step ?? null;
    this.index = init.index ?? null;
    this.diagnosis = init.diagnosis ?? null;
    this.messageId = init.messageId ?? '';
    this.conversationId = init.conversationId ?? '';
    this.processSteps = init.processSteps ?? [];
    this.usedSkills = init.usedSkills ?? [];
    this.usedMcp = init.usedMcp ?? [];
    this.generating = init.generating ?? false;
    this.event = init.event ?? null;
    this.seq = init.seq;
    this.traceId = init.traceId;
    this.tenantId = init.tenantId;
    this.claw = init.claw;
  }

  /** A copy with observability keys filled where this event leaves them empty. */
  withDefaults(meta: EngineMetaOptions): EngineEvent {
    const seq = this.seq || meta.seq || 0;
    const traceId = this.traceId || meta.traceId || '';
    const tenantId = this.tenantId || meta.tenantId || '';
    const claw = this.claw || meta.claw || '';
    if (seq === this.seq && traceId === this.traceId && tenantId === this.tenantId && claw === this.claw) return this;
    return new EngineEvent(FACTORY, { ...this.init(), seq, traceId, tenantId, claw });
  }

  /** The snake_case wire frame. */
  toWire(mode: WireMetaMode = 'all'): WireFrame {
    let w: WireFrame;
    switch (this.type) {
      case 'delta':
      case 'reasoning':
        w = { type: this.type, content: this.content };
        break;
      case 'step': {
        const s: WireStepFrame = { type: 'step', step: stepToWire(this.step as EngineStep) };
        if (this.index !== null) s.index = this.index;
        w = s;
        break;
      }
      case 'done':
        w = {
          type: 'done',
          message_id: this.messageId,
          conversation_id: this.conversationId,
          content: this.content,
          process_steps: this.processSteps,
          used_skills: this.usedSkills,
          used_mcp: this.usedMcp,
          generating: this.generating,
        };
        break;
      case 'error': {
        const e: WireError = { type: 'error', message: this.message };
        if (this.diagnosis) e.diagnosis = this.diagnosis.toDict();
        w = e;
        break;
      }
      case 'process':
        w = { type: 'process', event: this.event as RuntimeProcessEvent };
        break;
    }
    if (mode === 'all') {
      if (this.seq) w.seq = this.seq;
      if (this.traceId) w.trace_id = this.traceId;
      if (this.tenantId) w.tenant_id = this.tenantId;
      if (this.claw) w.claw = this.claw;
    } else if (mode === 'trace' && this.traceId) {
      w.trace_id = this.traceId;
    }
    return w;
  }

  /** JSON.stringify(toWire(mode)), with a fast path for the hottest frame (a bare delta). */
  toWireJson(mode: WireMetaMode = 'all'): string {
    if (this.type === 'delta' && (mode === 'none' || (!this.seq && !this.traceId && !this.tenantId && !this.claw))) {
      return `{"type":"delta","content":${JSON.stringify(this.content)}}`;
    }
    return JSON.stringify(this.toWire(mode));
  }

  /** Degraded text for UIs without structure; '' means show nothing. */
  toText(): string {
    switch (this.type) {
      case 'delta':
      case 'reasoning':
      case 'done':
        return this.content;
      case 'step': {
        const s = this.step as EngineStep;
        if (s.diagnosis) return s.diagnosis.toText();
        return s.kind === 'thinking' ? s.text : '';
      }
      case 'error':
        return this.diagnosis ? this.diagnosis.toText() : `❌ ${this.message}`;
      case 'process':
        return '';
    }
  }

  private init(): EngineEventInit {
    return {
      type: this.type,
      content: this.content,
      message: this.message,
      step: this.step ?? undefined,
      index: this.index,
      diagnosis: this.diagnosis,
      messageId: this.messageId,
      conversationId: this.conversationId,
      processSteps: this.processSteps,
      usedSkills: this.usedSkills,
      usedMcp: this.usedMcp,
      generating: this.generating,
      event: this.event ?? undefined,
      seq: this.seq,
      traceId: this.traceId,
      tenantId: this.tenantId,
      claw: this.claw,
    };
  }
}

function stepToWire(s: EngineStep): WireStep {
  let w: WireStep;
  if (s.kind === 'thinking') {
    w = { type: 'thinking', text: s.text };
  } else if (s.kind === 'mcp') {
    w = { type: 'mcp', server: s.server, name: s.name, args: s.args, result: s.result };
  } else {
    w = { type: s.kind, name: s.name, args: s.args, result: s.result };
    if (s.text) w.text = s.text;
  }
  if (s.diagnosis) w.diagnosis = s.diagnosis.toDict();
  if (s.phase) w.phase = s.phase;
  if (s.node && (s.node.id || s.node.type || s.node.label)) w.node = s.node;
  if (s.approval?.id) w.approval = s.approval;
  return w;
}

function meta(o: EngineMetaOptions | undefined): Required<EngineMetaOptions> {
  const seq = o?.seq ?? 0;
  if (!Number.isInteger(seq) || seq < 0) throw new TypeError(`seq must be a non-negative integer, got ${String(o?.seq)}`);
  return { seq, traceId: o?.traceId ?? '', tenantId: o?.tenantId ?? '', claw: o?.claw ?? '' };
}

function str(field: string, v: unknown): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new TypeError(`${field} must be a string, got ${typeof v}`);
  return v;
}

export function makeDelta(content: string, opts?: EngineMetaOptions): EngineEvent {
  return new EngineEvent(FACTORY, { type: 'delta', content: str('content', content), ...meta(opts) });
}

export function makeReasoning(content: string, opts?: EngineMetaOptions): EngineEvent {
  return new EngineEvent(FACTORY, { type: 'reasoning', content: str('content', content), ...meta(opts) });
}

export function makeStep(kind: StepKind, opts: StepOptions = {}): EngineEvent {
  if (!(STEP_KINDS as readonly string[]).includes(kind)) {
    throw new TypeError(`step kind must be one of ${STEP_KINDS.join('|')}, got ${JSON.stringify(kind)}`);
  }
  const phase = opts.phase ?? '';
  if (phase !== '' && !PHASES.includes(phase)) throw new TypeError(`phase must be one of start|ok|fail, got ${JSON.stringify(phase)}`);
  const index = opts.index ?? null;
  if (index !== null && (!Number.isInteger(index) || index < 0)) throw new TypeError(`index must be a non-negative integer, got ${String(index)}`);
  const diagnosis = opts.diagnosis ? (opts.diagnosis instanceof Diagnosis ? opts.diagnosis : new Diagnosis(opts.diagnosis)) : null;
  let result = str('result', opts.result);
  // Without a result the page would show the step as still running.
  if (!result && diagnosis?.severity === 'error') result = diagnosis.toText();
  const step: EngineStep = {
    kind,
    name: str('name', opts.name),
    text: str('text', opts.text),
    server: str('server', opts.server),
    args: opts.args ?? {},
    result,
    phase,
    diagnosis,
    node: opts.node ?? null,
    approval: opts.approval ?? null,
  };
  return new EngineEvent(FACTORY, { type: 'step', step, index, ...meta(opts) });
}

export function makeDone(opts: DoneOptions): EngineEvent {
  if (!opts || typeof opts !== 'object') throw new TypeError('makeDone: options { messageId, conversationId } are required');
  return new EngineEvent(FACTORY, {
    type: 'done',
    messageId: str('messageId', opts.messageId),
    conversationId: str('conversationId', opts.conversationId),
    content: str('content', opts.content),
    processSteps: opts.processSteps ?? [],
    usedSkills: opts.usedSkills ?? [],
    usedMcp: opts.usedMcp ?? [],
    generating: opts.generating ?? false,
    ...meta(opts),
  });
}

export function makeError(message: string, opts: ErrorOptions = {}): EngineEvent {
  const diagnosis = opts.diagnosis ? (opts.diagnosis instanceof Diagnosis ? opts.diagnosis : new Diagnosis(opts.diagnosis)) : null;
  return new EngineEvent(FACTORY, { type: 'error', message: str('message', message), diagnosis, ...meta(opts) });
}

export function makeProcess(event: RuntimeProcessEvent, opts?: EngineMetaOptions): EngineEvent {
  if (!event || typeof event !== 'object') throw new TypeError('makeProcess: event must be a RuntimeProcessEvent');
  return new EngineEvent(FACTORY, { type: 'process', event, ...meta(opts) });
}

// ---- fromWire: lenient lifting of legacy plain objects -------------------------------------------

function s(v: unknown): string {
  return typeof v === 'string' ? v : typeof v === 'number' && Number.isFinite(v) ? String(v) : '';
}

function obj(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

function diag(v: unknown): Diagnosis | null {
  return obj(v) ? Diagnosis.fromDict(v) : null;
}

/**
 * Lifts a legacy plain object (or passes an EngineEvent through). Returns null for a non-object,
 * an object without a string `type`, or a `type` this contract does not know.
 */
export function fromWire(x: unknown): EngineEvent | null {
  if (x instanceof EngineEvent) return x;
  const o = obj(x);
  if (!o || typeof o.type !== 'string') return null;
  const seq = typeof o.seq === 'number' && Number.isInteger(o.seq) && o.seq > 0 ? o.seq : 0;
  const m: EngineMetaOptions = { seq, traceId: s(o.trace_id), tenantId: s(o.tenant_id), claw: s(o.claw) };
  switch (o.type) {
    case 'delta':
      return makeDelta(s(o.content), m);
    case 'reasoning':
      return makeReasoning(s(o.content), m);
    case 'step': {
      const st = obj(o.step) ?? {};
      const kind = (STEP_KINDS as readonly string[]).includes(st.type as string) ? (st.type as StepKind) : 'tool';
      const node = obj(st.node);
      const index = typeof o.index === 'number' && Number.isInteger(o.index) && o.index >= 0 ? o.index : null;
      return makeStep(kind, {
        ...m,
        name: s(st.name),
        text: s(st.text),
        server: s(st.server),
        args: obj(st.args),
        result: typeof st.result === 'string' ? st.result : st.result === undefined || st.result === null ? '' : safeJson(st.result),
        phase: PHASES.includes(st.phase as string) ? (st.phase as StepPhase) : '',
        index,
        diagnosis: diag(st.diagnosis),
        node: node ? { id: s(node.id), type: s(node.type), label: s(node.label) } : null,
        approval: approvalOf(st.approval),
      });
    }
    case 'done':
      return makeDone({
        ...m,
        messageId: s(o.message_id),
        conversationId: s(o.conversation_id),
        content: s(o.content),
        processSteps: Array.isArray(o.process_steps) ? (o.process_steps.filter((p) => obj(p)) as WireStep[]) : [],
        usedSkills: strings(o.used_skills),
        usedMcp: strings(o.used_mcp),
        generating: o.generating === true,
      });
    case 'error':
      return makeError(s(o.message) || s(o.content), { ...m, diagnosis: diag(o.diagnosis) });
    case 'process': {
      const ev = obj(o.event);
      if (!ev) return null;
      try {
        return makeProcess(makeProcessEvent(ev as unknown as ProcessEventFields), m);
      } catch {
        return null;
      }
    }
    default:
      return null;
  }
}

function approvalOf(v: unknown): StepApproval | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return null;
  const a = v as Record<string, unknown>;
  if (typeof a.id !== 'string' || !a.id || !['pending', 'approved', 'denied'].includes(a.status as string)) return null;
  const args = a.args && typeof a.args === 'object' && !Array.isArray(a.args) ? (a.args as Record<string, unknown>) : {};
  return {
    id: a.id,
    status: a.status as StepApproval['status'],
    tool: typeof a.tool === 'string' ? a.tool : '',
    args,
    ...(typeof a.by === 'string' && a.by ? { by: a.by } : {}),
    ...(typeof a.reason === 'string' && a.reason ? { reason: a.reason } : {}),
  };
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v) ?? '';
  } catch {
    return String(v);
  }
}
