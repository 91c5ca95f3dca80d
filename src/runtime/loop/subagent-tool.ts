/**
 * `run_agent { agent, goal, input? }`: a child run of one of the agents this agent
 * lists — its own run_id, workspace, events and manifest, in the parent's conversation — that the
 * parent waits for. On the wire it is an `agent` step; the child's progress shows in the parent as
 * process events of a `subagent` operation under the tool call's; cancelling the parent cancels it.
 */
import { z } from 'zod';
import type { AgentEvent } from '../../events/agent-event.js';
import type { OperationReporter } from '../../events/operation-reporter-types.js';
import type { AnyToolDefinition, ToolExecutionContext, ToolResult } from '../../tools/tool.js';
import { errorResult } from '../../tools/tool-result.js';
import type { RunMetricsFile } from '../metrics/run-metrics.js';
import type { RunStatusFile } from '../run-service-types.js';

/** Levels of runs: a run at this depth may not start another. */
export const MAX_AGENT_DEPTH = 3;

export interface ChildRunRequest {
  agent: string;
  goal: string;
  input: Record<string, unknown>;
  toolCallId: string;
}

/** What the tool needs of the service that runs the parent. */
export interface SubagentHost {
  /** Creates the child (started at once: it does not wait for a queue slot its parent holds). */
  start(req: ChildRunRequest): Promise<RunStatusFile>;
  events(runId: string): AsyncIterable<AgentEvent>;
  wait(runId: string): Promise<RunStatusFile>;
  cancel(runId: string): Promise<unknown>;
  metrics(runId: string): Promise<Pick<RunMetricsFile, 'tokens' | 'cost_usd'> | null>;
  /** The parent's own: the step's link to the child, and the child's tokens in the parent's metrics. */
  linked(childRunId: string, agent: string, toolCallId: string): void;
  finished(child: Pick<RunMetricsFile, 'tokens' | 'cost_usd'> | null): void;
}

export interface RunAgentToolOptions {
  agents: string[];
  /** The parent's depth (a top-level run is 1). */
  depth: number;
  host: SubagentHost;
  /** How long a call may take: the parent's own timeout (the child's time counts against it). */
  timeoutMs: number;
}

const runAgentArgs = z.strictObject({
  agent: z.string().min(1).describe('one of the agents you may start'),
  goal: z.string().min(1).max(8000).describe('what the subagent must achieve'),
  input: z.record(z.string(), z.unknown()).optional().describe("the subagent's run input (its input schema)"),
});

/** The child's events as progress of its operation under the tool call's. */
function forward(ev: AgentEvent, op: OperationReporter): void {
  if (ev.stream === 'run' && ev.data.type === 'run.state') op.stage(ev.data.to);
  else if (ev.stream === 'tool' && ev.data.phase === 'start') op.progress({ message: `calling ${ev.data.name}` });
  else if (ev.stream === 'tool' && ev.data.phase === 'result') op.progress({ message: `${ev.data.name} ${ev.data.isError ? 'failed' : 'done'}` });
}

export function createRunAgentTool(o: RunAgentToolOptions): AnyToolDefinition {
  return {
    name: 'run_agent',
    description: `Start a subagent — one of ${o.agents.join(', ')} — with a goal (and its input), wait for it and get its final answer and artifacts (read them with read_file run://<run_id>/artifacts/<path>).`,
    parameters: runAgentArgs,
    kind: 'agent',
    timeoutMs: o.timeoutMs,
    // a call a crash cut short runs again without a second child: the host finds the child this call
    // started (by the call's id), resumes it when it died too, and the call waits for it
    idempotent: true,
    async execute(args: z.infer<typeof runAgentArgs>, ctx?: ToolExecutionContext): Promise<ToolResult> {
      if (!o.agents.includes(args.agent)) {
        return errorResult('unknown_agent', `"${args.agent}" is not one of your subagents`, '', `you may start: ${o.agents.join(', ')}`);
      }
      if (o.depth >= MAX_AGENT_DEPTH) {
        return errorResult(
          'depth_limit',
          `a run at depth ${o.depth} cannot start another subagent (at most ${MAX_AGENT_DEPTH} levels)`,
          '',
          'do this part yourself',
        );
      }
      let child: RunStatusFile;
      try {
        child = await o.host.start({ agent: args.agent, goal: args.goal, input: args.input ?? {}, toolCallId: ctx?.toolCallId ?? '' });
      } catch (e) {
        const err = e as { message?: string; details?: { issues?: Array<{ path: string; message: string }> } };
        const issues = err.details?.issues?.map((i) => `${i.path}: ${i.message}`).join('; ') ?? '';
        return errorResult(
          'subagent_refused',
          `${args.agent} could not start: ${err.message ?? String(e)}`,
          issues,
          "fix the input to match the subagent's schema",
        );
      }
      const id = child.run_id;
      o.host.linked(id, args.agent, ctx?.toolCallId ?? '');
      const op = ctx?.reporter?.child({ operationId: id, targetType: 'subagent', source: 'subagent', message: `${args.agent}: ${args.goal.slice(0, 200)}` });
      op?.start(`${args.agent} started (${id})`, { run_id: id, agent: args.agent });
      const stop = () => void o.host.cancel(id).catch(() => undefined);
      ctx?.signal?.addEventListener('abort', stop, { once: true });
      try {
        if (op) for await (const ev of o.host.events(id)) forward(ev, op);
        const final = await o.host.wait(id);
        o.host.finished(await o.host.metrics(id).catch(() => null));
        const artifacts = final.public_documents.map((d) => `run://${id}/${d.path}`);
        const body = {
          run_id: id,
          agent: args.agent,
          status: final.status,
          answer: final.final_answer,
          artifacts,
          ...(final.diagnosis ? { diagnosis: final.diagnosis } : {}),
        };
        if (final.status === 'completed') {
          op?.complete(`${args.agent} completed`, { run_id: id, artifacts: artifacts.length });
          return { ok: true, content: JSON.stringify(body), details: body };
        }
        const why = final.diagnosis?.summary ?? final.status;
        if (final.status === 'cancelled') op?.cancel(`${args.agent} cancelled`);
        else op?.fail(`${args.agent} ${final.status}: ${why}`);
        const failed = errorResult(
          'subagent_failed',
          `${args.agent} ${final.status}: ${why}`,
          final.diagnosis?.detail ?? '',
          'read its answer and artifacts, then decide',
        );
        return { ...failed, content: JSON.stringify({ ok: false, error: failed.diagnosis!.summary, ...body }) };
      } finally {
        ctx?.signal?.removeEventListener('abort', stop);
      }
    },
  };
}
