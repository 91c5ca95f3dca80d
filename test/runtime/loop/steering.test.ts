/** Steer and follow-up messages reach the model where they should; parallel read-only batches. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import type { Agent } from '../../../src/runtime/agent.js';
import type { ModelTurn, ProcedureState } from '../../../src/providers/model-turn.js';
import { RunService } from '../../../src/runtime/service/run-service.js';
import type { AnyToolDefinition } from '../../../src/tools/tool.js';
import { eventually } from '../../tools/helpers.js';

let dir = '';
let service: RunService;
afterEach(async () => {
  await service?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function plugin(name: string, tools: () => AnyToolDefinition[], turn: (s: ProcedureState) => ModelTurn): Agent {
  return {
    name,
    version: '1.0.0',
    description: name,
    inputSchema: z.object({}).passthrough(),
    fileInputs: [],
    defaultSkill: null,
    defaultGoal: `${name} goal`,
    promptFragments: [],
    createTools: tools,
    plan: [],
    artifacts: [],
    validators: [],
    offlineProcedure: turn,
  };
}

/** A tool that ends when `release` is called (or after 5 s). */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  let started = false;
  const tool: AnyToolDefinition = {
    name: 'wait_here',
    description: 'waits',
    parameters: z.object({}),
    async execute() {
      started = true;
      await Promise.race([opened, new Promise((r) => setTimeout(r, 5_000))]);
      return { ok: true, content: 'waited' };
    },
  };
  return { tool, release: () => open(), started: () => started };
}

const users = (s: ProcedureState) => s.messages.filter((m) => m.role === 'user').map((m) => m.content);
const toolsSeen = (s: ProcedureState) => s.messages.filter((m) => m.role === 'tool').length;

async function collect(s: RunService, runId: string) {
  const events: AgentEvent[] = [];
  for await (const e of s.events(runId)) events.push(e);
  return events;
}

describe('steering and follow-ups', () => {
  it('a steer reaches the model after the current tool batch; a follow-up after the answer, for another turn', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-steer-'));
    const g = gate();
    const p = plugin(
      'worker',
      () => [g.tool],
      (s) => {
        if (toolsSeen(s) === 0) return { toolCalls: [{ name: 'wait_here', args: {} }] };
        const last = users(s).at(-1)!;
        return { text: `answer to: ${last}` };
      },
    );
    service = new RunService({ dataDir: dir, agents: [p], env: {}, processRegistry: null });
    const run = await service.create({ plugin: 'worker', input: {} });
    const reading = collect(service, run.run_id);
    expect(await eventually(g.started)).toBe(true);
    await service.sendMessage(run.run_id, { text: 'use the blue one', mode: 'steer', from: 'api' });
    await service.sendMessage(run.run_id, { text: 'and now summarise', mode: 'follow_up', from: 'api' });
    g.release();
    const final = await service.wait(run.run_id);
    const events = await reading;
    expect(final.status).toBe('completed');
    expect(final.final_answer).toBe('answer to: and now summarise');
    const run_ = events.flatMap((e) => (e.stream === 'run' ? [e.data] : []));
    expect(run_.filter((d) => d.type === 'message.received').map((d) => (d as { mode: string }).mode)).toEqual(['steer', 'follow_up']);
    expect(run_.filter((d) => d.type === 'message.delivered').map((d) => (d as { mode: string }).mode)).toEqual(['steer', 'follow_up']);
    // the steer was in the turn after the batch: its answer was to the steer, then the follow-up went on
    const answers = events.flatMap((e) => (e.stream === 'assistant' && e.data.phase === 'end' ? [e.data.text] : []));
    expect(answers).toEqual(['answer to: [message from the user while you work] use the blue one', 'answer to: and now summarise']);
    await expect(service.sendMessage(run.run_id, { text: 'too late', mode: 'steer', from: 'api' })).rejects.toMatchObject({ code: 'wrong_state' });
  });

  it('a steer to a queued run is delivered at its first turn; bad messages are refused', async () => {
    dir = mkdtempSync(join(tmpdir(), 'runtrail-steer-'));
    const g = gate();
    const blocker = plugin(
      'blocker',
      () => [g.tool],
      (s) => (toolsSeen(s) === 0 ? { toolCalls: [{ name: 'wait_here', args: {} }] } : { text: 'unblocked' }),
    );
    const echo = plugin(
      'echo',
      () => [],
      (s) => ({ text: users(s).join(' / ') }),
    );
    service = new RunService({ dataDir: dir, agents: [blocker, echo], env: {}, processRegistry: null, concurrency: 1 });
    await service.create({ plugin: 'blocker', input: {} });
    const queued = await service.create({ plugin: 'echo', input: {}, goal: 'say hi' });
    expect((await service.get(queued.run_id))!.status).toBe('queued');
    await service.sendMessage(queued.run_id, { text: 'in French', mode: 'steer', from: 'im' });
    await expect(service.sendMessage(queued.run_id, { text: '', mode: 'steer', from: 'api' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(service.sendMessage(queued.run_id, { text: 'x', mode: 'shout', from: 'api' })).rejects.toMatchObject({ code: 'invalid_request' });
    await expect(service.sendMessage('run_20200101_000000_000000', { text: 'x', from: 'api' })).rejects.toMatchObject({ code: 'not_found' });
    g.release();
    expect((await service.wait(queued.run_id)).final_answer).toBe('say hi / [message from the user while you work] in French');
  });
});

describe('parallel tool calls', () => {
  function probeTools(readOnly: boolean) {
    let inFlight = 0;
    let maxInFlight = 0;
    const finished: number[] = [];
    const tool: AnyToolDefinition = {
      name: 'probe',
      description: 'reads',
      parameters: z.object({ n: z.number() }),
      readOnly,
      async execute(args: { n: number }) {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        // later calls finish first: the observations must still come back in the order asked
        await new Promise((r) => setTimeout(r, (5 - args.n) * 20));
        inFlight--;
        finished.push(args.n);
        return { ok: true, content: `probe ${args.n}` };
      },
    };
    return { tool, max: () => maxInFlight, finished };
  }

  for (const readOnly of [true, false]) {
    it(
      readOnly ? 'runs a batch of read-only calls concurrently, observations in the order asked' : 'runs calls that are not read-only one after another',
      async () => {
        dir = mkdtempSync(join(tmpdir(), 'runtrail-par-'));
        const probe = probeTools(readOnly);
        const p = plugin(
          'prober',
          () => [probe.tool],
          (s) =>
            toolsSeen(s) === 0
              ? { toolCalls: [1, 2, 3, 4].map((n) => ({ name: 'probe', args: { n } })) }
              : {
                  text: s.messages
                    .filter((m) => m.role === 'tool')
                    .map((m) => m.content)
                    .join(','),
                },
        );
        service = new RunService({ dataDir: dir, agents: [p], env: {}, processRegistry: null });
        const run = await service.create({ plugin: 'prober', input: {} });
        const final = await service.wait(run.run_id);
        expect(final.final_answer).toBe('probe 1,probe 2,probe 3,probe 4');
        expect(probe.max()).toBe(readOnly ? 4 : 1);
        expect(probe.finished).toEqual(readOnly ? [4, 3, 2, 1] : [1, 2, 3, 4]);
      },
    );
  }
});
