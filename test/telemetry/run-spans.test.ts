import { describe, expect, it } from 'vitest';
import { AgentEventBus } from '../../src/events/agent-event-bus.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { RunSpanFolder, type RunSpan } from '../../src/telemetry/run-spans.js';

/** Publishes a run's events on a real bus with a stepping clock and folds them. */
function fold(script: (bus: AgentEventBus) => void, ctx = { runId: 'run_1', tenantId: 'acme', claw: 'web' }) {
  let t = 1_000;
  const bus = new AgentEventBus({ runId: ctx.runId, now: () => (t += 10) });
  const opened: RunSpan[] = [];
  const closed: RunSpan[] = [];
  const events: Array<{ span: string; name: string; attrs: Record<string, unknown> }> = [];
  const folder = new RunSpanFolder(
    {
      open: (s) => opened.push({ ...s, attributes: { ...s.attributes } }),
      close: (s) => closed.push(s),
      event: (s, name, attrs) => events.push({ span: s.id, name, attrs }),
    },
    ctx,
  );
  const seen: AgentEvent[] = [];
  bus.subscribe((ev) => {
    seen.push(ev);
    folder.push(ev);
  });
  script(bus);
  return { opened, closed, events, folder, seen };
}

const started = (bus: AgentEventBus) => {
  bus.publish('run', { type: 'run.created', runId: 'run_1', plugin: 'notes', goal: 'g', conversationId: 'c1' });
  bus.publish('run', { type: 'run.state', from: null, to: 'queued' });
};
const end = (bus: AgentEventBus, status: 'completed' | 'failed' | 'cancelled' = 'completed') =>
  bus.publish('run', {
    type: status === 'completed' ? 'run.completed' : status === 'failed' ? 'run.failed' : 'run.cancelled',
    status,
    messageId: 'run_1',
    conversationId: 'c1',
    content: '',
    usedSkills: [],
    usedMcp: [],
    ...(status === 'failed'
      ? { diagnosis: { code: 'max_iterations', severity: 'error', summary: 'stopped after 2 model turns', detail: '', hint: '', retryable: false } }
      : {}),
  });

describe('RunSpanFolder', () => {
  it("makes the run span the parent of model calls (GenAI attributes, usage) and tool calls, on the events' own times", () => {
    const { closed, events } = fold((bus) => {
      started(bus);
      bus.publish('model', { phase: 'start', turn: 1, attempt: 0, provider: 'anthropic', model: 'claude-x' });
      bus.publish('assistant', { phase: 'update', text: 'hi', delta: 'hi' });
      bus.publish('model', {
        phase: 'end',
        turn: 1,
        attempt: 0,
        provider: 'anthropic',
        model: 'claude-x',
        finishReason: 'tool-calls',
        tokens: { input: 120, output: 30, cached_input: 100, cache_write: 0, reasoning: 4 },
        costUsd: 0.0012,
        startedAt: 0,
        latencyMs: 20,
        firstTokenMs: 5,
      });
      bus.publish('tool', { phase: 'start', name: 'read_notes', toolCallId: 'c_1', args: {} });
      bus.publish('tool', {
        phase: 'result',
        name: 'read_notes',
        toolCallId: 'c_1',
        isError: true,
        result: 'no file',
        diagnosis: { code: 'not_found', severity: 'error', summary: 'no such file', detail: '', hint: '', retryable: false },
      });
      end(bus);
    });
    const byName = Object.fromEntries(closed.map((s) => [s.name, s]));
    expect(Object.keys(byName)).toEqual(['chat claude-x', 'execute_tool read_notes', 'runtrail.run']);
    const run = byName['runtrail.run'];
    expect(run).toMatchObject({ parentId: null, status: 'ok', startMs: 1010 });
    expect(run.attributes).toMatchObject({
      'runtrail.run_id': 'run_1',
      'runtrail.plugin': 'notes',
      'runtrail.claw': 'web',
      'runtrail.tenant_id': 'acme',
      'runtrail.status': 'completed',
    });
    const chat = byName['chat claude-x'];
    expect(chat).toMatchObject({
      parentId: 'run',
      kind: 'model',
      status: 'ok',
      startMs: 1030,
      endMs: 1050,
      tokens: { input: 120, output: 30 },
      costUsd: 0.0012,
    });
    expect(chat.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'anthropic',
      'gen_ai.request.model': 'claude-x',
      'gen_ai.usage.input_tokens': 120,
      'gen_ai.usage.output_tokens': 30,
      'gen_ai.usage.cache_read.input_tokens': 100,
      'gen_ai.response.finish_reasons': ['tool-calls'],
      'runtrail.run_id': 'run_1',
      'runtrail.plugin': 'notes',
      'runtrail.claw': 'web',
      'runtrail.tenant_id': 'acme',
    });
    const tool = byName['execute_tool read_notes'];
    expect(tool).toMatchObject({ parentId: 'run', kind: 'tool', status: 'error', error: 'no such file', toolCallId: 'c_1' });
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'read_notes',
      'gen_ai.tool.call.id': 'c_1',
      'error.type': 'not_found',
    });
    // state changes are points on the run span
    expect(events).toContainEqual({ span: 'run', name: 'runtrail.state', attrs: { 'runtrail.state.to': 'queued' } });
  });

  it('names MCP calls, subagents and skills by their step kind, and folds compactions', () => {
    const { closed, events } = fold((bus) => {
      started(bus);
      bus.publish('tool', { phase: 'start', name: 'mcp__files__read_file', toolCallId: 'm1', args: { path: 'a' }, kind: 'mcp', server: 'files' });
      bus.publish('tool', { phase: 'result', name: 'mcp__files__read_file', toolCallId: 'm1', isError: false, result: 'text' });
      bus.publish('tool', { phase: 'start', name: 'run_agent', toolCallId: 'a1', args: { agent: 'researcher', goal: 'look' }, kind: 'agent' });
      // a later phase (the subagent's run is linked) marks the open span without closing it
      bus.publish('tool', {
        phase: 'update',
        name: 'run_agent',
        toolCallId: 'a1',
        partialResult: null,
        ...({ node: { id: 'run_2', type: 'run', label: 'researcher' } } as object),
      });
      bus.publish('tool', { phase: 'result', name: 'run_agent', toolCallId: 'a1', isError: false, result: 'found' });
      bus.publish('tool', { phase: 'start', name: 'run_skill', toolCallId: 's1', args: { skill: 'sentiment' }, kind: 'skill' });
      bus.publish('tool', { phase: 'result', name: 'run_skill', toolCallId: 's1', isError: false, result: 'ok' });
      bus.publish('compaction', { phase: 'start' });
      bus.publish('compaction', { phase: 'end', willRetry: true });
      end(bus);
    });
    const mcp = closed.find((s) => s.kind === 'mcp')!;
    expect(mcp).toMatchObject({ name: 'tools/call mcp__files__read_file', label: 'files · mcp__files__read_file', parentId: 'run' });
    expect(mcp.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'runtrail.mcp.server': 'files',
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.call.id': 'm1',
    });
    const agent = closed.find((s) => s.kind === 'agent')!;
    expect(agent).toMatchObject({ name: 'invoke_agent researcher', label: 'researcher', status: 'ok' });
    expect(agent.attributes).toMatchObject({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'researcher', 'runtrail.node.id': 'run_2' });
    expect(closed.find((s) => s.kind === 'skill')).toMatchObject({ name: 'execute_tool run_skill', label: 'sentiment' });
    const compaction = closed.find((s) => s.kind === 'compaction')!;
    expect(compaction).toMatchObject({ name: 'runtrail.compaction', status: 'ok', parentId: 'run' });
    expect(compaction.attributes['runtrail.compaction.will_retry']).toBe(true);
    expect(events.filter((e) => e.span !== 'run')).toEqual([]);
  });

  it('a retried model call is a span per attempt; a cancelled run ends what it left open', () => {
    const { closed, folder } = fold((bus) => {
      started(bus);
      bus.publish('model', { phase: 'start', turn: 1, attempt: 0, provider: 'openai', model: 'gpt-x' });
      bus.publish('model', {
        phase: 'end',
        turn: 1,
        attempt: 0,
        provider: 'openai',
        model: 'gpt-x',
        finishReason: 'error',
        tokens: null,
        costUsd: null,
        startedAt: 0,
        latencyMs: 3,
        firstTokenMs: null,
        error: 'rate_limited',
      });
      bus.publish('model', { phase: 'start', turn: 1, attempt: 1, provider: 'openai', model: 'gpt-x' });
      bus.publish('tool', { phase: 'start', name: 'sleep', toolCallId: 't9', args: {} });
      end(bus, 'cancelled');
    });
    const chats = closed.filter((s) => s.kind === 'model');
    expect(chats.map((s) => [s.id, s.status, s.error])).toEqual([
      ['model:1.0', 'error', 'rate_limited'],
      ['model:1.1', 'cancelled', 'the run ended first'],
    ]);
    expect(chats[0].attributes['error.type']).toBe('rate_limited');
    expect(closed.find((s) => s.id === 'tool:t9')?.status).toBe('cancelled');
    expect(closed.at(-1)).toMatchObject({ id: 'run', status: 'cancelled' });
    expect(folder.openSpans).toEqual([]);
  });

  it("a failed run's span is an error with the diagnosis; a live run keeps its open spans", () => {
    const failed = fold((bus) => {
      started(bus);
      end(bus, 'failed');
    });
    expect(failed.closed.at(-1)).toMatchObject({ status: 'error', error: 'stopped after 2 model turns' });
    expect(failed.closed.at(-1)?.attributes['error.type']).toBe('max_iterations');

    const live = fold((bus) => {
      started(bus);
      bus.publish('model', { phase: 'start', turn: 1, attempt: 0, provider: 'p', model: 'm' });
    });
    expect(live.closed).toEqual([]);
    expect(live.folder.openSpans.map((s) => s.id)).toEqual(['run', 'model:1.0']);
  });
});
