/**
 * Live events to every reader (the EventFanout seam, one of the three a cluster swaps): `follow` gives a run's events after a
 * seq — history, then live — with no gap and no duplicate, ending after its terminal event.
 * Locally the live part is the run's bus in this process (or its file, followed, when another
 * process runs it); a shared fan-out (Redis Streams) carries the events between nodes.
 */
import type { AgentEvent } from '../../events/agent-event.js';
import type { AgentEventBus } from '../../events/agent-event-bus.js';
import { RunFolder } from './run-folder.js';
import { tailRunEvents } from './event-tail.js';
import type { RunEventLog } from './run-store.js';

export interface EventFanout {
  /** Makes an event the store has made durable visible to the run's followers everywhere. */
  publish(runId: string, event: AgentEvent): void;
  follow(runId: string, after: number, signal?: AbortSignal): AsyncIterable<AgentEvent>;
  close?(): Promise<void>;
}

/** A run live in this process: its bus, and what its log holds back. */
export interface LiveRun {
  bus: AgentEventBus;
  store: RunEventLog;
}

/** One machine: the bus of a run live here, else its events.jsonl followed while its owner lives. */
export class LocalEventFanout implements EventFanout {
  constructor(
    private readonly runsDir: string,
    private readonly liveRun: (runId: string) => LiveRun | undefined,
    /** Whether a run not live here is live in another process (its file is followed until it ends). */
    private readonly liveElsewhere: (runId: string) => Promise<boolean>,
  ) {}

  publish(): void {
    // the run's bus already delivers to this process's followers, its file is the history
  }

  follow(runId: string, after: number, signal?: AbortSignal): AsyncIterable<AgentEvent> {
    const rec = this.liveRun(runId);
    const file = new RunFolder(this.runsDir, runId).path('events');
    return tailRunEvents({
      file,
      after,
      ...(rec ? { bus: rec.bus, unwritten: (n: number) => rec.store.unwritten(n) } : { follow: () => this.liveElsewhere(runId) }),
      ...(signal ? { signal } : {}),
    });
  }
}
