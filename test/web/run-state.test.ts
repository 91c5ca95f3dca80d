import { describe, expect, it } from 'vitest';
import { applyFrame, applyFrames, emptyRunView, type RunView } from '../../web/src/run-state.js';
import { makeDelta, makeDone, makeError, makeProcess, makeStep } from '../../src/events/engine-event.js';
import { Diagnosis } from '../../src/events/diagnosis.js';
import type { EngineEvent } from '../../src/events/engine-event.js';

/** Frames as the page gets them: the wire JSON the server sends. */
function fold(events: EngineEvent[]): RunView {
  return events.reduce((s, e) => applyFrame(s, JSON.parse(JSON.stringify(e.toWire('none')))), emptyRunView());
}

describe('run view state (web)', () => {
  it('streams text, replaces a step by index when its phase changes, and ends on done', () => {
    const v = fold([
      makeStep('tool', { name: 'read_csv', args: { path: 'a.csv' }, phase: 'start', index: 0 }),
      makeDelta('Hel'),
      makeDelta('lo'),
      makeStep('tool', { name: 'read_csv', args: { path: 'a.csv' }, phase: 'ok', result: '{"rows":3}', index: 0 }),
      makeStep('skill', {
        name: 'csv_profile',
        phase: 'fail',
        index: 1,
        diagnosis: new Diagnosis({ code: 'timeout', severity: 'error', summary: 'took too long' }),
      }),
      makeDone({ messageId: 'm', conversationId: 'c', content: 'Hello.' }),
    ]);
    expect(v.steps.map((s) => [s.index, s.name, s.phase])).toEqual([
      [0, 'read_csv', 'ok'],
      [1, 'csv_profile', 'fail'],
    ]);
    expect(v.steps[0].result).toBe('{"rows":3}');
    expect(v.steps[1].diagnosis?.code).toBe('timeout');
    expect(v.text).toBe('Hello.');
    expect(v.ended).toBe('done');
    expect(v.frames).toBe(6);
  });

  it('builds the process tree with the first and last timestamps of each operation', () => {
    const base = { targetType: 'tool' as const, source: 'tool' as const, level: 'info' as const };
    const v = fold([
      makeProcess({ ...base, operationId: 'op', status: 'started', ts: 1000 }),
      makeProcess({ ...base, operationId: 'op.1', parentOperationId: 'op', stage: 'parse', status: 'running', current: 2, total: 4, percent: 50, ts: 1100 }),
      makeProcess({ ...base, operationId: 'op', status: 'completed', ts: 1900 }),
    ]);
    expect(v.operationOrder).toEqual(['op', 'op.1']);
    expect(v.operations.op).toMatchObject({ status: 'completed', firstTs: 1000, lastTs: 1900 });
    expect(v.operations['op.1']).toMatchObject({ parent: 'op', stage: 'parse', percent: 50 });
  });

  it('keeps the error and its diagnosis', () => {
    const v = fold([
      makeDelta('partial'),
      makeError('run failed', { diagnosis: new Diagnosis({ code: 'interrupted', severity: 'error', summary: 'run was interrupted', hint: 'start it again' }) }),
    ]);
    expect(v.ended).toBe('error');
    expect(v.error?.diagnosis?.hint).toBe('start it again');
    expect(v.text).toBe('partial');
  });
});

describe('a run resumed after its process died', () => {
  it("drops the partial text and thinking of the turn it redoes (from the resume step's discard_from_seq), keeping the rest", () => {
    const frames = [
      { type: 'delta', content: 'Looking.', seq: 1 },
      { type: 'step', step: { type: 'tool', name: 'lookup', args: {}, result: '', phase: 'start' }, index: 0, seq: 2 },
      { type: 'step', step: { type: 'tool', name: 'lookup', args: {}, result: 'ok', phase: 'ok' }, index: 0, seq: 3 },
      { type: 'reasoning', content: 'half a tho', seq: 4 },
      { type: 'delta', content: 'The answer is', seq: 5 },
      {
        type: 'step',
        step: {
          type: 'agent',
          name: 'resume',
          args: { attempt: 1, from_seq: 3, discard_from_seq: 4 },
          result: 'run resumed',
          phase: 'ok',
          diagnosis: { code: 'resumed', severity: 'warning', summary: 'run resumed' },
        },
        index: 1,
        seq: 6,
      },
      { type: 'reasoning', content: 'a whole thought', seq: 7 },
      { type: 'delta', content: 'The answer is 42.', seq: 8 },
    ];
    const v = applyFrames(emptyRunView(), frames);
    expect(v.text).toBe('Looking.\n\nThe answer is 42.');
    expect(v.reasoning).toEqual(['a whole thought']);
    expect(v.steps.map((s) => s.name)).toEqual(['lookup', 'resume']);
    // frame by frame, the same
    expect(frames.reduce((s, f) => applyFrame(s, f), emptyRunView()).text).toBe(v.text);
  });
});
