/** The page's DOM-free parts of the workbench: a call's diff, the steps timeline, two runs compared, turns kept apart. */
import { describe, expect, it } from 'vitest';
import { FOLDED_LINES, folded, reasoningSetting, requestDiff, resultText, turnOfSpan, type Message } from '../../web/src/model-call.js';
import { timeline, durationOf } from '../../web/src/timeline.js';
import { artifactDiffs, foldSame, metricsRows, settingsRows, type RunStatus } from '../../web/src/compare.js';
import { applyFrame, emptyRunView, type RunView, type StepView } from '../../web/src/run-state.js';
import type { RunTraceView, TraceBar } from '../../web/src/trace-view.js';
import { makeDelta, makeReasoning, makeStep, makeDone } from '../../src/events/engine-event.js';
import type { EngineEvent } from '../../src/events/engine-event.js';

const user = (t: string): Message => ({ role: 'user', parts: [{ type: 'text', content: t }] });
const asst = (t: string): Message => ({ role: 'assistant', parts: [{ type: 'text', content: t }] });

describe('requestDiff: what a turn added', () => {
  it('a plain turn adds at the end; the cache mark moving to the newest message is no change', () => {
    const prev = [user('goal'), { ...asst('a1'), cache: 'ephemeral' as const }];
    const cur = [user('goal'), asst('a1'), user('[message from the user while you work] stop'), { ...asst('a2'), cache: 'ephemeral' as const }];
    expect(requestDiff(prev, cur)).toEqual({ head: 2, tail: 0, removed: [], added: { from: 2, to: 4 } });
  });

  it('after a compaction: the older turns taken out, the summary put in, the tail kept', () => {
    const prev = [user('goal'), asst('t1'), asst('t2'), asst('t3'), asst('t4')];
    const cur = [user('goal'), user('[summary of earlier turns: 2 messages were compacted]'), asst('t3'), asst('t4')];
    const d = requestDiff(prev, cur);
    expect(d).toMatchObject({ head: 1, tail: 2, added: { from: 1, to: 2 } });
    expect(d.removed).toEqual([asst('t1'), asst('t2')]);
  });

  it('reads a model bar id', () => {
    expect(turnOfSpan('model:3.1')).toEqual({ turn: 3, attempt: 1 });
    expect(turnOfSpan('compaction:1')).toBeNull();
  });
});

const bar = (over: Partial<TraceBar>): TraceBar => ({
  id: 'x',
  parent_id: 'run',
  kind: 'tool',
  name: 'n',
  label: 'l',
  start_ms: 0,
  end_ms: 10,
  duration_ms: 10,
  status: 'ok',
  error: null,
  tokens: null,
  cost_usd: null,
  step_index: null,
  ...over,
});
const step = (index: number, name: string): StepView => ({
  index,
  type: 'tool',
  name,
  text: '',
  args: {},
  result: '',
  phase: 'ok',
  diagnosis: null,
  node: null,
  approval: null,
});

describe('the steps timeline', () => {
  it('puts model turns, steps and messages in the order they happened, each step with its time', () => {
    const trace: RunTraceView = {
      run_id: 'r',
      trace_id: 't',
      t0: 0,
      last_ms: 100,
      ended: false,
      bars: [
        bar({ id: 'run', kind: 'run' }),
        bar({ id: 'model:1.0', kind: 'model', start_ms: 0, end_ms: 5, duration_ms: 5, turn: 1 }),
        bar({ id: 'tool:a', start_ms: 6, end_ms: 20, duration_ms: 14, step_index: 0 }),
        bar({ id: 'model:2.0', kind: 'model', start_ms: 30, end_ms: null, duration_ms: null, status: 'running', turn: 2 }),
      ],
      messages: [{ id: 'm1', mode: 'steer', text: 'shorter please', from: 'web', at_ms: 25, delivered_ms: 30 }],
    };
    const t = timeline([step(0, 'read'), step(1, 'stop_validation')], trace);
    expect(t.map((e) => (e.kind === 'step' ? `step:${e.step.name}` : e.kind === 'model' ? e.bar.id : `msg:${e.message.text}`))).toEqual([
      'model:1.0',
      'step:read',
      'step:stop_validation',
      'msg:shorter please',
      'model:2.0',
    ]);
    expect(durationOf(trace.bars[2], 100)).toEqual({ ms: 14, running: false });
    expect(durationOf(trace.bars[3], 100)).toEqual({ ms: 70, running: true });
    expect(durationOf(null, 100)).toBeNull();
  });
});

describe('the steps timeline in event order', () => {
  it("keeps a turn's last tool calls before the next model call that started in the same millisecond", () => {
    const trace: RunTraceView = {
      run_id: 'r',
      trace_id: 't',
      t0: 0,
      last_ms: 100,
      ended: false,
      // the trace's order: the events' (the second model call started in the millisecond the tools did)
      bars: [
        bar({ id: 'run', kind: 'run' }),
        bar({ id: 'model:1.0', kind: 'model', start_ms: 0, end_ms: 5, duration_ms: 5, turn: 1 }),
        bar({ id: 'tool:a', start_ms: 5, end_ms: 5, duration_ms: 0, step_index: 0 }),
        bar({ id: 'tool:b', start_ms: 5, end_ms: 5, duration_ms: 0, step_index: 1 }),
        bar({ id: 'model:2.0', kind: 'model', start_ms: 5, end_ms: 9, duration_ms: 4, turn: 2 }),
        bar({ id: 'tool:c', start_ms: 9, end_ms: 9, duration_ms: 0, step_index: 2 }),
        bar({ id: 'model:3.0', kind: 'model', start_ms: 9, end_ms: 12, duration_ms: 3, turn: 3 }),
      ],
      messages: [],
    };
    const t = timeline([step(0, 'a'), step(1, 'b'), step(2, 'c'), step(3, 'stop_validation')], trace);
    expect(t.map((e) => (e.kind === 'step' ? `step:${e.step.name}` : e.kind === 'model' ? e.bar.id : 'msg'))).toEqual([
      'model:1.0',
      'step:a',
      'step:b',
      'model:2.0',
      'step:c',
      'model:3.0',
      'step:stop_validation',
    ]);
  });
});

function fold(events: EngineEvent[]): RunView {
  return events.reduce((s, e) => applyFrame(s, JSON.parse(JSON.stringify(e.toWire('none')))), emptyRunView());
}

describe('turns kept apart on the page', () => {
  it("each turn's thinking is its own entry and each turn's text its own paragraph, never glued", () => {
    const v = fold([
      makeReasoning('Step 1: read'),
      makeReasoning(' the file.'),
      makeDelta('Reading.'),
      makeStep('tool', { name: 'read', phase: 'start', index: 0 }),
      makeStep('tool', { name: 'read', phase: 'ok', index: 0 }),
      makeReasoning('Step 2: count.'),
      makeDelta('Counted '),
      makeDelta('3.'),
    ]);
    expect(v.reasoning).toEqual(['Step 1: read the file.', 'Step 2: count.']);
    expect(v.text).toBe('Reading.\n\nCounted 3.');
    expect(
      fold([
        makeDelta('a'),
        makeStep('tool', { name: 'x', phase: 'ok', index: 0 }),
        makeDelta('b'),
        makeDone({ messageId: 'm', conversationId: 'c', content: 'final' }),
      ]).text,
    ).toBe('final');
  });
});

const status = (over: Partial<RunStatus>): RunStatus => ({
  status: 'completed',
  plugin: 'p',
  goal: 'g',
  provider: 'openai',
  model: 'gpt-4o-mini',
  diagnosis: null,
  ...over,
});

describe('two runs compared', () => {
  it('marks the settings and figures that differ', () => {
    const s = settingsRows(
      { status: status({}), config: { reasoning: 'off', limits: { max_iterations: 20 }, capabilities: { skill: { name: 'k', version: '1.0.0' } } } },
      { status: status({ model: 'gpt-4o' }), config: { reasoning: 'high', limits: { max_iterations: 20 } } },
    );
    expect(s.find((r) => r.label === 'Model')).toEqual({ label: 'Model', a: 'openai:gpt-4o-mini', b: 'openai:gpt-4o', differs: true });
    expect(s.find((r) => r.label === 'Reasoning')?.differs).toBe(true);
    expect(s.find((r) => r.label === 'Skill')).toMatchObject({ a: 'k 1.0.0', b: '–' });
    expect(s.find((r) => r.label === 'limits.max_iterations')?.differs).toBe(false);
    const m = metricsRows(
      { status: status({}), metrics: { tokens: { input: 1000 }, cost_usd: 0.5 } },
      {
        status: status({ status: 'failed', diagnosis: { code: 'timeout', severity: 'error', summary: 'too slow' } }),
        metrics: { tokens: { input: 1000 }, cost_usd: null },
      },
    );
    expect(m.find((r) => r.label === 'Input tokens')).toMatchObject({ a: '1,000', differs: false });
    expect(m.find((r) => r.label === 'Cost')).toMatchObject({ a: '$0.5000', b: 'unknown', differs: true });
    expect(m.find((r) => r.label === 'Diagnosis')?.b).toBe('timeout: too slow');
  });

  it("gives each artifact's line difference, folding long unchanged stretches", () => {
    const d = artifactDiffs({ 'a.md': 'x\ny\nz\n', 'old.md': 'o\n', 'same.json': '{}' }, { 'a.md': 'x\nY\nz\n', 'new.md': 'n\n', 'same.json': '{}' });
    expect(d.map((x) => [x.path, x.state, x.added, x.removed])).toEqual([
      ['a.md', 'differs', 1, 1],
      ['new.md', 'only-b', 2, 0],
      ['old.md', 'only-a', 0, 2],
      ['same.json', 'same', 0, 0],
    ]);
    expect(d[0].lines).toEqual([
      { kind: 'same', text: 'x' },
      { kind: 'removed', text: 'y' },
      { kind: 'added', text: 'Y' },
      { kind: 'same', text: 'z' },
    ]);
    const long = Array.from({ length: 20 }, (_, i) => ({ kind: 'same' as const, text: String(i) }));
    long[10] = { kind: 'added' as never, text: 'new' } as never;
    expect(foldSame(long, 2).map((l) => ('count' in l ? `…${l.count}` : l.text))).toEqual(['…8', '8', '9', 'new', '11', '12', '…7']);
  });
});

describe("a call's tool results and reasoning as the call view says them", () => {
  it('pretty-prints a JSON result (a value, or text holding one) and folds a long one to its first lines', () => {
    expect(resultText('{"rows":2,"top":["a","b"]}')).toBe('{\n  "rows": 2,\n  "top": [\n    "a",\n    "b"\n  ]\n}');
    expect(resultText({ ok: true })).toBe('{\n  "ok": true\n}');
    expect(resultText('one\ntwo\n')).toBe('one\ntwo\n');
    expect(resultText('{not json}')).toBe('{not json}');
    expect(folded('short\ntext')).toBeNull();
    const long = resultText(JSON.stringify({ rows: Array.from({ length: 40 }, (_, i) => ({ id: i })) }));
    const f = folded(long)!;
    expect(f.head.split('\n')).toHaveLength(FOLDED_LINES);
    expect(f.more).toBe(`${long.split('\n').length - FOLDED_LINES} more lines`);
    expect(folded('x'.repeat(5000))!.more).toBe('3,800 more characters');
  });

  it('says what reasoning was asked for and whether the model reasoned anyway', () => {
    const call = (reasoning: string, thought: string) =>
      ({ request: { settings: { reasoning } }, response: { reasoning: thought } }) as unknown as Parameters<typeof reasoningSetting>[0];
    expect(reasoningSetting(call('off', ''))).toBe('reasoning off');
    expect(reasoningSetting(call('off', 'x'.repeat(1200)))).toBe('reasoning not asked for (the model reasoned anyway: 1,200 characters)');
    expect(reasoningSetting(call('high', 'abc'))).toBe('reasoning high (3 characters)');
    expect(reasoningSetting(call('low', ''))).toBe('reasoning low (none returned)');
  });
});
