import { AgentEventBus } from '../../src/events/agent-event-bus.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { makeProcessEvent } from '../../src/events/process-event-factory.js';

/** A small but complete run: text, reasoning, two overlapping tool calls (one failing), progress, a blocked stop hook, completion. */
export function sampleRun(): AgentEvent[] {
  const bus = new AgentEventBus({ runId: 'run_1', now: () => 1_700_000_000_000 });
  const out: AgentEvent[] = [];
  bus.subscribe((e) => out.push(e));
  bus.publish('lifecycle', { phase: 'start', startedAt: 1 });
  bus.publish('run', { type: 'run.state', from: null, to: 'planning' });
  bus.publish('reasoning', { text: 'think', delta: 'think' });
  bus.publish('assistant', { text: 'Hello', delta: 'Hello' });
  bus.publish('assistant', { text: 'Hello', delta: '' });
  bus.publish('assistant', { text: 'Hello, 世界', delta: ', 世界' });
  bus.publish('assistant', { phase: 'end', text: 'Hello, 世界', delta: '' });
  bus.publish('tool', { phase: 'start', name: 'csv_profile', toolCallId: 'c1', args: { path: 'a.csv' } });
  bus.publish('tool', { phase: 'start', name: 'run_skill', toolCallId: 'c2', args: { q: 1 }, kind: 'skill' });
  bus.publish('tool', { phase: 'update', name: 'csv_profile', toolCallId: 'c1', partialResult: 'half' });
  bus.publish('process', {
    event: makeProcessEvent({ operationId: 'op', targetType: 'skill', source: 'skill', status: 'running', current: 1, total: 2 }, () => 5),
  });
  bus.publish('tool', {
    phase: 'result',
    name: 'run_skill',
    toolCallId: 'c2',
    isError: true,
    result: '',
    diagnosis: { code: 'skill_crash', severity: 'error', summary: 'skill crashed', detail: 'exit 3', hint: '', retryable: false },
  });
  bus.publish('tool', { phase: 'result', name: 'csv_profile', toolCallId: 'c1', isError: false, result: '12 rows' });
  bus.publish('run', { type: 'hook.blocked', hook: 'stop_validator', reasons: ['report.md missing', 'summary empty'] });
  bus.publish('compaction', { phase: 'start' });
  bus.publish('assistant', { text: 'Done.', delta: 'Done.' });
  bus.publish('run', {
    type: 'run.completed',
    status: 'completed',
    messageId: 'msg_1',
    conversationId: 'conv_1',
    content: 'Hello, 世界 Done.',
    usedSkills: ['insight'],
    usedMcp: [],
  });
  return out;
}
