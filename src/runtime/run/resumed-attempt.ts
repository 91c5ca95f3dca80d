/**
 * A resumed attempt of a run: the loop it starts with (the checkpoint's conversation, the calls of
 * its last turn still to settle, or its final answer to validate again), the model's position and
 * queued messages put back, and the `resumed` lifecycle event that tells every channel what happened.
 */
import type { LifecycleData } from '../../events/agent-event.js';
import { Diagnosis } from '../../events/diagnosis.js';
import type { ChatMessage, ModelProvider, ToolCallRequest } from '../../providers/model-provider.js';
import type { AgentLoopOptions } from '../loop/agent-loop.js';
import type { ResumedEntry } from '../run-state-machine.js';
import type { RunInbox } from '../loop/run-inbox.js';
import type { ResumeDecision } from '../recovery/run-resume.js';

/** A decision to resume, and what the dead process left running (ended since). */
export type ResumeStart = Extract<ResumeDecision, { kind: 'resume' }> & {
  /** the sentence saying which background processes were ended, or '' */
  leftovers: string;
  /** what those background sessions printed last (bounded, masked), or '' */
  leftoverOutput: string;
};

/** A decision to start a run again that died before its loop began (nothing of its work is lost). */
export type RestartStart = Extract<ResumeDecision, { kind: 'restart' }> & {
  /** the sentence saying which background processes were ended, or '' */
  leftovers: string;
};

export type CallOutcome = 'recorded' | 'checked' | 'run again' | 'interrupted_during_call' | 'not started';

export interface ResumedLoop {
  messages: ChatMessage[];
  loop: NonNullable<AgentLoopOptions['resume']>;
  /** the calls of the last turn without a result in the conversation, and what happens to each */
  calls: Array<{ id: string; name: string; outcome: CallOutcome; safeToRepeat: boolean }>;
}

/** The calls of the conversation's last assistant turn that have no tool result after it. */
function unsettledCalls(messages: ChatMessage[]): ToolCallRequest[] {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'assistant') continue;
    const answered = new Set(messages.slice(i + 1).flatMap((x) => (x.role === 'tool' ? [x.toolCallId] : [])));
    return (m.toolCalls ?? []).filter((c) => !answered.has(c.id));
  }
  return [];
}

/** Builds the resumed loop's start and puts back the model's position and the queued messages. */
export function resumeLoop(
  resume: ResumeStart,
  executor: { safeToRepeat(name: string): boolean; checksCompletion(name: string): boolean },
  rec: { provider: ModelProvider; inbox: RunInbox },
): ResumedLoop {
  const p = resume.point;
  if (p.provider !== undefined) rec.provider.restorePosition?.(p.provider);
  rec.inbox.restore(p.queued);
  const messages = [...p.messages];
  const pending = unsettledCalls(messages);
  const last = messages.at(-1);
  const final = last?.role === 'assistant' && !last.toolCalls?.length ? last.content : undefined;
  if (resume.leftovers) {
    // the model is told which of its background sessions died with the process, and what they printed
    // last: it decides from that whether to start them again
    const output = resume.leftoverOutput ? `\nTheir last output:\n${resume.leftoverOutput}` : '';
    messages.push({
      role: 'user',
      content: `[notice] The run's process stopped and the run was resumed; its background sessions ended with it: ${resume.leftovers}.${output}`,
    });
  }
  const calls = pending.map((c) => {
    const j = p.calls.get(c.id);
    const outcome: CallOutcome = !j
      ? 'not started'
      : j.result
        ? 'recorded'
        : j.intent !== undefined && executor.checksCompletion(c.name)
          ? 'checked'
          : executor.safeToRepeat(c.name)
            ? 'run again'
            : 'interrupted_during_call';
    return { id: c.id, name: c.name, outcome, safeToRepeat: executor.safeToRepeat(c.name) };
  });
  return {
    messages,
    loop: {
      counters: { ...p.loop, iterations: p.loop.iterations ?? p.metrics.iterations },
      usedMs: resume.usedMs,
      pendingCalls: pending,
      ...(final !== undefined && !resume.leftovers ? { final } : {}),
    },
    calls,
  };
}

/** The state the resumed attempt begins in, from its first step: the calls of the last turn are settled
 *  first (tools executing), else the final answer is validated again, else the model takes a turn. */
export function resumedEntry(resumed: ResumedLoop): ResumedEntry {
  if (resumed.loop.pendingCalls.length) return 'tool_executing';
  if (resumed.loop.final !== undefined) return 'validating';
  return 'model_thinking';
}

function plural(n: number, one: string): string {
  return `${n} ${one}${n === 1 ? '' : 's'}`;
}

/** The `resumed` lifecycle event: attempt, from which seq, and what was lost or is redone. */
export function resumedEvent(resume: ResumeStart, resumed: ResumedLoop): Extract<LifecycleData, { phase: 'resumed' }> {
  const { lost } = resume;
  const detail: string[] = [];
  if (lost.turns) {
    const tokens = lost.tokens.input + lost.tokens.output;
    detail.push(`${plural(lost.turns, 'model turn')} redone (${tokens} tokens${lost.costUsd ? `, $${lost.costUsd.toFixed(6)}` : ''} spent again)`);
  }
  for (const c of resumed.calls) {
    if (c.outcome === 'interrupted_during_call')
      detail.push(
        `${c.name} (${c.id}) was running and is not safe to run twice: not run again, the model is told its effect is unknown (interrupted_during_call)`,
      );
    else if (c.outcome === 'checked')
      detail.push(
        `${c.name} (${c.id}) was running: what it meant to leave is checked, and it counts as finished when complete (else it is ${
          c.safeToRepeat ? 'run again' : 'not run again: interrupted_during_call'
        })`,
      );
    else if (c.outcome === 'run again') detail.push(`${c.name} (${c.id}) was running and is read-only or idempotent: run again`);
    else if (c.outcome === 'recorded') detail.push(`${c.name} (${c.id}) had finished: its recorded result is used, it is not run again`);
  }
  const asked = [...resume.point.approvals.values()].filter((a) => a.status === 'pending');
  for (const a of asked) detail.push(`approval ${a.id} is asked again`);
  return resumedData('its checkpoint', resume.attempt, resume.point.seq, lost.discardFromSeq, detail, resume.leftovers, resume.point.tornTail);
}

/** The `resumed` lifecycle event of a run started again from its request: it had taken no model turn. */
export function restartedEvent(restart: RestartStart): Extract<LifecycleData, { phase: 'resumed' }> {
  const detail = ['the run stopped before its first model turn: it starts again from its request, nothing is redone'];
  return resumedData('its start', restart.attempt, restart.lastSeq, null, detail, restart.leftovers, restart.start.tornTail);
}

/** What both kinds of resume say: what was done (`detail`), what the dead attempt left running, a torn last record. */
function resumedData(
  from: 'its checkpoint' | 'its start',
  attempt: number,
  fromSeq: number,
  discardFromSeq: number | null,
  detail: string[],
  leftovers: string,
  tornTail: boolean,
): Extract<LifecycleData, { phase: 'resumed' }> {
  if (leftovers) detail.push(leftovers);
  if (tornTail) detail.push('the last checkpoint record was cut short by the crash and left out');
  const diagnosis = new Diagnosis({
    code: 'resumed',
    severity: 'warning',
    summary: `run resumed from ${from} (attempt ${attempt}) after its process stopped`,
    detail: detail.join('\n'),
    hint: discardFromSeq !== null ? `the partial answer from event ${discardFromSeq} on is discarded and redone` : '',
  }).toDict();
  return { phase: 'resumed', resumedAt: Date.now(), attempt, fromSeq, discardFromSeq, diagnosis };
}
