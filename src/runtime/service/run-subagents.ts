/**
 * Subagents: what one parent run's run_agent call is given (SubagentHost). A child is admitted like any
 * run (run-intake.ts) but reads its files from the parent's folder and starts beside the parent's slot;
 * a call its resumed parent makes again finds the child it started before (run-recovery.ts); the
 * child's link and its tokens go to the parent's own bus and metrics.
 */
import type { RunAccess } from './run-access.js';
import { RunFolder } from '../storage/run-folder.js';
import type { RunIntake } from './run-intake.js';
import type { RunRecord } from '../run/run-record.js';
import type { RunRecovery } from '../recovery/run-recovery.js';
import type { CreateRunOptions } from '../run-service-types.js';
import type { SubagentHost } from '../loop/subagent-tool.js';

export interface RunSubagentsOptions {
  intake: RunIntake;
  recovery: RunRecovery;
  access: RunAccess;
  runsDir: string;
}

export class RunSubagents {
  constructor(private readonly o: RunSubagentsOptions) {}

  /** What run_agent needs, for one parent run (`parentOf`: its record, known once it is made). */
  hostFor(parentOf: () => RunRecord, front: CreateRunOptions): SubagentHost {
    const { intake, recovery, access, runsDir } = this.o;
    return {
      start: async (r) => {
        const parent = parentOf();
        const earlier = await recovery.childOfCall(parent, r.toolCallId);
        if (earlier) return earlier;
        return intake.admit(
          { plugin: r.agent, goal: r.goal, input: r.input },
          { ...(front.claw ? { claw: front.claw } : {}) },
          { rec: parent, toolCallId: r.toolCallId },
        );
      },
      events: (id) => access.events(id),
      wait: (id) => access.wait(id),
      cancel: (id) => access.cancel(id),
      metrics: (id) => new RunFolder(runsDir, id).readMetrics(),
      linked: (childRunId, agent, toolCallId) => {
        const bus = parentOf().bus;
        bus.publish('tool', {
          phase: 'update',
          name: 'run_agent',
          toolCallId,
          partialResult: { run_id: childRunId },
          node: { id: childRunId, type: 'run', label: agent },
        });
        bus.publish('run', { type: 'subagent.started', childRunId, agent, toolCallId });
      },
      finished: (m) => parentOf().metrics?.addSubagent(m),
    };
  }
}
