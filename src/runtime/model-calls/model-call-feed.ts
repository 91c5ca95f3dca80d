/** A run's finished model calls, whole, as they are recorded: what the spans' message attributes read. */
import type { ModelCall } from './model-call-record.js';

export type ModelCallListener = (call: ModelCall) => void;

export class ModelCallFeed {
  private listeners: ModelCallListener[] = [];

  /** Listeners must not throw (a throw is dropped, the others are still told). */
  subscribe(listener: ModelCallListener): () => void {
    this.listeners = [...this.listeners, listener];
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Whether anyone listens (the recorder builds whole calls only then). */
  get listening(): boolean {
    return this.listeners.length > 0;
  }

  readonly publish = (call: ModelCall): void => {
    for (const l of this.listeners) {
      try {
        l(call);
      } catch {
        // one listener's failure is not the others'
      }
    }
  };
}
