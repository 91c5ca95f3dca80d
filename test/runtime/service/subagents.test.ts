/** run_agent starts a child run the parent waits for; limits, depth, cancel, metrics, run://. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import { createEngineBridge } from '../../../src/events/engine-bridge.js';
import type { Agent } from '../../../src/runtime/agent.js';
import { readModelCalls } from '../../../src/runtime/model-calls/model-call-record.js';
import { RunService } from '../../../src/runtime/service/run-service.js';
import type { ModelTurn } from '../../../src/providers/model-turn.js';
import { toolResults } from '../../../src/plugins/shared/conversation.js';
import { createReadFileTool } from '../../../src/tools/read-file-tool.js';
import { createWriteArtifactTool } from '../../../src/tools/write-artifact-tool.js';

let dir = '';
let service: RunService;
afterEach(async () => {
  await service?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A test agent whose offline procedure plays `turns(results)`: the next turn from the tool results so far. */
function agent(name: string, o: { agents?: string[]; turns: (seen: ReturnType<typeof toolResults>) => ModelTurn }): Agent {
  return {
    name,
    version: '1.0.0',
    description: name,
    inputSchema: z.object({}).passthrough(),
    fileInputs: [],
    defaultSkill: null,
    defaultGoal: `${name}'s goal`,
    promptFragments: [],
    createTools: (ctx) => [
      createReadFileTool({ files: ctx.workspace, ...(ctx.schemes ? { schemes: ctx.schemes } : {}) }),
      createWriteArtifactTool({ workspace: ctx.workspace, contracts: [] }),
    ],
    plan: [],
    artifacts: [],
    validators: [],
    ...(o.agents ? { agents: o.agents } : {}),
    offlineProcedure: (state) => o.turns(toolResults(state.messages)),
  };
}

const helper = agent('helper', {
  turns: (seen) =>
    seen.length === 0 ? { toolCalls: [{ name: 'write_artifact', args: { path: 'part.md', content: '# the part\n' } }] } : { text: 'part written' },
});

const lead = agent('lead', {
  agents: ['helper'],
  turns: (seen) => {
    if (seen.length === 0) return { toolCalls: [{ name: 'run_agent', args: { agent: 'helper', goal: 'write the part' } }] };
    if (seen.length === 1) return { toolCalls: [{ name: 'read_file', args: { path: (seen[0].data as { artifacts: string[] }).artifacts[0] } }] };
    return { text: `lead read: ${seen[1].content}` };
  },
});

function make(plugins: Agent[]) {
  dir = mkdtempSync(join(tmpdir(), 'runtrail-subagents-'));
  service = new RunService({ dataDir: dir, agents: plugins, env: {}, processRegistry: null, concurrency: 1 });
  return service;
}

async function run(s: RunService, plugin: string) {
  const created = await s.create({ plugin, input: {}, conversation_id: 'conv-1' });
  const events: AgentEvent[] = [];
  for await (const e of s.events(created.run_id)) events.push(e);
  return { status: await s.wait(created.run_id), events };
}

describe('subagents', () => {
  it('a child run with its own workspace, in the parent conversation, as an agent step; its artifacts readable through run://', async () => {
    const s = make([lead, helper]);
    const { status, events } = await run(s, 'lead');
    expect(status.status).toBe('completed');
    expect(status.final_answer).toBe('lead read: # the part');
    expect(status.children).toHaveLength(1);
    const childId = status.children![0];
    const child = (await s.get(childId))!;
    expect(child).toMatchObject({
      status: 'completed',
      plugin: 'helper',
      conversation_id: 'conv-1',
      parent_run_id: status.run_id,
      final_answer: 'part written',
    });
    expect(readFileSync(join(dir, 'runs', childId, 'artifacts', 'part.md'), 'utf8')).toBe('# the part\n');
    // the wire: an agent step, start (then again with the child linked) → ok
    const bridge = createEngineBridge({ traceId: 't' });
    const steps = events.flatMap((e) => {
      const w = bridge.translate(e)?.toWire('none');
      return w && w.type === 'step' ? [w.step] : [];
    });
    const agentSteps = steps.filter((st) => st.type === 'agent' && st.name === 'run_agent');
    expect(agentSteps.map((st) => [st.phase, st.node?.id])).toEqual([
      ['start', undefined],
      ['start', childId],
      ['ok', childId],
    ]);
    expect(child.parent_tool_call_id).toBeTruthy();
    // the child's progress as a subagent operation under the tool call's
    const subOps = events.flatMap((e) => (e.stream === 'process' && e.data.event.targetType === 'subagent' ? [e.data.event] : []));
    expect(subOps[0]).toMatchObject({ operationId: childId, source: 'subagent' });
    expect(subOps[0].parentOperationId).toMatch(/^call_offline_/);
    expect(subOps.at(-1)!.status).toBe('completed');
    const metrics = JSON.parse(readFileSync(join(dir, 'runs', status.run_id, 'runtime', 'metrics.json'), 'utf8')) as { subagent_runs: number };
    expect(metrics.subagent_runs).toBe(1);
  });

  it("records a child's model calls in the child's own run, and only the parent's in the parent's", async () => {
    const s = make([lead, helper]);
    const { status } = await run(s, 'lead');
    expect(status.status).toBe('completed');
    const childId = status.children![0];
    const parent = await readModelCalls(status.run_id, join(dir, 'runs', status.run_id), { limit: 100 });
    const child = await readModelCalls(childId, join(dir, 'runs', childId), { limit: 100 });
    // the lead: run_agent, read_file, the answer; the helper: write_artifact, the answer
    expect(parent.calls.map((c) => c.response.tool_calls.map((t) => t.name))).toEqual([['run_agent'], ['read_file'], []]);
    expect(child.calls.map((c) => c.response.tool_calls.map((t) => t.name))).toEqual([['write_artifact'], []]);
    expect(child.calls.map((c) => c.span_id)).toEqual(['model:1.0', 'model:2.0']);
    // what the helper was sent is its own goal, not the lead's conversation
    const childSent = JSON.stringify(child.calls[0].request.messages);
    expect(childSent).toContain('write the part');
    expect(childSent).not.toContain("lead's goal");
    // and the helper's own tool call is not in the lead's record: the lead saw only run_agent's result
    expect(JSON.stringify(parent.calls.map((c) => c.request.messages))).not.toContain('write_artifact');
  });

  it('starts the child although the parent holds the only queue slot', async () => {
    const s = make([lead, helper]);
    expect((await run(s, 'lead')).status.status).toBe('completed');
  });

  it('a fourth level is a failed tool call, not a crash', async () => {
    const chain = (name: string, next: string | null) =>
      agent(name, {
        ...(next ? { agents: [next] } : {}),
        turns: (seen) =>
          next && seen.length === 0
            ? { toolCalls: [{ name: 'run_agent', args: { agent: next, goal: 'go deeper' } }] }
            : { text: `${name}: ${seen[0]?.ok === false ? `refused ${String(seen[0].data?.error)}` : 'done'}` },
      });
    const s = make([chain('a1', 'a2'), chain('a2', 'a3'), chain('a3', 'a4'), chain('a4', null)]);
    const { status } = await run(s, 'a1');
    expect(status.status).toBe('completed');
    const a3 = (await s.list({ plugin: 'a3' })).runs[0];
    expect(a3.final_answer).toMatch(/^a3: refused a run at depth 3 cannot start another subagent/);
    expect((await s.list({ plugin: 'a4' })).total).toBe(0);
  });

  it('a failing child is a failed tool result the parent reads; an unknown agent is refused', async () => {
    const broken = agent('broken', { turns: () => ({ error: { code: 'boom', message: 'the child broke', retryable: false } }) });
    const boss = agent('boss', {
      agents: ['broken'],
      turns: (seen) => {
        if (seen.length === 0)
          return {
            toolCalls: [
              { name: 'run_agent', args: { agent: 'broken', goal: 'try' } },
              { name: 'run_agent', args: { agent: 'nobody', goal: 'x' } },
            ],
          };
        return { text: seen.map((r) => `${r.ok ? 'ok' : 'failed'}:${String(r.data?.error ?? '')}`).join(' | ') };
      },
    });
    const s = make([boss, broken]);
    const { status } = await run(s, 'boss');
    expect(status.status).toBe('completed');
    expect(status.final_answer).toMatch(/^failed:broken failed: .*the child broke.* \| failed:"nobody" is not one of your subagents$/);
  });

  it('cancelling the parent cancels its child', async () => {
    const slow = agent('slow', { turns: () => ({ text: 'late', delayMs: 20_000 }) });
    const waiter = agent('waiter', {
      agents: ['slow'],
      turns: (seen) => (seen.length === 0 ? { toolCalls: [{ name: 'run_agent', args: { agent: 'slow', goal: 'take your time' } }] } : { text: 'x' }),
    });
    const s = make([waiter, slow]);
    const created = await s.create({ plugin: 'waiter', input: {} });
    // the parent links its child once the child is admitted
    for await (const ev of s.events(created.run_id)) if (ev.stream === 'run' && ev.data.type === 'subagent.started') break;
    expect((await s.get(created.run_id))?.children).toHaveLength(1);
    const childId = (await s.get(created.run_id))!.children![0];
    await s.cancel(created.run_id);
    expect((await s.wait(childId)).status).toBe('cancelled');
    expect((await s.wait(created.run_id)).status).toBe('cancelled');
  });
});
