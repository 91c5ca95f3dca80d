/**
 * One bus per run: the single internal stream every subscriber (event store, bridge,
 * adapters, raw log) reads. Publishing is synchronous; a throwing subscriber is isolated. What is
 * published leaves the run with secrets masked (maskEventData), for every subscriber at once.
 */
import type { AgentEvent, AgentEventMap, AgentEventOf, AgentStream } from './agent-event.js';
import { makeAgentEvent } from './agent-event-factory.js';
import { maskEventData } from './event-masking.js';

export type AgentEventListener = (event: AgentEvent) => void;

export interface AgentEventBusOptions {
  runId: string;
  /** Clock in epoch ms; injectable for tests and replay. */
  now?: () => number;
  /** Resume numbering after this seq (the first event gets startSeq + 1). */
  startSeq?: number;
  /** Told about each subscriber failure; never allowed to throw back into publish. */
  onSubscriberError?: (error: unknown, event: AgentEvent) => void;
}

export class AgentEventBus {
  readonly runId: string;
  private seq: number;
  private readonly now: () => number;
  private readonly onSubscriberError?: (error: unknown, event: AgentEvent) => void;
  // Copy-on-write so (un)subscribing inside a listener never disturbs the current publish.
  private listeners: AgentEventListener[] = [];
  private errors = 0;
  private isSealed = false;

  constructor(opts: AgentEventBusOptions) {
    if (!opts || typeof opts.runId !== 'string' || opts.runId === '') {
      throw new TypeError('AgentEventBus: runId must be a non-empty string');
    }
    const startSeq = opts.startSeq ?? 0;
    if (!Number.isInteger(startSeq) || startSeq < 0) {
      throw new TypeError(`AgentEventBus: startSeq must be a non-negative integer, got ${String(opts.startSeq)}`);
    }
    this.runId = opts.runId;
    this.seq = startSeq;
    this.now = opts.now ?? Date.now;
    this.onSubscriberError = opts.onSubscriberError;
  }

  get lastSeq(): number {
    return this.seq;
  }

  get subscriberErrors(): number {
    return this.errors;
  }

  get subscriberCount(): number {
    return this.listeners.length;
  }

  /** Whether seal() was called: nothing published reaches a subscriber any more. */
  get sealed(): boolean {
    return this.isSealed;
  }

  /**
   * From now on nothing published reaches a subscriber and the seq does not move: the run's process is
   * leaving it to be resumed (by its next start or another worker), which goes on from the events
   * delivered so far. What the run does while it stops is no part of its stream.
   */
  seal(): void {
    this.isSealed = true;
  }

  publish<S extends AgentStream>(stream: S, data: AgentEventMap[S]): AgentEventOf<S> {
    const event = makeAgentEvent(this.runId, this.seq + 1, this.now(), stream, maskEventData(stream, data));
    if (this.isSealed) return event;
    this.seq = event.seq;
    const ls = this.listeners;
    for (let i = 0; i < ls.length; i++) {
      try {
        ls[i](event);
      } catch (err) {
        this.errors++;
        if (this.onSubscriberError) {
          try {
            this.onSubscriberError(err, event);
          } catch {
            // a broken error hook must not break publishing either
          }
        }
      }
    }
    return event;
  }

  subscribe(fn: AgentEventListener): () => void {
    if (typeof fn !== 'function') throw new TypeError('AgentEventBus.subscribe: listener must be a function');
    this.listeners = [...this.listeners, fn];
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners = [...this.listeners.slice(0, i), ...this.listeners.slice(i + 1)];
    };
  }
}
