import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeAgentEvent } from '../../../src/events/agent-event-factory.js';
import type { AgentEvent } from '../../../src/events/agent-event.js';
import { eventLine } from '../../../src/runtime/storage/event-line.js';
import { parseEventLines } from '../../../src/runtime/storage/event-store.js';
import { RUN_FILES } from '../../../src/runtime/storage/run-files.js';
import { STREAM_TRACE_BYTES, traceChunks, traceText, writeTrace } from '../../../src/runtime/storage/trace-file.js';

const RUN = 'run_20260101_000000_000001';

/** What the projection has always written: each line parsed, then written again as one trace object. */
function reference(eventsText: string): string {
  const lines = parseEventLines(eventsText).map((ev) => {
    const d = ev.data as unknown as Record<string, unknown>;
    const name = ev.stream === 'run' ? String(d.type) : `${ev.stream}.${String(d.phase ?? 'update')}`;
    return JSON.stringify({ timestamp: new Date(ev.ts).toISOString(), run_id: RUN, seq: ev.seq, event: name, payload: ev.data });
  });
  return lines.length ? `${lines.join('\n')}\n` : '';
}

// the data shapes are the wire's; the projection must not care which, so they are made loosely here
const ev = (seq: number, stream: AgentEvent['stream'], data: unknown): AgentEvent => makeAgentEvent(RUN, seq, 1_767_225_600_000 + seq, stream, data as never);

function sampleEvents(): AgentEvent[] {
  return [
    ev(1, 'run', { type: 'run.created', runId: RUN, plugin: 'talk', goal: 'say "hi" \\ 你好\u2028', conversationId: RUN }),
    ev(2, 'run', { type: 'run.state', from: null, to: 'queued' }),
    ev(3, 'process', { event: { operationId: 'op_1', status: 'started', phase: 'inner' } }),
    ev(4, 'assistant', { phase: 'update', text: 'Hello wor', delta: 'wor' }),
    ev(5, 'assistant', { text: 'no phase first', phase: 'end' }),
    ev(6, 'tool', { phase: 'start', name: 'exec', toolCallId: 'c1', args: { cmd: ['ls', '-la'], n: 1.5e21 } }),
    ev(7, 'lifecycle', { reason: 'no phase at all' }),
    ev(8, 'run', { status: 'completed', type: 'run.completed', usage: { input: 1, output: -0 } }),
    ev(9, 'run', { type: 'notice', text: 'emoji 😀 and "quotes"' }),
    ev(10, 'run', { phase: 'first', type: 'run.named.by.type' }),
    ev(11, 'tool', { type: 'first', phase: 'result' }),
  ];
}

let dir: string | null = null;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = null;
});

describe('trace.jsonl', () => {
  it('projects every events.jsonl line exactly as parsing and re-writing it did: names, payloads, timestamps', () => {
    const text = sampleEvents()
      .map((e) => `${eventLine(e)}\n`)
      .join('');
    expect(traceText(text, RUN)).toBe(reference(text));
    const lines = traceText(text, RUN)
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { event: string; seq: number });
    expect(lines.map((l) => l.event)).toEqual([
      'run.created',
      'run.state',
      'process.update',
      'assistant.update',
      'assistant.end',
      'tool.start',
      'lifecycle.update',
      'run.completed',
      'notice',
      'run.named.by.type',
      'tool.result',
    ]);
  });

  it('leaves out a torn last line and a line that is not an event, as the parser does', () => {
    const whole = sampleEvents()
      .map((e) => `${eventLine(e)}\n`)
      .join('');
    const torn = `${whole}${eventLine(ev(10, 'assistant', { phase: 'update', text: 'cut here' })).slice(0, 60)}`;
    expect(traceText(torn, RUN)).toBe(reference(torn));
    const junk = `${whole}not json\n{"runId":"x","seq":0,"ts":1,"stream":"run","data":{"type":"zero"}}\n{"runId":"x","seq":12,"ts":1,"stream":"run","data":{"type":"torn"\n${whole}`;
    expect(traceText(junk, RUN)).toBe(reference(junk));
    expect(traceText('', RUN)).toBe('');
  });

  it('writeTrace writes runtime/trace.jsonl from runtime/events.jsonl, and nothing when there is no events file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rt-trace-'));
    mkdirSync(join(dir, 'runtime'));
    await writeTrace(dir, RUN);
    expect(() => readFileSync(join(dir as string, RUN_FILES.trace))).toThrow();
    const text = sampleEvents()
      .map((e) => `${eventLine(e)}\n`)
      .join('');
    writeFileSync(join(dir, 'runtime', 'events.jsonl'), text);
    await writeTrace(dir, RUN);
    expect(readFileSync(join(dir, RUN_FILES.trace), 'utf8')).toBe(reference(text));
  });

  it('projects a log that arrives in pieces exactly as the whole text, wherever the pieces are cut', async () => {
    const whole = sampleEvents()
      .map((e) => `${eventLine(e)}\n`)
      .join('');
    const text = `${whole}${whole}${eventLine(ev(12, 'assistant', { phase: 'update', text: 'torn' })).slice(0, 50)}`;
    const joined = async (pieces: string[]) => {
      let out = '';
      for await (const t of traceChunks(
        (async function* () {
          yield* pieces;
        })(),
        RUN,
      ))
        out += t;
      return out;
    };
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) % n;
    for (let round = 0; round < 50; round++) {
      const pieces: string[] = [];
      for (let at = 0; at < text.length; ) {
        const len = 1 + rand(round % 2 ? 40 : 600); // pieces shorter and longer than a line
        pieces.push(text.slice(at, at + len));
        at += len;
      }
      expect(await joined(pieces)).toBe(traceText(text, RUN));
    }
    expect(await joined([])).toBe('');
  });

  it('writeTrace streams a log over STREAM_TRACE_BYTES and writes the same trace, multi-byte text across chunk edges included', async () => {
    dir = mkdtempSync(join(tmpdir(), 'rt-trace-'));
    mkdirSync(join(dir, 'runtime'));
    const lines: string[] = [];
    for (let seq = 1, text = ''; lines.join('').length < 3 * STREAM_TRACE_BYTES; seq++) {
      text += seq % 3 ? '分析 ' : 'phản hồi 😀 ';
      lines.push(`${eventLine(ev(seq, 'assistant', { phase: 'update', text, delta: 'x' }))}\n`);
    }
    const text = `${lines.join('')}${lines[0].slice(0, 30)}`;
    writeFileSync(join(dir, 'runtime', 'events.jsonl'), text);
    await writeTrace(dir, RUN);
    expect(readFileSync(join(dir, RUN_FILES.trace), 'utf8')).toBe(reference(text));
  });
});
