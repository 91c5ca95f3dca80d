import { describe, expect, it } from 'vitest';
import { AgentEventBus } from '../../src/events/agent-event-bus.js';
import type { AgentEvent } from '../../src/events/agent-event.js';
import { createEngineBridge } from '../../src/events/engine-bridge.js';
import { formatSseFrame } from '../../src/channels/sse-adapter.js';
import { sampleRun } from './sample-run.js';

describe('createEngineBridge', () => {
  it('maps each AgentEvent to at most one EngineEvent carrying its seq', () => {
    const bridge = createEngineBridge({ traceId: 'run_1', tenantId: 'acme' });
    const events = sampleRun();
    const frames = events.map((e) => [e.seq, bridge.translate(e)] as const).filter(([, f]) => f !== null);
    for (const [seq, f] of frames) {
      expect(f?.seq).toBe(seq);
      expect(f?.traceId).toBe('run_1');
      expect(f?.tenantId).toBe('acme');
    }
    expect(frames.map(([, f]) => f?.type)).toEqual(['reasoning', 'delta', 'delta', 'step', 'step', 'process', 'step', 'step', 'step', 'delta', 'done']);
  });

  it('gives each tool call a stable index and re-sends it with ok/fail', () => {
    const bridge = createEngineBridge({ traceId: 't' });
    const wires = sampleRun()
      .map((e) => bridge.translate(e)?.toWire('none'))
      .filter((w) => w?.type === 'step');
    expect(wires.map((w) => [w && 'index' in w ? w.index : -1, w && 'step' in w ? [w.step.type, w.step.name, w.step.phase] : []])).toEqual([
      [0, ['tool', 'csv_profile', 'start']],
      [1, ['skill', 'run_skill', 'start']],
      [1, ['skill', 'run_skill', 'fail']],
      [0, ['tool', 'csv_profile', 'ok']],
      [2, ['agent', 'stop_validation', 'fail']],
    ]);
    const failed = wires[2] as { step: { result: string; diagnosis: { code: string }; args: unknown } };
    expect(failed.step.diagnosis.code).toBe('skill_crash');
    expect(failed.step.result).toContain('skill crashed');
    expect(failed.step.args).toEqual({ q: 1 });
    const blocked = wires[4] as { step: { diagnosis: { detail: string; severity: string } } };
    expect(blocked.step.diagnosis.severity).toBe('error');
    expect(blocked.step.diagnosis.detail).toContain('report.md missing');
    expect(blocked.step.diagnosis.detail).toContain('summary empty');
  });

  it('done carries final steps, skills, ids and the trace id', () => {
    const bridge = createEngineBridge({ traceId: 'run_1' });
    const done = sampleRun()
      .map((e) => bridge.translate(e))
      .find((f) => f?.type === 'done');
    expect(done?.toWire()).toMatchObject({
      type: 'done',
      message_id: 'msg_1',
      conversation_id: 'conv_1',
      content: 'Hello, 世界 Done.',
      used_skills: ['insight'],
      used_mcp: [],
      generating: false,
      trace_id: 'run_1',
    });
    const steps = (done?.toWire() as { process_steps: Array<{ name: string; phase: string }> }).process_steps;
    expect(steps.map((s) => [s.name, s.phase])).toEqual([
      ['csv_profile', 'ok'],
      ['run_skill', 'fail'],
      ['stop_validation', 'fail'],
    ]);
    expect(bridge.steps()).toEqual(steps);
  });

  it('failed and cancelled runs end with an error frame with a diagnosis', () => {
    const bridge = createEngineBridge({ traceId: 't' });
    const bus = new AgentEventBus({ runId: 'r' });
    const base = { messageId: 'm', conversationId: 'c', content: '', usedSkills: [], usedMcp: [] };
    const f = bridge.translate(
      bus.publish('run', {
        type: 'run.failed',
        status: 'failed',
        ...base,
        diagnosis: { code: 'provider_down', severity: 'error', summary: 'model unreachable', detail: '', hint: '', retryable: true },
      }),
    );
    expect(f?.toWire()).toMatchObject({ type: 'error', message: 'model unreachable', diagnosis: { code: 'provider_down', retryable: true } });
    const c = bridge.translate(bus.publish('run', { type: 'run.cancelled', status: 'cancelled', ...base }));
    expect(c?.toWire()).toMatchObject({ type: 'error', message: 'run cancelled', diagnosis: { code: 'run_cancelled' } });
  });

  it('is a pure function of the event sequence: a replay gives identical frames', () => {
    const events = sampleRun();
    const live = createEngineBridge({ traceId: 'run_1' });
    const liveFrames = events.map((e) => JSON.stringify(live.translate(e)?.toWire() ?? null));
    const replayed = JSON.parse(JSON.stringify(events)) as AgentEvent[];
    const again = createEngineBridge({ traceId: 'run_1' });
    expect(replayed.map((e) => JSON.stringify(again.translate(e)?.toWire() ?? null))).toEqual(liveFrames);
  });

  it('SSE bytes from an events.jsonl replay equal the live bytes', () => {
    const sse = (events: AgentEvent[]) => {
      const b = createEngineBridge({ traceId: 'run_1' });
      return events
        .map((e) => b.translate(e))
        .filter((e) => e !== null)
        .map((e) => formatSseFrame(e))
        .join('');
    };
    const events = sampleRun();
    const jsonl = events.map((e) => JSON.stringify(e)).join('\n');
    const live = sse(events);
    expect(sse(jsonl.split('\n').map((l) => JSON.parse(l) as AgentEvent))).toBe(live);
    expect(live).toContain('id: 4\ndata: {"type":"delta","content":"Hello"}\n\n');
  });
});
