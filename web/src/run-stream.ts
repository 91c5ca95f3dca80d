/**
 * Follows a run's SSE stream with fetch (so it can send the bearer token), parses it with eventsource-parser,
 * and reconnects by itself with Last-Event-ID after a drop, until the terminal frame arrives.
 */
import { createParser } from 'eventsource-parser';
import { authHeaders } from './api.js';
import type { WireFrame } from './wire-types.js';
export type { WireFrame } from './wire-types.js';

export interface StreamHandlers {
  onFrame(frame: WireFrame, id: number | null): void;
  onState(state: 'connecting' | 'live' | 'reconnecting' | 'closed' | 'not_found'): void;
}

export function followRun(runId: string, h: StreamHandlers): () => void {
  let lastId = 0;
  let retryMs = 2000;
  let stopped = false;
  let finished = false;
  let ctrl: AbortController | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;

  const connect = async (): Promise<void> => {
    if (stopped) return;
    h.onState(lastId ? 'reconnecting' : 'connecting');
    ctrl = new AbortController();
    const parser = createParser({
      onRetry: (ms) => {
        retryMs = ms;
      },
      onEvent: (ev) => {
        let frame: WireFrame;
        try {
          frame = JSON.parse(ev.data) as WireFrame;
        } catch {
          return;
        }
        const id = ev.id !== undefined && /^\d+$/.test(ev.id) ? Number(ev.id) : null;
        if (id !== null) lastId = id;
        if (frame.type === 'done' || (frame.type === 'error' && !isSlowClientError(frame))) finished = true;
        // the frame's seq (its SSE id): a resumed run's discarded text is found by it
        if (id !== null && frame.seq === undefined) frame.seq = id;
        h.onFrame(frame, id);
      },
    });
    try {
      const headers: Record<string, string> = { ...authHeaders(), accept: 'text/event-stream' };
      if (lastId) headers['last-event-id'] = String(lastId);
      const res = await fetch(`/api/runs/${encodeURIComponent(runId)}/events`, { headers, signal: ctrl.signal });
      // an unknown run stays unknown: say so once instead of retrying forever
      if (res.status === 404) {
        h.onState('not_found');
        return;
      }
      if (!res.ok || !res.body) throw new Error(`stream ${res.status}`);
      h.onState('live');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
      }
    } catch {
      /* dropped: reconnect below */
    }
    if (stopped) return;
    if (finished) {
      h.onState('closed');
      return;
    }
    timer = setTimeout(() => void connect(), retryMs);
  };

  void connect();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    ctrl?.abort();
  };
}

function isSlowClientError(frame: WireFrame): boolean {
  const d = frame.diagnosis as { code?: string } | undefined;
  return d?.code === 'client_too_slow';
}
