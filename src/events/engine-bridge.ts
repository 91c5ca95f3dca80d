/**
 * The bridge: the only place AgentEvents become EngineEvents. At most one
 * EngineEvent per AgentEvent, carrying its seq, and a pure function of the event sequence so that
 * replaying events.jsonl through a fresh bridge yields byte-identical frames.
 */
import type { AgentEvent, ToolStepKind } from './agent-event.js';
import { Diagnosis, type DiagnosisDict } from './diagnosis.js';
import {
  makeDelta,
  makeDone,
  makeError,
  makeProcess,
  makeReasoning,
  makeStep,
  type EngineEvent,
  type StepApproval,
  type StepNode,
  type WireStep,
} from './engine-event.js';

export interface EngineBridgeOptions {
  traceId: string;
  tenantId?: string;
}

export interface EngineBridge {
  translate(ev: AgentEvent): EngineEvent | null;
  /** Every step's latest wire object, by index (what `done.process_steps` carries). */
  steps(): WireStep[];
}

interface ToolStepState {
  index: number;
  kind: ToolStepKind;
  name: string;
  server: string;
  args: Record<string, unknown>;
  /** what the call started (a subagent run), once known */
  node: StepNode | null;
  approval: StepApproval | null;
}

function asArgs(v: unknown): Record<string, unknown> {
  if (v === undefined || v === null) return {};
  return typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : { value: v };
}

export function createEngineBridge(opts: EngineBridgeOptions): EngineBridge {
  const traceId = opts.traceId;
  const tenantId = opts.tenantId ?? '';
  const byCall = new Map<string, ToolStepState>();
  const stepList: WireStep[] = [];

  const record = (ev: EngineEvent): EngineEvent => {
    if (ev.index !== null) stepList[ev.index] = (ev.toWire('none') as { step: WireStep }).step;
    return ev;
  };

  const stateFor = (toolCallId: string, name: string): ToolStepState => {
    let st = byCall.get(toolCallId);
    if (!st) {
      st = { index: stepList.length, kind: 'tool', name, server: '', args: {}, node: null, approval: null };
      byCall.set(toolCallId, st);
      stepList.length = st.index + 1;
    }
    return st;
  };

  const translate = (ev: AgentEvent): EngineEvent | null => {
    const m = { seq: ev.seq, traceId, tenantId };
    switch (ev.stream) {
      case 'assistant':
        return ev.data.phase === 'end' || !ev.data.delta ? null : makeDelta(ev.data.delta, m);
      case 'reasoning':
        return ev.data.phase === 'end' || !ev.data.delta ? null : makeReasoning(ev.data.delta, m);
      case 'tool': {
        const d = ev.data;
        if (d.phase === 'update' && !d.node) return null;
        const st = stateFor(d.toolCallId, d.name);
        const started = () =>
          makeStep(st.kind, { ...m, name: st.name, server: st.server, args: st.args, phase: 'start', index: st.index, node: st.node, approval: st.approval });
        switch (d.phase) {
          case 'start':
            st.kind = d.kind ?? 'tool';
            st.name = d.serverTool ?? d.name;
            st.server = d.server ?? '';
            st.args = asArgs(d.args);
            return record(started());
          // the same step again, still running, now with what it started or its approval
          case 'update':
            st.node = d.node ?? null;
            return record(started());
          case 'approval':
            st.approval = d.approval;
            return record(started());
          case 'result':
            return record(
              makeStep(st.kind, {
                ...m,
                name: st.name,
                server: st.server,
                args: st.args,
                result: d.result,
                phase: d.isError ? 'fail' : 'ok',
                index: st.index,
                diagnosis: d.diagnosis ? Diagnosis.fromDict(d.diagnosis) : null,
                node: st.node,
                approval: st.approval,
              }),
            );
        }
        return null;
      }
      case 'process':
        return makeProcess(ev.data.event, m);
      case 'lifecycle': {
        if (ev.data.phase !== 'resumed') return null;
        // a step of its own: every channel says the run was resumed, and why, and what was redone
        const index = stepList.length;
        stepList.length = index + 1;
        const d = ev.data;
        const args = { attempt: d.attempt, from_seq: d.fromSeq, ...(d.discardFromSeq !== null ? { discard_from_seq: d.discardFromSeq } : {}) };
        return record(
          makeStep('agent', { ...m, name: 'resume', args, result: d.diagnosis.summary, phase: 'ok', index, diagnosis: Diagnosis.fromDict(d.diagnosis) }),
        );
      }
      case 'run': {
        const d = ev.data;
        switch (d.type) {
          case 'hook.blocked': {
            const index = stepList.length;
            stepList.length = index + 1;
            const diagnosis = new Diagnosis({
              code: 'stop_validation_failed',
              severity: 'error',
              summary: `${d.hook} blocked the run from finishing`,
              detail: d.reasons.map((r) => `- ${r}`).join('\n'),
              hint: 'the listed checks must pass before the run can complete',
            });
            return record(makeStep('agent', { ...m, name: 'stop_validation', args: { hook: d.hook }, phase: 'fail', index, diagnosis }));
          }
          case 'run.completed':
            return makeDone({
              ...m,
              messageId: d.messageId,
              conversationId: d.conversationId,
              content: d.content,
              processSteps: stepList.filter((x) => x !== undefined),
              usedSkills: d.usedSkills,
              usedMcp: d.usedMcp,
            });
          case 'run.failed':
          case 'run.cancelled': {
            const diagnosis = d.diagnosis ? Diagnosis.fromDict(d.diagnosis) : defaultDiagnosis(d.type);
            return makeError(diagnosis.summary || (d.type === 'run.failed' ? 'run failed' : 'run cancelled'), { ...m, diagnosis });
          }
          default:
            return null;
        }
      }
      default:
        return null;
    }
  };

  return { translate, steps: () => stepList.filter((x) => x !== undefined) };
}

function defaultDiagnosis(type: 'run.failed' | 'run.cancelled'): Diagnosis {
  const d: DiagnosisDict =
    type === 'run.failed'
      ? { code: 'run_failed', severity: 'error', summary: 'run failed', detail: '', hint: '', retryable: false }
      : { code: 'run_cancelled', severity: 'warning', summary: 'run cancelled', detail: '', hint: '', retryable: true };
  return Diagnosis.fromDict(d);
}
