import { describe, expect, it } from 'vitest';
import { Diagnosis } from '../../src/events/diagnosis.js';
import { EngineEvent, fromWire, makeDelta, makeDone, makeError, makeProcess, makeReasoning, makeStep } from '../../src/events/engine-event.js';
import { makeProcessEvent } from '../../src/events/process-event-factory.js';

const err = { code: 'csv_parse', severity: 'error', summary: 'CSV could not be parsed', detail: 'line 3', hint: 'check quoting' } as const;

describe('EngineEvent factories and toWire', () => {
  it('delta and reasoning carry content only, meta only when non-empty', () => {
    expect(makeDelta('hi').toWire()).toEqual({ type: 'delta', content: 'hi' });
    expect(makeReasoning('hm', { seq: 3, traceId: 't', tenantId: '', claw: 'web' }).toWire()).toEqual({
      type: 'reasoning',
      content: 'hm',
      seq: 3,
      trace_id: 't',
      claw: 'web',
    });
  });

  it('step objects follow the wire shapes per kind, with added keys inside step', () => {
    expect(makeStep('thinking', { text: 'plan' }).toWire()).toEqual({ type: 'step', step: { type: 'thinking', text: 'plan' } });
    expect(makeStep('skill', { name: 's', args: { a: 1 }, result: 'r', index: 0 }).toWire()).toEqual({
      type: 'step',
      step: { type: 'skill', name: 's', args: { a: 1 }, result: 'r' },
      index: 0,
    });
    expect(makeStep('mcp', { server: 'fs', name: 'read', phase: 'start', index: 2, node: { id: 'n1', type: 'tool', label: 'Read' }, seq: 9 }).toWire()).toEqual(
      {
        type: 'step',
        step: { type: 'mcp', server: 'fs', name: 'read', args: {}, result: '', phase: 'start', node: { id: 'n1', type: 'tool', label: 'Read' } },
        index: 2,
        seq: 9,
      },
    );
  });

  it('an error diagnosis with an empty result fills result from its text', () => {
    const w = makeStep('tool', { name: 'csv', phase: 'fail', diagnosis: err }).toWire() as unknown as { step: Record<string, unknown> };
    expect(w.step.result).toBe('❌ CSV could not be parsed\nline 3\nHint: check quoting');
    expect(w.step.diagnosis).toEqual({ ...err, retryable: false });
    const warn = makeStep('tool', { diagnosis: { code: 'w', severity: 'warning', summary: 's' } }).toWire() as unknown as { step: Record<string, unknown> };
    expect(warn.step.result).toBe('');
  });

  it('done writes every legacy key even without options', () => {
    expect(makeDone({ messageId: 'm', conversationId: 'c' }).toWire()).toEqual({
      type: 'done',
      message_id: 'm',
      conversation_id: 'c',
      content: '',
      process_steps: [],
      used_skills: [],
      used_mcp: [],
      generating: false,
    });
  });

  it('error keeps diagnosis top-level; process carries the event', () => {
    expect(makeError('boom', { diagnosis: new Diagnosis(err) }).toWire()).toEqual({ type: 'error', message: 'boom', diagnosis: { ...err, retryable: false } });
    const pe = makeProcessEvent({ operationId: 'o', targetType: 'tool', source: 'tool', status: 'running' }, () => 1);
    expect(makeProcess(pe).toWire()).toEqual({ type: 'process', event: pe });
  });

  it('toText degrades for plain-text channels', () => {
    expect(makeDelta('a').toText()).toBe('a');
    expect(makeStep('tool', { name: 'x', phase: 'ok' }).toText()).toBe('');
    expect(makeStep('tool', { diagnosis: err }).toText()).toMatch(/^❌ CSV could not be parsed/);
    expect(makeError('boom').toText()).toBe('❌ boom');
    expect(makeDone({ messageId: 'm', conversationId: 'c', content: 'final' }).toText()).toBe('final');
    const pe = makeProcessEvent({ operationId: 'o', targetType: 'tool', source: 'tool', status: 'running' });
    expect(makeProcess(pe).toText()).toBe('');
  });

  it('rejects bad factory input with a message naming it', () => {
    expect(() => makeStep('robot' as never)).toThrow(/step kind must be one of thinking\|skill/);
    expect(() => makeStep('tool', { phase: 'done' as never })).toThrow(/phase/);
    expect(() => makeStep('tool', { index: -1 })).toThrow(/index/);
    expect(() => makeDelta(5 as never)).toThrow(/content must be a string/);
    expect(() => makeDelta('x', { seq: 1.5 })).toThrow(/seq/);
    expect(() => new EngineEvent(Symbol('x'), { type: 'delta', seq: 0, traceId: '', tenantId: '', claw: '' })).toThrow(/factories|makeDelta/);
  });
});

describe('fromWire', () => {
  it('round-trips every frame type', () => {
    const pe = makeProcessEvent({ operationId: 'o', targetType: 'tool', source: 'tool', status: 'running', current: 1, total: 2 }, () => 1);
    const events = [
      makeDelta('a', { seq: 1, traceId: 't' }),
      makeReasoning('r'),
      makeStep('mcp', {
        server: 's',
        name: 'n',
        args: { q: 1 },
        result: 'ok',
        phase: 'ok',
        index: 1,
        diagnosis: err,
        node: { id: 'i', type: 't', label: 'l' },
      }),
      makeDone({
        messageId: 'm',
        conversationId: 'c',
        content: 'x',
        processSteps: [{ type: 'tool', name: 'a', args: {}, result: '' }],
        usedSkills: ['s'],
        usedMcp: ['m'],
        generating: true,
      }),
      makeError('e', { diagnosis: err, claw: 'im', tenantId: 'ten' }),
      makeProcess(pe, { seq: 4 }),
    ];
    for (const e of events) expect(fromWire(JSON.parse(JSON.stringify(e.toWire())))?.toWire()).toEqual(e.toWire());
  });

  it('lifts a legacy step and passes an EngineEvent through', () => {
    const ev = fromWire({ type: 'step', step: { type: 'skill', name: 'x', result: { n: 1 } }, index: 3 });
    expect(ev?.toWire()).toEqual({ type: 'step', step: { type: 'skill', name: 'x', args: {}, result: '{"n":1}' }, index: 3 });
    const d = makeDelta('x');
    expect(fromWire(d)).toBe(d);
  });

  it.each([
    ['null', null],
    ['a string', 'delta'],
    ['a number', 42],
    ['an array', [{ type: 'delta' }]],
    ['no type', { content: 'x' }],
    ['a non-string type', { type: 7 }],
    ['an unknown type', { type: 'telepathy' }],
    ['a process frame without event', { type: 'process' }],
    ['a process frame with an invalid event', { type: 'process', event: { operationId: 'o', status: 'exploded' } }],
  ])('returns null for %s', (_, x) => {
    expect(fromWire(x)).toBeNull();
  });

  it('tolerates odd field types without throwing', () => {
    expect(fromWire({ type: 'delta', content: { x: 1 }, seq: -3, trace_id: 5 })?.toWire()).toEqual({ type: 'delta', content: '', trace_id: '5' });
    expect(fromWire({ type: 'step', step: 'nope', index: 'x' })?.toWire()).toEqual({ type: 'step', step: { type: 'tool', name: '', args: {}, result: '' } });
    expect(fromWire({ type: 'done', used_skills: [1, 'a'], process_steps: 'x' })?.toWire()).toMatchObject({ used_skills: ['a'], process_steps: [] });
    expect(fromWire({ type: 'error', diagnosis: { severity: 'apocalyptic' } })?.toWire()).toMatchObject({ diagnosis: { severity: 'error', code: 'unknown' } });
  });
});

describe('toWireJson', () => {
  it('equals JSON.stringify(toWire(mode)) for every mode, fast path included', () => {
    const evs = [makeDelta('a"\u2028é'), makeDelta('b', { seq: 2, traceId: 't', claw: 'web' }), makeError('x', { seq: 1, traceId: 't' })];
    for (const e of evs) for (const mode of ['all', 'none', 'trace'] as const) expect(e.toWireJson(mode)).toBe(JSON.stringify(e.toWire(mode)));
  });
});
