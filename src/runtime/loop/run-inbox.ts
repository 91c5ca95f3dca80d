/**
 * Messages a person sends a live run (pi's steer and followUp): a `steer` message
 * reaches the model at the next tool boundary (after the current batch, before the next turn), a
 * `follow_up` after the run's final answer, which then goes on for another turn before validation.
 */
import { randomBytes } from 'node:crypto';
import type { DecisionSource } from '../../events/agent-event.js';
import type { PublishFn } from '../run-publisher.js';

export type MessageMode = 'steer' | 'follow_up';

export interface InboxMessage {
  id: string;
  mode: MessageMode;
  text: string;
  from: DecisionSource;
}

export class RunInbox {
  private readonly queued: Record<MessageMode, InboxMessage[]> = { steer: [], follow_up: [] };

  constructor(private readonly publish: PublishFn) {}

  /** Queues a message and publishes it (so replay shows it). */
  post(mode: MessageMode, text: string, from: DecisionSource): InboxMessage {
    const m: InboxMessage = { id: `msg_${randomBytes(5).toString('hex')}`, mode, text, from };
    this.queued[mode].push(m);
    this.publish('run', { type: 'message.received', id: m.id, mode, text, from });
    return m;
  }

  /** A resumed run's messages that had arrived and were not yet given to the model (already published). */
  restore(messages: InboxMessage[]): void {
    for (const m of messages) this.queued[m.mode].push(m);
  }

  /** The queued messages of `mode`, as the model will read them; marks them delivered. */
  take(mode: MessageMode): string[] {
    const taken = this.queued[mode].splice(0);
    if (taken.length === 0) return [];
    this.publish('run', { type: 'message.delivered', ids: taken.map((m) => m.id), mode });
    return taken.map((m) => (mode === 'steer' ? `[message from the user while you work] ${m.text}` : m.text));
  }

  has(mode: MessageMode): boolean {
    return this.queued[mode].length > 0;
  }
}
