/**
 * History then live (RunService.events): events after `after` from events.jsonl, then from the bus,
 * without gap or duplicate, ending after the run's terminal event.
 */
import { isTerminalRunEvent, type AgentEvent } from '../../events/agent-event.js';
import type { AgentEventBus } from '../../events/agent-event-bus.js';
import { readEvents } from './event-store.js';

export { isTerminalRunEvent };

export interface TailOptions {
  file: string;
  after: number;
  signal?: AbortSignal;
  /** without a bus: whether to keep polling the file (the run is live in another process) */
  follow?: () => Promise<boolean>;
  pollMs?: number;
}

/** A run live in this process: its bus, and the events its store has not written yet (EventStore#unwritten),
 *  which a reader needs beside the file: they are in neither the file nor the bus's later events. */
export interface LiveTail {
  bus: AgentEventBus;
  unwritten: (after: number) => AgentEvent[];
}

export async function* tailRunEvents(opts: TailOptions & (LiveTail | { bus?: undefined; unwritten?: undefined })): AsyncGenerator<AgentEvent> {
  const { file, after, bus, signal } = opts;
  if (!bus) {
    // a run live in another process: follow its file until the terminal event (or the owner dies)
    let last = after;
    // one more read after the owner is seen finished: it may have appended its last events (and the
    // terminal one) between our read and the status check
    let finalRead = false;
    for (;;) {
      for (const e of await readEvents(file, last)) {
        if (signal?.aborted) return;
        last = e.seq;
        yield e;
        if (isTerminalRunEvent(e)) return;
      }
      if (finalRead || !opts.follow || signal?.aborted) return;
      if (!(await opts.follow())) {
        finalRead = true;
        continue;
      }
      await new Promise<void>((r) => {
        const t = setTimeout(done, opts.pollMs ?? 250);
        function done() {
          clearTimeout(t);
          signal?.removeEventListener('abort', done);
          r();
        }
        signal?.addEventListener('abort', done, { once: true });
      });
    }
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
  // what the store has not written at this moment (a burst's lines wait for a microtask; a full disk
  // holds lines back): taken before the file is read, since a small file is read at once and the
  // lines written after the read would otherwise be in neither. A line in both is skipped by seq.
  const held = opts.unwritten(after);
  try {
    let last = after;
    for (const e of await readEvents(file, after)) {
      if (signal?.aborted) return;
      last = e.seq;
      yield e;
      if (isTerminalRunEvent(e)) return;
    }
    // the file is a prefix of the run; the rest of what came before the subscription comes from the store
    for (const e of held) {
      if (signal?.aborted) return;
      if (e.seq <= last) continue;
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
