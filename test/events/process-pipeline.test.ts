import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createOperationReporter } from '../../src/events/operation-reporter.js';
import { createProcessPipeline } from '../../src/events/process-pipeline.js';
import type { RuntimeProcessEvent } from '../../src/events/process-event.js';
import { makeProcessEvent } from '../../src/events/process-event-factory.js';
import { appendRuntimeProcessLog, appendRuntimeProcessLogSync, runtimeProcessLogPath } from '../../src/events/runtime-process-log.js';

const dirs: string[] = [];
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'rt-proc-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const readLines = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as RuntimeProcessEvent);

describe('appendRuntimeProcessLog', () => {
  it('appends one JSON line per event at the documented path and returns a reference', async () => {
    const dataDir = tmp();
    const event = makeProcessEvent({ operationId: 'op1', targetType: 'skill', source: 'skill', status: 'started' });
    const ref = await appendRuntimeProcessLog({ dataDir, sessionId: 'conv_1', operationId: 'op1', event });
    appendRuntimeProcessLogSync({ dataDir, sessionId: 'conv_1', operationId: 'op1', event: { ...event, status: 'completed' } });
    expect(ref).toEqual({
      type: 'runtime_process_log',
      sessionId: 'conv_1',
      operationId: 'op1',
      path: join(dataDir, 'process-events', 'conv_1', 'op1.jsonl'),
    });
    expect(readLines(ref.path).map((e) => e.status)).toEqual(['started', 'completed']);
  });

  it('makes the folder again when it was removed between two lines', async () => {
    const dataDir = tmp();
    const event = makeProcessEvent({ operationId: 'op2', targetType: 'tool', source: 'tool', status: 'started' });
    const ref = await appendRuntimeProcessLog({ dataDir, sessionId: 'conv_2', operationId: 'op2', event });
    rmSync(join(dataDir, 'process-events', 'conv_2'), { recursive: true });
    await appendRuntimeProcessLog({ dataDir, sessionId: 'conv_2', operationId: 'op2', event: { ...event, status: 'completed' } });
    expect(readLines(ref.path).map((e) => e.status)).toEqual(['completed']);
  });

  it.each([['../x'], ['a/b'], ['..'], ['.hidden'], [''], ['a\\b'], ['x'.repeat(300)]])('rejects unsafe id %j', async (id) => {
    const dataDir = tmp();
    const event = makeProcessEvent({ operationId: 'op', targetType: 'tool', source: 'tool', status: 'started' });
    await expect(appendRuntimeProcessLog({ dataDir, sessionId: id, operationId: 'op', event })).rejects.toThrow(/sessionId/);
    expect(() => runtimeProcessLogPath(dataDir, 's', id)).toThrow(/operationId/);
  });

  it('does not crash on a payload with a cycle or bigint', async () => {
    const dataDir = tmp();
    const payload: Record<string, unknown> = { n: 1n };
    payload.me = payload;
    const event = { ...makeProcessEvent({ operationId: 'op', targetType: 'tool', source: 'tool', status: 'running' }), payload };
    const ref = await appendRuntimeProcessLog({ dataDir, sessionId: 's', operationId: 'op', event });
    expect(readLines(ref.path)[0].payload).toEqual({ n: '1', me: '[circular]' });
  });

  it('scrubs secrets and bounds huge values of a hand-built event', async () => {
    const dataDir = tmp();
    const base = makeProcessEvent({ operationId: 'op', targetType: 'tool', source: 'tool', status: 'running' });
    const event = { ...base, payload: { password: 'hunter2', blob: 'z'.repeat(5_000_000), odd: Symbol('s') } };
    const ref = await appendRuntimeProcessLog({ dataDir, sessionId: 's', operationId: 'op', event });
    const text = readFileSync(ref.path, 'utf8');
    expect(text).not.toContain('hunter2');
    expect(text.length).toBeLessThan(10_000);
    expect(readLines(ref.path)[0].payload).toMatchObject({ odd: 'Symbol(s)' });
  });
});

describe('createOperationReporter', () => {
  it('reports start/stage/progress/complete with sticky stage and totals', () => {
    const out: RuntimeProcessEvent[] = [];
    const r = createOperationReporter({ operationId: 'op', targetType: 'skill', source: 'skill', sink: (e) => out.push(e), now: () => 5 });
    r.start('go');
    r.stage('detect', 'detecting');
    r.progress({ current: 2, total: 4 });
    r.complete('done');
    r.fail('too late');
    expect(out.map((e) => [e.status, e.stage, e.current, e.percent, e.message])).toEqual([
      ['started', undefined, undefined, undefined, 'go'],
      ['running', 'detect', undefined, undefined, 'detecting'],
      ['running', 'detect', 2, 50, undefined],
      ['completed', 'detect', 4, 100, 'done'],
    ]);
  });

  it('child() creates sub-operations that name their parent', () => {
    const out: RuntimeProcessEvent[] = [];
    const r = createOperationReporter({ operationId: 'op', targetType: 'tool', source: 'tool', sink: (e) => out.push(e) });
    const c = r.child({ targetType: 'subagent', source: 'subagent', message: 'sub' });
    c.fail('nope', { apiKey: 'k', why: 'x' });
    expect(c.operationId).toBe('op.1');
    expect(out.map((e) => [e.operationId, e.parentOperationId, e.status, e.level])).toEqual([
      ['op.1', 'op', 'started', 'info'],
      ['op.1', 'op', 'failed', 'error'],
    ]);
    expect(out[1].payload).toEqual({ why: 'x' });
  });

  it('drops an invalid update (told to onInvalid) without breaking the tool or later updates', () => {
    const out: RuntimeProcessEvent[] = [];
    const bad: unknown[] = [];
    const r = createOperationReporter({ operationId: 'op', targetType: 'tool', source: 'tool', sink: (e) => out.push(e), onInvalid: (e) => bad.push(e) });
    r.progress({ current: 1, total: 4 });
    expect(() => r.progress({ current: Number.NaN })).not.toThrow();
    expect(() => r.stage(42 as never)).not.toThrow();
    r.progress({ current: 2 });
    expect(() => r.complete(7 as never)).not.toThrow();
    expect(bad).toHaveLength(3);
    expect(String(bad[0])).toMatch(/current must be a finite number/);
    expect(out.map((e) => [e.status, e.current, e.percent])).toEqual([
      ['running', 1, 25],
      ['running', 2, 50],
      ['completed', undefined, undefined],
    ]);
  });

  it('rejects a bad targetType at creation', () => {
    expect(() => createOperationReporter({ targetType: 'x' as never, source: 'tool', sink: () => {} })).toThrow(/targetType must be one of/);
  });
});

describe('createProcessPipeline', () => {
  it('wires reporter → throttle → per-operation log + publish, in order', async () => {
    const dataDir = tmp();
    const published: RuntimeProcessEvent[] = [];
    const p = createProcessPipeline({ dataDir, sessionId: 'conv', publish: (e) => published.push(e), now: () => 0 });
    const r = p.reporter({ operationId: 'op', targetType: 'tool', source: 'tool' });
    r.start();
    for (let i = 1; i <= 50; i++) r.progress({ current: i, total: 50 });
    const c = r.child({ targetType: 'task', source: 'tool', message: 'child' });
    c.complete();
    r.complete();
    await p.flush();
    expect(published.map((e) => `${e.operationId}:${e.status}:${e.current ?? ''}`)).toEqual([
      'op:started:',
      'op.1:started:',
      'op.1:completed:',
      'op:running:50',
      'op:completed:50',
    ]);
    const logged = readLines(join(dataDir, 'process-events', 'conv', 'op.jsonl'));
    expect(logged.map((e) => e.status)).toEqual(['started', 'running', 'completed']);
    expect(
      p
        .logRefs()
        .map((x) => x.operationId)
        .sort(),
    ).toEqual(['op', 'op.1']);
    await p.dispose();
  });

  it('writes every event of a burst to the log, in order, also those that arrive while a write is in flight', async () => {
    const dataDir = tmp();
    const p = createProcessPipeline({ dataDir, sessionId: 'conv', publish: () => undefined, intervalMs: 0 });
    for (let i = 0; i < 30; i++) {
      p.push(makeProcessEvent({ operationId: 'burst', targetType: 'tool', source: 'tool', status: 'running', message: `m${i}` }));
      if (i % 7 === 0) await new Promise((r) => setImmediate(r)); // some arrive mid-write
    }
    await p.flush();
    expect(readLines(runtimeProcessLogPath(dataDir, 'conv', 'burst')).map((e) => e.message)).toEqual(Array.from({ length: 30 }, (_, i) => `m${i}`));
  });

  it('counts a publish that throws and an unsafe operation id instead of crashing the tool', async () => {
    const dataDir = tmp();
    const p = createProcessPipeline({
      dataDir,
      sessionId: 'conv',
      publish: () => {
        throw new Error('bus gone');
      },
    });
    const r = p.reporter({ operationId: '../evil', targetType: 'tool', source: 'tool' });
    expect(() => r.start()).not.toThrow();
    await p.dispose();
    expect(p.errors).toBe(2);
  });

  it('rejects an unsafe sessionId up front', () => {
    expect(() => createProcessPipeline({ dataDir: tmp(), sessionId: '../x', publish: () => {} })).toThrow(/sessionId/);
  });
});
