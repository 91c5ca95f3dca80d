import { describe, expect, it } from 'vitest';
import { BufferAdapter } from '../../src/channels/buffer-adapter.js';
import { makeDelta, makeDone, makeError, makeReasoning, makeStep } from '../../src/events/engine-event.js';
import { makeAgentEvent } from '../../src/events/agent-event-factory.js';
import { createEngineBridge } from '../../src/events/engine-bridge.js';

const silent = { log: () => {} };
const crash = { code: 'skill_crash', severity: 'error', summary: 'skill crashed', detail: 'exit 3' } as const;

describe('BufferAdapter', () => {
  it('drops the partial text of a turn a resumed run redoes (its resume step says from which seq), keeping what came before', () => {
    const bridge = createEngineBridge({ traceId: 't' });
    const b = new BufferAdapter({ keepReasoning: true, ...silent });
    const diagnosis = { code: 'resumed', severity: 'warning' as const, summary: 'run resumed', detail: '', hint: '', retryable: false };
    const events = [
      makeAgentEvent('r', 1, 1, 'assistant', { phase: 'update', text: 'Looking. ', delta: 'Looking. ' }),
      makeAgentEvent('r', 2, 1, 'tool', { phase: 'start', name: 'lookup', toolCallId: 'c1', args: {} }),
      makeAgentEvent('r', 3, 1, 'tool', { phase: 'result', name: 'lookup', toolCallId: 'c1', isError: false, result: 'ok' }),
      makeAgentEvent('r', 4, 1, 'reasoning', { phase: 'update', text: 'half a tho', delta: 'half a tho' }),
      makeAgentEvent('r', 5, 1, 'assistant', { phase: 'update', text: 'The answer is', delta: 'The answer is' }),
      makeAgentEvent('r', 6, 1, 'lifecycle', { phase: 'resumed', resumedAt: 2, attempt: 1, fromSeq: 3, discardFromSeq: 4, diagnosis }),
      makeAgentEvent('r', 7, 1, 'reasoning', { phase: 'update', text: 'a whole thought', delta: 'a whole thought' }),
      makeAgentEvent('r', 8, 1, 'assistant', { phase: 'update', text: 'The answer is 42.', delta: 'The answer is 42.' }),
    ];
    for (const e of events) {
      const f = bridge.translate(e);
      if (f) b.emit(f);
    }
    expect(b.assemble()).toBe('💭 a whole thought\n\nLooking. The answer is 42.');
    const step = bridge.steps().find((s) => s.name === 'resume');
    expect(step).toMatchObject({ type: 'agent', args: { attempt: 1, from_seq: 3, discard_from_seq: 4 }, diagnosis: { code: 'resumed' } });
  });

  it('accumulates deltas and drops reasoning by default', () => {
    const b = new BufferAdapter(silent);
    expect(b.claw).toBe('im');
    b.emit(makeReasoning('secret thoughts'));
    b.emit(makeDelta('Hello'));
    b.emit({ type: 'delta', content: ' world' });
    expect(b.assemble()).toBe('Hello world');
  });

  it('keeps reasoning when asked', () => {
    const b = new BufferAdapter({ keepReasoning: true, ...silent });
    b.emit(makeReasoning('hmm'));
    b.emit(makeDelta('answer'));
    expect(b.assemble()).toBe('💭 hmm\n\nanswer');
  });

  it('turns an error-level step diagnosis into a footnote, not warnings, and not when disabled', () => {
    const b = new BufferAdapter(silent);
    b.emit(makeDelta('partial'));
    b.emit(makeStep('skill', { name: 's', phase: 'fail', index: 0, diagnosis: crash }));
    b.emit(makeStep('tool', { name: 't', phase: 'ok', index: 1, diagnosis: { code: 'w', severity: 'warning', summary: 'slow' } }));
    expect(b.assemble()).toBe('partial\n\n❌ skill crashed\nexit 3');
    const quiet = new BufferAdapter({ keepDiagnosis: false, ...silent });
    quiet.emit(makeDelta('partial'));
    quiet.emit(makeStep('skill', { name: 's', phase: 'fail', diagnosis: crash }));
    expect(quiet.assemble()).toBe('partial');
  });

  it('done.content wins over accumulated deltas', () => {
    const b = new BufferAdapter(silent);
    b.emit(makeDelta('draft <think>x</think>'));
    b.emit(makeDone({ messageId: 'm', conversationId: 'c', content: 'final' }));
    expect(b.isFinished).toBe(true);
    expect(b.assemble()).toBe('final');
  });

  it('an error frame becomes a footnote', () => {
    const b = new BufferAdapter(silent);
    b.emit(makeError('model unreachable'));
    expect(b.assemble()).toBe('❌ model unreachable');
  });

  it('returns { text, media } when the reply carries MEDIA lines', () => {
    const b = new BufferAdapter(silent);
    b.emit(makeDelta('Here is the chart.\nMEDIA: artifacts/chart.png\nMEDIA: https://x.test/a.jpg\nEnjoy'));
    expect(b.assemble()).toEqual({ text: 'Here is the chart.\nEnjoy', media: ['artifacts/chart.png', 'https://x.test/a.jpg'] });
  });

  it('drops garbage and counts it', () => {
    const b = new BufferAdapter(silent);
    expect(b.emit({ content: 'no type' })).toBe(false);
    expect(b.emit(undefined)).toBe(false);
    expect(b.stats.dropped).toBe(2);
    expect(b.assemble()).toBe('');
  });
});
