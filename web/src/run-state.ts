/** Folds wire frames into what the run view shows. Pure: (state, frame) → state. */
import type { Diagnosis, WireFrame } from './wire-types.js';

/** A tool call waiting for a person, or decided: the step's `approval`. */
export interface ApprovalView {
  id: string;
  status: 'pending' | 'approved' | 'denied';
  tool: string;
  args: unknown;
  by?: string;
  reason?: string;
}

export interface StepView {
  index: number;
  type: string;
  name: string;
  text: string;
  args: unknown;
  result: string;
  phase: string;
  diagnosis: Diagnosis | null;
  /** what the step started: a subagent's run (`type: "run"`, `id` its run id) */
  node: { id: string; type: string; label: string } | null;
  approval: ApprovalView | null;
}

export interface ProcessEventView {
  operationId: string;
  parentOperationId?: string;
  targetType: string;
  stage?: string;
  status: string;
  level: string;
  current?: number;
  total?: number;
  percent?: number;
  message?: string;
  ts: number;
}

export interface OperationView {
  id: string;
  parent?: string;
  targetType: string;
  stage?: string;
  status: string;
  percent?: number;
  current?: number;
  total?: number;
  message?: string;
  firstTs: number;
  lastTs: number;
}

export interface RunView {
  /** the assistant's text; what separate turns said is in separate paragraphs (the final answer replaces it at the end) */
  text: string;
  /** the model's thinking, one entry per turn that thought (a tool step between two turns separates them) */
  reasoning: string[];
  /** the kind of the last text, thinking or step frame: where one turn's text ends and the next begins */
  lastContent: 'delta' | 'reasoning' | 'step' | null;
  steps: StepView[];
  operations: Record<string, OperationView>;
  operationOrder: string[];
  ended: 'done' | 'error' | null;
  error: { message: string; diagnosis: Diagnosis | null } | null;
  frames: number;
  /** where the text and thinking of the frames since the last step began, by seq: a run resumed after
   *  its process died redoes the turn that was streaming, and its partial text is cut off */
  turnStarts: Array<{ seq: number; text: number; reasoning: number; reasoningLast: number }>;
}

export const emptyRunView = (): RunView => ({
  text: '',
  reasoning: [],
  lastContent: null,
  steps: [],
  operations: {},
  operationOrder: [],
  ended: null,
  error: null,
  frames: 0,
  turnStarts: [],
});

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
}

/** The state after one frame. */
export function applyFrame(s: RunView, f: WireFrame): RunView {
  return applyFrames(s, [f]);
}

/**
 * The state after a batch of frames (what one read of the stream brings): the collections are copied
 * once per batch and then updated in place, so a long run's replay costs in proportion to its frames,
 * not to frames × steps.
 */
export function applyFrames(s: RunView, frames: readonly WireFrame[]): RunView {
  const draft: RunView = {
    ...s,
    reasoning: [...s.reasoning],
    steps: [...s.steps],
    operations: { ...s.operations },
    operationOrder: [...s.operationOrder],
    turnStarts: [...s.turnStarts],
  };
  for (const f of frames) applyTo(draft, f);
  return draft;
}

/** Where a step of this index sits (steps are kept by index; new ones come at the end). */
function placeOf(steps: StepView[], index: number): { at: number; replace: boolean } {
  let i = steps.length;
  while (i > 0 && steps[i - 1].index > index) i--;
  return i > 0 && steps[i - 1].index === index ? { at: i - 1, replace: true } : { at: i, replace: false };
}

/** A resume step names the first delta of the redone turn: the text and thinking from it on go. */
function discardRedone(next: RunView, step: Record<string, unknown>): void {
  const from = step.name === 'resume' && step.args && typeof step.args === 'object' ? (step.args as Record<string, unknown>).discard_from_seq : undefined;
  if (typeof from !== 'number') return;
  const first = next.turnStarts.find((x) => x.seq >= from);
  if (!first) return;
  next.text = next.text.slice(0, first.text);
  next.reasoning.length = first.reasoning;
  if (first.reasoning > 0 && next.reasoning[first.reasoning - 1].length > first.reasoningLast)
    next.reasoning[first.reasoning - 1] = next.reasoning[first.reasoning - 1].slice(0, first.reasoningLast);
}

function applyTo(next: RunView, f: WireFrame): void {
  const s = next;
  next.frames++;
  if ((f.type === 'delta' || f.type === 'reasoning') && typeof f.seq === 'number') {
    next.turnStarts.push({ seq: f.seq, text: next.text.length, reasoning: next.reasoning.length, reasoningLast: next.reasoning.at(-1)?.length ?? 0 });
  }
  switch (f.type) {
    case 'delta': {
      // text after a step or thinking is a new turn's: a paragraph of its own, never glued to the last one
      const gap = s.text && s.lastContent !== 'delta' ? '\n\n' : '';
      next.text = s.text + gap + str(f.content);
      next.lastContent = 'delta';
      break;
    }
    case 'reasoning': {
      const reasoning = next.reasoning;
      if (s.lastContent === 'reasoning' && reasoning.length) reasoning[reasoning.length - 1] += str(f.content);
      else reasoning.push(str(f.content));
      next.lastContent = 'reasoning';
      break;
    }
    case 'step': {
      const st = (f.step ?? {}) as Record<string, unknown>;
      const index = typeof f.index === 'number' ? f.index : s.steps.length;
      const view: StepView = {
        index,
        type: str(st.type) || 'tool',
        name: str(st.name),
        text: str(st.text),
        args: st.args,
        result: str(st.result),
        phase: str(st.phase),
        diagnosis: (st.diagnosis as Diagnosis | undefined) ?? null,
        node: st.node && typeof st.node === 'object' ? (st.node as StepView['node']) : null,
        approval: st.approval && typeof st.approval === 'object' ? (st.approval as ApprovalView) : null,
      };
      const place = placeOf(next.steps, index);
      next.steps.splice(place.at, place.replace ? 1 : 0, view);
      discardRedone(next, st);
      next.turnStarts.length = 0;
      next.lastContent = 'step';
      break;
    }
    case 'process': {
      const e = f.event as ProcessEventView | undefined;
      if (!e || typeof e.operationId !== 'string') break;
      const prev = s.operations[e.operationId];
      const op: OperationView = {
        id: e.operationId,
        parent: e.parentOperationId ?? prev?.parent,
        targetType: e.targetType ?? prev?.targetType ?? 'tool',
        stage: e.stage ?? prev?.stage,
        status: e.status,
        percent: e.percent ?? prev?.percent,
        current: e.current ?? prev?.current,
        total: e.total ?? prev?.total,
        message: e.message ?? prev?.message,
        firstTs: prev?.firstTs ?? e.ts,
        lastTs: e.ts,
      };
      next.operations[e.operationId] = op;
      if (!prev) next.operationOrder.push(e.operationId);
      break;
    }
    case 'done': {
      const content = str(f.content);
      if (content) next.text = content;
      next.ended = 'done';
      break;
    }
    case 'error': {
      next.error = { message: str(f.message), diagnosis: (f.diagnosis as Diagnosis | undefined) ?? null };
      next.ended = 'error';
      break;
    }
  }
}
