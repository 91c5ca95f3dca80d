/**
 * The UI message stream of a run resumed after its process died: the partial deltas of the turn it
 * redid are left out when the stream knows of them, and a stream that was already sending them ends
 * their part at the `resumed` event (the protocol has no way to take text back).
 */
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { AgentEventBus } from '../../src/events/agent-event-bus.js';
import { Diagnosis } from '../../src/events/diagnosis.js';
import { discardedRanges } from '../../src/runtime/storage/discarded-ranges.js';
import { UiMessageStreamTranslator } from '../../src/server/ui-message-stream.js';

/** A run whose first turn was cut after two deltas, resumed, and redone whole. */
function resumedRun(): AgentEvent[] {
  const bus = new AgentEventBus({ runId: 'run_1' });
  const out: AgentEvent[] = [];
  bus.subscribe((e) => out.push(e));
  const turn = { turn: 1, attempt: 0, provider: 'script', model: 'm' };
  bus.publish('model', { phase: 'start', ...turn });
  const cut = bus.publish('assistant', { phase: 'update', text: 'hal', delta: 'hal' });
  bus.publish('assistant', { phase: 'update', text: 'half an', delta: 'f an' });
  bus.publish('lifecycle', {
    phase: 'resumed',
    resumedAt: 1,
    attempt: 1,
    fromSeq: 0,
    discardFromSeq: cut.seq,
    diagnosis: new Diagnosis({ code: 'resumed', severity: 'warning', summary: 'resumed' }).toDict(),
  });
  bus.publish('model', { phase: 'start', ...turn });
  bus.publish('assistant', { phase: 'update', text: 'whole', delta: 'whole' });
  bus.publish('assistant', { phase: 'end', text: 'whole', delta: '' });
  return out;
}

const meta = { run_id: 'run_1', trace_id: 't', conversation_id: 'c' };
const textOf = (chunks: Array<{ type: string; delta?: string }>) => chunks.flatMap((c) => (c.type === 'text-delta' ? [c.delta] : []));

describe('UiMessageStreamTranslator over a resumed run', () => {
  it('leaves out the discarded deltas it knows of: one answer', () => {
    const events = resumedRun();
    const tr = new UiMessageStreamTranslator(meta, discardedRanges(events));
    const chunks = events.flatMap((e) => tr.push(e));
    expect(textOf(chunks)).toEqual(['whole']);
  });

  it('a stream that sent them before it knew ends their part at the resumed event, before the redone turn starts', () => {
    const events = resumedRun();
    const tr = new UiMessageStreamTranslator(meta);
    const byEvent = events.map((e) => tr.push(e));
    const resumedAt = events.findIndex((e) => e.stream === 'lifecycle');
    expect(byEvent[resumedAt]).toEqual([{ type: 'text-end', id: 'text-1' }]);
    expect(textOf(byEvent.flat())).toEqual(['hal', 'f an', 'whole']);
  });
});
