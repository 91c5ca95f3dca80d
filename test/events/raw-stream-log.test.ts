import { mkdtempSync, readFileSync, rmSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentEventBus } from '../../src/events/agent-event-bus.js';
import { createRawStreamLogger, rawStreamLogPath } from '../../src/events/raw-stream-log.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = mkdtempSync(join(tmpdir(), 'rt-raw-'));
  dirs.push(d);
  return d;
};

describe('raw stream log', () => {
  it('is off (null) unless RUNTRAIL_RAW_STREAM is truthy', () => {
    expect(createRawStreamLogger({ dataDir: tmp(), env: {} })).toBeNull();
    expect(createRawStreamLogger({ dataDir: tmp(), env: { RUNTRAIL_RAW_STREAM: '0' } })).toBeNull();
  });

  it('appends deltas and message ends to <dataDir>/logs/raw-stream.jsonl', () => {
    const dataDir = tmp();
    const log = createRawStreamLogger({ dataDir, env: { RUNTRAIL_RAW_STREAM: '1' } });
    expect(log).not.toBeNull();
    const bus = new AgentEventBus({ runId: 'run_x', now: () => 9 });
    bus.subscribe(log!);
    bus.publish('reasoning', { text: 'hm', delta: 'hm' });
    bus.publish('assistant', { text: 'Hel', delta: 'Hel' });
    bus.publish('tool', { phase: 'start', name: 't', toolCallId: 'c', args: {} });
    bus.publish('assistant', { text: 'Hello', delta: 'lo' });
    bus.publish('assistant', { phase: 'end', text: 'Hello', delta: '' });
    const lines = readFileSync(join(dataDir, 'logs', 'raw-stream.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.event)).toEqual(['reasoning_stream', 'assistant_text_stream', 'assistant_text_stream', 'assistant_message_end']);
    expect(lines[1]).toEqual({ ts: 9, event: 'assistant_text_stream', runId: 'run_x', seq: 2, evtType: 'text_delta', delta: 'Hel' });
    expect(lines[3].rawText).toBe('Hello');
  });

  it('honours RUNTRAIL_RAW_STREAM_PATH and never throws on a bad path', () => {
    const dataDir = tmp();
    const p = join(dataDir, 'custom', 'raw.jsonl');
    expect(rawStreamLogPath(dataDir, { RUNTRAIL_RAW_STREAM_PATH: p })).toBe(p);
    const errors: unknown[] = [];
    // a regular file where a directory should be
    writeFileSync(join(dataDir, 'blocker'), 'x');
    const badPath = join(dataDir, 'blocker', 'raw.jsonl');
    const bad = createRawStreamLogger({ dataDir, env: { RUNTRAIL_RAW_STREAM: 'true', RUNTRAIL_RAW_STREAM_PATH: badPath }, onError: (e) => errors.push(e) });
    const bus = new AgentEventBus({ runId: 'r' });
    bus.subscribe(bad!);
    expect(() => bus.publish('assistant', { text: 'a', delta: 'a' })).not.toThrow();
    expect(errors.length).toBe(1);
    expect(existsSync(join(dataDir, 'logs'))).toBe(false);
  });
});
