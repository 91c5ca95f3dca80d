/**
 * Web claw: one SSE frame per event, `id: <seq>` when known so clients resume with
 * Last-Event-ID. `formatSseFrame` is pure, so the server and `runtrail replay --format sse`
 * produce the very same bytes.
 */
import { EngineEvent, type WireFrame } from '../events/engine-event.js';
import { BaseClawAdapter, type ClawAdapterOptions } from './base-claw-adapter.js';
import { FrameQueue } from './frame-queue.js';

export interface SseFormatOptions {
  /** Keep seq/trace_id/tenant_id/claw in the data; by default only terminal frames keep trace_id. */
  wireMeta?: boolean;
}

export function formatSseFrame(event: EngineEvent, opts: SseFormatOptions = {}): string {
  const id = event.seq ? `id: ${event.seq}\n` : '';
  const mode = opts.wireMeta ? 'all' : event.type === 'done' || event.type === 'error' ? 'trace' : 'none';
  return `${id}data: ${event.toWireJson(mode)}\n\n`;
}

/** The frame that tells clients the stream is over (SseAdapter#frames() stops before it). */
export const SSE_END = '__end__';

export interface SseAdapterOptions extends ClawAdapterOptions, SseFormatOptions {
  /** Called with every frame as it is made (e.g. `(f) => res.write(f)`), in addition to the queue. */
  onFrame?: (frame: string) => void;
}

export class SseAdapter extends BaseClawAdapter {
  readonly claw = 'web';
  readonly queue: FrameQueue;
  private readonly wireMeta: boolean;
  private readonly onFrame?: (frame: string) => void;
  private readonly useQueue: boolean;

  /** Without a queue and with `onFrame`, frames are not queued (nothing would read them). */
  constructor(queue?: FrameQueue | null, opts: SseAdapterOptions = {}) {
    super(opts);
    this.wireMeta = opts.wireMeta ?? false;
    this.onFrame = opts.onFrame;
    this.useQueue = !!queue || !opts.onFrame;
    this.queue = queue ?? new FrameQueue();
  }

  /** An EngineEvent is thinned per the options; a wire object is written as given (`frame(wire)`). */
  frame(event: EngineEvent | WireFrame): string {
    if (event instanceof EngineEvent) return formatSseFrame(event, { wireMeta: this.wireMeta });
    const id = typeof event.seq === 'number' && event.seq > 0 ? `id: ${event.seq}\n` : '';
    return `${id}data: ${JSON.stringify(event)}\n\n`;
  }

  // Without wireMeta only terminal frames carry metadata, so skip the copy for the rest (hot path).
  protected override normalize(ev: EngineEvent): EngineEvent {
    if (!this.wireMeta && ev.type !== 'done' && ev.type !== 'error') return ev;
    return super.normalize(ev);
  }

  protected handle(ev: EngineEvent): void {
    const f = this.frame(ev);
    if (this.useQueue) this.queue.push(f);
    this.onFrame?.(f);
  }

  /** Frames in order; ends after close(). */
  async *frames(): AsyncGenerator<string> {
    for await (const f of this.queue) {
      if (f === SSE_END) return;
      yield f;
    }
  }

  /** Idempotent: ends frames() once the queued frames are read. */
  close(): void {
    this.queue.close();
  }
}
