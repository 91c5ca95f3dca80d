/** What a chat bot posts back: the BufferAdapter's assembled reply, split to the channel's limit. */
import type { AgentEvent } from '../events/agent-event.js';
import type { RunServiceApi } from '../runtime/run-service-types.js';
import { createEngineBridge } from '../events/engine-bridge.js';
import { BufferAdapter } from '../channels/buffer-adapter.js';
import { BlockChunker } from '../events/block-chunker.js';
import { runTraceId } from './run-frames.js';

export interface ImReply {
  text: string;
  media: string[];
  /** the event `until` stopped at, when it did */
  stoppedAt?: AgentEvent;
}

/** The run's reply as the IM buffer assembles it; `until` stops early (e.g. at a tool call waiting for approval). */
export async function assembleRunReply(service: RunServiceApi, runId: string, signal?: AbortSignal, until?: (ev: AgentEvent) => boolean): Promise<ImReply> {
  const bridge = createEngineBridge({ traceId: await runTraceId(service, runId) });
  const adapter = new BufferAdapter();
  let stoppedAt: AgentEvent | undefined;
  for await (const ev of service.events(runId, { after: 0, signal })) {
    const e = bridge.translate(ev);
    if (e) await adapter.emit(e);
    if (until?.(ev)) {
      stoppedAt = ev;
      break;
    }
  }
  if (stoppedAt) {
    const partial: unknown = adapter.assemble();
    return { text: typeof partial === 'string' ? partial : '', media: [], stoppedAt };
  }
  const out: unknown = adapter.assemble();
  if (typeof out === 'string') return { text: out, media: [] };
  const o = (out ?? {}) as { text?: unknown; media?: unknown };
  return { text: typeof o.text === 'string' ? o.text : '', media: Array.isArray(o.media) ? o.media.map(String) : [] };
}

/** Splits at paragraph/line/sentence breaks, never inside a code fence (a long fence is closed and reopened). */
export function splitReply(text: string, limit: number): string[] {
  if (text.length <= limit) return text ? [text] : [];
  const chunker = new BlockChunker({ minChars: Math.max(1, Math.floor(limit * 0.6)), maxChars: limit, breakPreference: 'paragraph' });
  const parts = [...chunker.push(text), ...chunker.drain({ force: true })];
  return parts.filter((p) => p.trim() !== '');
}
