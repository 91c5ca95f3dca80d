import { describe, expect, it } from 'vitest';
import { Diagnosis } from '../../src/events/diagnosis.js';
import { makeDelta, makeDone, makeError, makeStep } from '../../src/events/engine-event.js';
import { formatSseFrame, SseAdapter } from '../../src/channels/sse-adapter.js';
import { FrameQueue } from '../../src/channels/frame-queue.js';

const silent = { log: () => {} };

describe('formatSseFrame', () => {
  it('is exactly id + data: JSON + blank line, non-ASCII unescaped', () => {
    expect(formatSseFrame(makeDelta('héllo 世界 "q"\n', { seq: 7, traceId: 't' }))).toBe('id: 7\ndata: {"type":"delta","content":"héllo 世界 \\"q\\"\\n"}\n\n');
    expect(formatSseFrame(makeDelta('x'))).toBe('data: {"type":"delta","content":"x"}\n\n');
  });

  it('strips seq/trace_id/tenant_id/claw by default but keeps trace_id on terminal frames', () => {
    const m = { seq: 2, traceId: 'tr', tenantId: 'te', claw: 'web' };
    expect(formatSseFrame(makeStep('tool', { ...m, name: 'n', index: 0 }))).toBe(
      'id: 2\ndata: {"type":"step","step":{"type":"tool","name":"n","args":{},"result":""},"index":0}\n\n',
    );
    expect(formatSseFrame(makeError('e', m))).toBe('id: 2\ndata: {"type":"error","message":"e","trace_id":"tr"}\n\n');
    expect(formatSseFrame(makeDone({ ...m, messageId: 'a', conversationId: 'b' }))).toContain('"generating":false,"trace_id":"tr"}');
  });

  it('keeps all meta with wireMeta', () => {
    expect(formatSseFrame(makeDelta('x', { seq: 1, traceId: 't', claw: 'web' }), { wireMeta: true })).toBe(
      'id: 1\ndata: {"type":"delta","content":"x","seq":1,"trace_id":"t","claw":"web"}\n\n',
    );
  });
});

describe('SseAdapter', () => {
  it('queues frames in order and frames() ends after close(); close is idempotent', async () => {
    const sse = new SseAdapter(null, { traceId: 'run_9', ...silent });
    expect(sse.claw).toBe('web');
    sse.emit(makeDelta('a', { seq: 1 }));
    sse.onEvent({ type: 'delta', content: 'b', seq: 2 });
    sse.emit(makeDone({ messageId: 'm', conversationId: 'c', seq: 3 }));
    sse.close();
    sse.close();
    const got: string[] = [];
    for await (const f of sse.frames()) got.push(f);
    expect(got).toEqual([
      'id: 1\ndata: {"type":"delta","content":"a"}\n\n',
      'id: 2\ndata: {"type":"delta","content":"b"}\n\n',
      // the adapter's trace id fills the terminal frame
      'id: 3\ndata: {"type":"done","message_id":"m","conversation_id":"c","content":"","process_steps":[],"used_skills":[],"used_mcp":[],"generating":false,"trace_id":"run_9"}\n\n',
    ]);
  });

  it('frame(wire) writes a wire object exactly as given', () => {
    const sse = new SseAdapter(null, silent);
    expect(sse.frame({ type: 'delta', content: 'é', seq: 4 })).toBe('id: 4\ndata: {"type":"delta","content":"é","seq":4}\n\n');
    expect(sse.frame({ type: 'error', message: 'x' })).toBe('data: {"type":"error","message":"x"}\n\n');
  });

  it('a reader waiting on frames() receives frames emitted later', async () => {
    const q = new FrameQueue();
    const sse = new SseAdapter(q, silent);
    const reading = (async () => {
      const got: string[] = [];
      for await (const f of sse.frames()) got.push(f);
      return got;
    })();
    await Promise.resolve();
    sse.emit(makeDelta('late'));
    sse.close();
    expect(await reading).toEqual(['data: {"type":"delta","content":"late"}\n\n']);
  });

  it('onFrame gets each frame directly; its failure is swallowed and counted', () => {
    const seen: string[] = [];
    const ok = new SseAdapter(null, { onFrame: (f) => seen.push(f), ...silent });
    ok.emit(makeDelta('x'));
    expect(seen).toEqual(['data: {"type":"delta","content":"x"}\n\n']);
    expect(ok.queue.size).toBe(0);
    const bad = new SseAdapter(null, {
      onFrame: () => {
        throw new Error('socket gone');
      },
      ...silent,
    });
    expect(bad.emit(makeError('e', { diagnosis: new Diagnosis({ code: 'c', severity: 'error', summary: 's' }) }))).toBe(false);
    expect(bad.stats).toEqual({ received: 1, handled: 0, dropped: 0, errors: 1 });
  });

  it.each([[null], [undefined], ['garbage'], [123], [{}], [{ type: 9 }], [{ type: 'nope' }], [[1, 2]]])('drops and counts garbage %j without throwing', (x) => {
    const logged: string[] = [];
    const sse = new SseAdapter(null, { log: (m) => logged.push(m) });
    expect(sse.emit(x)).toBe(false);
    expect(sse.stats.dropped).toBe(1);
    expect(sse.queue.size).toBe(0);
    expect(logged[0]).toMatch(/web adapter dropped/);
  });
});
