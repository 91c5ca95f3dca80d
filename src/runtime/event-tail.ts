/**
 * History then live (RunService.events): events after `after` from events.jsonl, then from the bus,
 * without gap or duplicate, ending after the run's terminal event.
 */
import type { AgentEvent } from '../events/agent-event.js';
import type { AgentEventBus } from '../events/agent-event-bus.js';
import { readEvents } from './event-store.js';

export function isTerminalRunEvent(e: AgentEvent): boolean {
  return e.stream === 'run' && (e.data.type === 'run.completed' || e.data.type === 'run.failed' || e.data.type === 'run.cancelled');
}

/** `bus` is the run's live bus, absent for a run that is not running in this process. */
export async function* tailRunEvents(opts: { file: string; after: number; bus?: AgentEventBus; signal?: AbortSignal }): AsyncGenerator<AgentEvent> {
  const { file, after, bus, signal } = opts;
  if (!bus) {
    for (const e of await readEvents(file, after)) {
      if (signal?.aborted) return;
      yield e;
      if (isTerminalRunEvent(e)) return;
    }
    return;
  }
  // subscribe first, read the file second: the store appends synchronously, so nothing falls between
  const buffered: AgentEvent[] = [];
  let wake: (() => void) | null = null;
  const off = bus.subscribe((e) => {
    buffered.push(e);
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    let last = after;
    for (const e of await readEvents(file, after)) {
      if (signal?.aborted) return;
      last = e.seq;
      yield e;
      if (isTerminalRunEvent(e)) return;
    }
    for (;;) {
      while (buffered.length) {
        const e = buffered.shift()!;
        if (e.seq <= last) continue;
        last = e.seq;
        yield e;
        if (isTerminalRunEvent(e)) return;
      }
      if (signal?.aborted) return;
      await new Promise<void>((r) => (wake = r));
      wake = null;
    }
  } finally {
    off();
    signal?.removeEventListener('abort', onAbort);
  }
}
