import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../../src/providers/model-provider.js';
import { readCheckpointFile } from '../../../src/runtime/checkpoint/checkpoint-log.js';
import type { CheckpointRecord } from '../../../src/runtime/checkpoint/checkpoint-records.js';
import { loadCheckpoint } from '../../../src/runtime/checkpoint/resume-point.js';
import { RunCheckpoint, type CheckpointState } from '../../../src/runtime/checkpoint/run-checkpoint.js';
import { RunMetrics } from '../../../src/runtime/metrics/run-metrics.js';

const dirs: string[] = [];
function file(): string {
  const d = mkdtempSync(join(tmpdir(), 'rt-runckpt-'));
  dirs.push(d);
  return join(d, 'checkpoint.jsonl');
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const loop = (toolCalls: number) => ({ toolCalls, lastText: '', answerPrefix: '', continuations: 0, callCounter: 0 });

function state(messages: ChatMessage[], metrics: RunMetrics, toolCalls = 0, provider?: unknown): CheckpointState {
  return { messages, loop: loop(toolCalls), metrics: metrics.snapshot(), turns: metrics.takeNewLines(), ...(provider !== undefined ? { provider } : {}) };
}

describe('run checkpoint', () => {
  it('rebuilds the conversation with provider metadata, counters, model position and the call journal', async () => {
    const f = file();
    let seq = 3;
    const cp = new RunCheckpoint(f, { lastSeq: () => seq, usedBeforeMs: 1000 });
    const metrics = new RunMetrics();
    const messages: ChatMessage[] = [{ role: 'user', content: 'goal' }];
    cp.base('SYSTEM', state(messages, metrics, 0, { next: 0 }));
    metrics.iterations = 1;
    metrics.recordTurn({
      latencyMs: 5,
      firstTokenMs: 1,
      tokens: { input: 10, output: 4, cached_input: 0, cache_write: 0, reasoning: 0 },
      costUsd: 0.01,
      model: 'script:x',
      turn: 1,
      attempt: 0,
      startedAt: new Date(0),
      finishReason: 'tool-calls',
    });
    messages.push({
      role: 'assistant',
      content: '',
      toolCalls: [
        { id: 'c1', name: 'send', args: { to: 'a' } },
        { id: 'c2', name: 'send', args: { to: 'b' } },
      ],
      reasoning: [{ text: 'think', signature: 'sig-1' }] as never,
    });
    seq = 9;
    cp.step('SYSTEM', state(messages, metrics, 0, { next: 1 }));
    await cp.callStarted('c1', 'send', { to: 'a' }, true);
    cp.callFinished('c1', 'send', { ok: true, content: 'sent to a', details: { n: 1 } });
    messages.push({ role: 'tool', toolCallId: 'c1', toolName: 'send', content: 'sent to a', isError: false });
    metrics.recordTool('send', true, 3);
    seq = 12;
    cp.step('SYSTEM', state(messages, metrics, 1, { next: 1 }));
    await cp.callStarted('c2', 'send', { to: 'b' }, true);
    cp.approval('c3', { id: 'apr_1', status: 'pending' });
    cp.message({ id: 'msg_1', mode: 'steer', text: 'hurry', from: 'api' });
    cp.message({ id: 'msg_2', mode: 'steer', text: 'and tidy', from: 'web' });
    cp.delivered(['msg_1']);
    await cp.close();

    // a result is written once: in its call's finished record, not again in the conversation
    expect(readFileSync(f, 'utf8').split('sent to a').length - 1).toBe(1);
    const r = loadCheckpoint(f);
    expect(r.ok && r.point !== null).toBe(true);
    if (!r.ok || !r.point) return;
    const p = r.point;
    expect(p.system).toBe('SYSTEM');
    expect(p.messages).toEqual(messages);
    expect((p.messages[1] as { reasoning: unknown }).reasoning).toEqual([{ text: 'think', signature: 'sig-1' }]);
    expect(p.loop.toolCalls).toBe(1);
    expect(p.provider).toEqual({ next: 1 });
    expect(p.seq).toBe(12);
    expect(p.usedMs).toBeGreaterThanOrEqual(1000);
    expect(p.calls.get('c1')).toEqual({ name: 'send', args: { to: 'a' }, result: { ok: true, content: 'sent to a', details: { n: 1 } } });
    expect(p.calls.get('c2')).toEqual({ name: 'send', args: { to: 'b' } });
    expect(p.approvals.get('c3')).toEqual({ id: 'apr_1', status: 'pending' });
    expect(p.queued.map((m) => m.id)).toEqual(['msg_2']);
    const back = new RunMetrics();
    back.restore(p.metrics, p.turns);
    const m = back.toFile({ runId: 'r', status: 'completed', durationMs: 1, stages: {}, events: 1 });
    expect(m.iterations).toBe(1);
    expect(m.tokens.input).toBe(10);
    expect(m.tool_calls.total).toBe(1);
    expect(back.turnLines().trim().split('\n')).toHaveLength(1);
  });

  it('a compaction writes the conversation whole again; the resume starts from it', async () => {
    const f = file();
    const cp = new RunCheckpoint(f, { lastSeq: () => 1 });
    const metrics = new RunMetrics();
    const messages: ChatMessage[] = [
      { role: 'user', content: 'goal' },
      { role: 'assistant', content: 'a' },
      { role: 'user', content: 'more' },
    ];
    cp.base('S', state(messages, metrics));
    const compacted: ChatMessage[] = [{ role: 'user', content: 'summary' }];
    cp.step('S', state(compacted, metrics));
    compacted.push({ role: 'assistant', content: 'b' });
    cp.step('S', state(compacted, metrics));
    await cp.close();
    const r = loadCheckpoint(f);
    expect(r.ok && r.point?.messages).toEqual(compacted);
  });

  it('a run killed before its first checkpoint starts again from its request, its attempts and queued messages kept', async () => {
    expect(loadCheckpoint(file())).toMatchObject({ ok: true, point: null, start: { resumes: 0, queued: [] } });
    const f = file();
    const cp = new RunCheckpoint(f, { lastSeq: () => 4 });
    cp.resumed(1, 4);
    cp.message({ id: 'm1', mode: 'steer', text: 'also b', from: 'api' });
    await cp.close();
    const r = loadCheckpoint(f);
    expect(r).toMatchObject({ ok: true, point: null, start: { resumes: 1, queued: [{ id: 'm1', text: 'also b' }] } });
  });

  it('a damaged record fails the load with the line and the reason, never a shorter conversation', async () => {
    const f = file();
    const cp = new RunCheckpoint(f, { lastSeq: () => 1 });
    const metrics = new RunMetrics();
    const messages: ChatMessage[] = [{ role: 'user', content: 'goal' }];
    cp.base('S', state(messages, metrics));
    messages.push({ role: 'assistant', content: 'first answer' });
    cp.step('S', state(messages, metrics));
    messages.push({ role: 'user', content: 'again' });
    cp.step('S', state(messages, metrics));
    await cp.close();
    const lines = readFileSync(f, 'utf8').split('\n');
    lines[1] = lines[1].replace('first answer', 'first answes');
    writeFileSync(f, lines.join('\n'));
    const r = loadCheckpoint(f);
    expect(r).toMatchObject({ ok: false, code: 'checkpoint_corrupt', summary: "the run's checkpoint is damaged at line 2" });
    expect(!r.ok && r.detail).toMatch(/checksum/);
  });

  it('a torn last record is left out: the resume starts from the record before it', async () => {
    const f = file();
    const cp = new RunCheckpoint(f, { lastSeq: () => 1 });
    const metrics = new RunMetrics();
    const messages: ChatMessage[] = [{ role: 'user', content: 'goal' }];
    cp.base('S', state(messages, metrics));
    await cp.close();
    appendFileSync(f, '0badc0de {"k":"step","add":[{"role":"assis');
    const r = loadCheckpoint(f);
    expect(r.ok && r.point?.messages).toEqual(messages);
    expect(r.ok && r.point?.tornTail).toBe(true);
  });

  it('the results of parallel calls that arrive together are one step record: every result, the state of the last', async () => {
    const f = file();
    let seq = 1;
    const cp = new RunCheckpoint(f, { lastSeq: () => seq });
    const metrics = new RunMetrics();
    const calls = ['c1', 'c2', 'c3'].map((id, i) => ({ id, name: 'peek', args: { n: i } }));
    const messages: ChatMessage[] = [
      { role: 'user', content: 'goal' },
      { role: 'assistant', content: '', toolCalls: calls },
    ];
    cp.base('S', state(messages, metrics));
    await cp.durable();
    for (const c of calls) cp.callStarted(c.id, c.name, c.args, false);
    for (const c of calls) cp.callFinished(c.id, c.name, { ok: true, content: `seen ${c.id}` });
    // the loop takes the results in one go, a step after each
    for (const [i, c] of calls.entries()) {
      messages.push({ role: 'tool', toolCallId: c.id, toolName: c.name, content: `seen ${c.id}`, isError: false });
      metrics.recordTool(c.name, true, 1);
      seq = 10 + i;
      cp.step('S', state(messages, metrics, i + 1));
    }
    await cp.close();

    const read = readCheckpointFile<CheckpointRecord>(f);
    const kinds = read.ok ? read.records.map((r) => (r.k === 'call' ? `${r.phase} ${r.id}` : r.k)) : [];
    expect(kinds).toEqual(['base', 'started c1', 'started c2', 'started c3', 'finished c1', 'finished c2', 'finished c3', 'step']);
    const r = loadCheckpoint(f);
    expect(r.ok && r.point !== null).toBe(true);
    if (!r.ok || !r.point) return;
    expect(r.point.messages).toEqual(messages);
    expect(r.point.loop.toolCalls).toBe(3);
    expect(r.point.metrics.toolsByName).toEqual({ peek: 3 });
    expect(r.point.seq).toBe(12);
  });

  it('a record appended between two steps keeps them apart, in the order they came', async () => {
    const f = file();
    const cp = new RunCheckpoint(f, { lastSeq: () => 1 });
    const metrics = new RunMetrics();
    const messages: ChatMessage[] = [
      { role: 'user', content: 'goal' },
      {
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'c1', name: 'send', args: {} },
          { id: 'c2', name: 'send', args: {} },
        ],
      },
    ];
    cp.base('S', state(messages, metrics));
    cp.callStarted('c1', 'send', {}, false);
    cp.callFinished('c1', 'send', { ok: true, content: 'sent 1' });
    messages.push({ role: 'tool', toolCallId: 'c1', toolName: 'send', content: 'sent 1', isError: false });
    cp.step('S', state(messages, metrics, 1));
    const durable = cp.callStarted('c2', 'send', {}, true);
    // the step before it is on the disk with it, in its place
    await durable;
    const read = readCheckpointFile<CheckpointRecord>(f);
    const kinds = read.ok ? read.records.map((r) => (r.k === 'call' ? `${r.phase} ${r.id}` : r.k)) : [];
    expect(kinds).toEqual(['base', 'started c1', 'finished c1', 'step', 'started c2']);
    await cp.close();
    const r = loadCheckpoint(f);
    expect(r.ok && r.point?.messages).toEqual(messages);
    expect(r.ok && r.point?.calls.get('c2')).toEqual({ name: 'send', args: {} });
  });

  it('a step that adds a model turn is written as it was then: a handler changing its arguments after does not change it', async () => {
    const f = file();
    const cp = new RunCheckpoint(f, { lastSeq: () => 1 });
    const metrics = new RunMetrics();
    const args = { to: 'a' };
    const messages: ChatMessage[] = [{ role: 'user', content: 'goal' }];
    cp.base('S', state(messages, metrics));
    messages.push({ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'send', args }] });
    cp.step('S', state(messages, metrics));
    args.to = 'changed by the handler';
    await cp.close();
    const r = loadCheckpoint(f);
    expect(r.ok && r.point?.messages[1]).toEqual({ role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'send', args: { to: 'a' } }] });
  });
});
