/** Past a client's queue bound: a client that reads gets everything, however large; a stalled one is given up on. */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { DRAIN_PIECE_CHARS, SseFrameWriter } from '../../src/server/sse-frame-writer.js';

/** A response whose client takes one written chunk every `everyMs` (reading at its own pace), or never. */
function client(everyMs: number | null): { sink: Writable; received: () => string } {
  const got: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _enc, cb) {
      if (everyMs === null) return;
      setTimeout(() => {
        got.push(chunk);
        cb();
      }, everyMs);
    },
  });
  return { sink, received: () => Buffer.concat(got).toString('utf8') };
}

describe('SseFrameWriter.drain', () => {
  it('delivers a frame far larger than one window can carry to a client that keeps reading', async () => {
    const c = client(30);
    const out = new SseFrameWriter(c.sink);
    // 20 pieces at 30 ms each: about 600 ms of reading, against a 150 ms window
    const frame = `data: ${'x'.repeat(20 * DRAIN_PIECE_CHARS)}\n\n`;
    out.write(frame);
    expect(await out.drain(150)).toBe(true);
    expect(out.queuedBytes).toBeLessThan(16 * 1024);
    await new Promise<void>((r) => c.sink.end(r));
    expect(c.received()).toBe(frame);
  });

  it('gives up on a client that takes nothing for a whole window, having handed over only what fits its buffer', async () => {
    const c = client(null);
    const out = new SseFrameWriter(c.sink);
    out.write('x'.repeat(20 * DRAIN_PIECE_CHARS));
    expect(await out.drain(100)).toBe(false);
    // the rest stays held: a stalled client costs its buffer and one piece, not the whole frame twice
    expect(c.sink.writableLength).toBeLessThanOrEqual(DRAIN_PIECE_CHARS);
  });

  it('gives up when the response is closed while it waits', async () => {
    const c = client(null);
    const out = new SseFrameWriter(c.sink);
    out.write('x'.repeat(4 * DRAIN_PIECE_CHARS));
    const waiting = out.drain(60_000);
    c.sink.destroy();
    expect(await waiting).toBe(false);
  });

  it('still sends a burst of frames as one write at the end of the tick', async () => {
    const writes: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        writes.push(chunk.toString('utf8'));
        cb();
      },
    });
    const out = new SseFrameWriter(sink);
    out.write('a\n\n');
    out.write('b\n\n');
    await new Promise((r) => setImmediate(r));
    expect(writes).toEqual(['a\n\nb\n\n']);
  });
});
