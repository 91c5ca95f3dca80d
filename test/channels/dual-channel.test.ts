import { describe, expect, it } from 'vitest';
import { BufferAdapter } from '../../src/channels/buffer-adapter.js';
import { SseAdapter } from '../../src/channels/sse-adapter.js';
import { createEngineBridge } from '../../src/events/engine-bridge.js';
import { sampleRun } from '../events/sample-run.js';

const silent = { log: () => {} };

/** What a web client ends up showing: deltas concatenated, or done.content when present. */
function webContent(frames: string[]): { text: string; done: string } {
  let text = '';
  let done = '';
  for (const f of frames) {
    const data = JSON.parse(
      f
        .split('\n')
        .find((l) => l.startsWith('data: '))!
        .slice(6),
    ) as { type: string; content?: string };
    if (data.type === 'delta') text += data.content;
    if (data.type === 'done') done = data.content ?? '';
  }
  return { text, done };
}

describe('dual channel', () => {
  it('the same run fed to SseAdapter and BufferAdapter yields the same content', async () => {
    const bridge = createEngineBridge({ traceId: 'run_1' });
    const sse = new SseAdapter(null, silent);
    const buf = new BufferAdapter({ keepDiagnosis: false, ...silent });
    for (const ev of sampleRun()) {
      const e = bridge.translate(ev);
      if (!e) continue;
      sse.emit(e);
      buf.emit(e);
    }
    sse.close();
    const frames: string[] = [];
    for await (const f of sse.frames()) frames.push(f);
    const web = webContent(frames);
    expect(web.done).toBe('Hello, 世界 Done.');
    expect(buf.assemble()).toBe(web.done);
    expect(web.text).toBe('Hello, 世界Done.');
    expect(sse.stats.errors + buf.stats.errors + sse.stats.dropped + buf.stats.dropped).toBe(0);
  });

  it('without done.content both channels show the streamed deltas', () => {
    const bridge = createEngineBridge({ traceId: 'run_1' });
    const sseFrames: string[] = [];
    const sse = new SseAdapter(null, { onFrame: (f) => sseFrames.push(f), ...silent });
    const buf = new BufferAdapter(silent);
    for (const ev of sampleRun().filter((e) => e.stream === 'assistant')) {
      const e = bridge.translate(ev);
      if (e) {
        sse.emit(e);
        buf.emit(e);
      }
    }
    expect(buf.assemble()).toBe(webContent(sseFrames).text);
  });
});
