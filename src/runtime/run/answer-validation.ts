/**
 * The agent loop run until its final answer passes stop validation: each answer is checked (the plan's
 * todos, then the stop hooks), what blocks it is published, and the model is given repair turns
 * (limits.stop_repair_turns) before the run fails. Returns how the run ends.
 */
import { Diagnosis } from '../../events/diagnosis.js';
import type { AgentLoop, LoopOutcome } from '../loop/agent-loop.js';
import type { PlanProgress } from '../loop/plan-progress.js';
import type { RunOutcome } from '../storage/run-ending.js';
import type { StopHook } from '../run-hooks.js';
import type { PublishFn } from '../run-publisher.js';
import type { RunRecord } from './run-record.js';
import { runStopHooks } from './stop-validation.js';

export async function runUntilValid(
  rec: RunRecord,
  loop: AgentLoop,
  o: { progress: PlanProgress; stopHooks: StopHook[]; publish: PublishFn },
): Promise<RunOutcome> {
  let repairs = rec.limits.stop_repair_turns;
  for (;;) {
    const result: LoopOutcome = await loop.run();
    // the abort's reason decides, once the run is out of its stages, whether it ends cancelled or interrupted
    if (result.kind === 'cancelled') return { status: 'cancelled', text: '', diagnosis: null };
    if (result.kind === 'failed') return { status: 'failed', text: result.text, diagnosis: result.diagnosis };
    const reasons = await validationProblems(rec, o);
    // aborted while validating: ends as the abort says, whatever the answer was
    if (rec.abort.signal.aborted) return { status: 'cancelled', text: '', diagnosis: null };
    if (reasons.length === 0) return { status: 'completed', text: result.text, diagnosis: null };
    if (repairs > 0) {
      repairs--;
      loop.addUserMessage(
        `Stop validation failed. Fix these problems with the tools, then give your final answer again:\n${reasons.map((r) => `- ${r}`).join('\n')}`,
      );
      continue;
    }
    return {
      status: 'failed',
      text: result.text,
      diagnosis: new Diagnosis({
        code: 'validation_failed',
        severity: 'error',
        summary: `stop validation failed: ${reasons.length} problem(s)`,
        detail: reasons.slice(0, 20).join('\n'),
      }).toDict(),
    };
  }
}

/** The plan check, then the stop hooks, each problem published (by hook, and by artifact path); returns them all. */
async function validationProblems(rec: RunRecord, o: { progress: PlanProgress; stopHooks: StopHook[]; publish: PublishFn }): Promise<string[]> {
  const { machine } = rec;
  if (machine.state !== 'validating') machine.transition('validating');
  const planReasons = await o.progress.finalCheck();
  const stop = await runStopHooks(o.stopHooks);
  const reasons: string[] = [...planReasons];
  if (planReasons.length) o.publish('run', { type: 'hook.blocked', hook: 'PlanProgress', reasons: planReasons });
  for (const b of stop.byHook) {
    const msgs = b.issues.map((i) => i.message);
    reasons.push(...msgs);
    o.publish('run', { type: 'hook.blocked', hook: b.hook, reasons: msgs });
  }
  const byPath = new Map<string, string[]>();
  for (const b of stop.byHook) for (const i of b.issues) if (i.path) byPath.set(i.path, [...(byPath.get(i.path) ?? []), i.message]);
  for (const [path, msgs] of byPath) o.publish('run', { type: 'artifact.rejected', path, reasons: msgs });
  return reasons;
}
